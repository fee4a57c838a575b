import Dispatch

/// Holds a cancellable that a callback may need before `start` returns it.
///
/// It holds the cancellable weakly: the callback that uses it is owned by
/// the observation, and a strong reference would keep the observation
/// running after its user dropped the last reference to the cancellable.
final class CancellableHolder: Sendable {
    private struct State {
        weak var cancellable: AnyDatabaseCancellable?
        var isCancelled = false
    }
    private let state = LockedState(State())

    func set(_ cancellable: AnyDatabaseCancellable) {
        let cancelNow = state.withLock { state -> Bool in
            state.cancellable = cancellable
            return state.isCancelled
        }
        if cancelNow { cancellable.cancel() }
    }

    func cancel() {
        let cancellable = state.withLock { state -> AnyDatabaseCancellable? in
            state.isCancelled = true
            return state.cancellable
        }
        cancellable?.cancel()
    }
}
