#if Server
import ReactiveSQLite

/// A lock for tasks: `withLock` suspends, without blocking a thread, until
/// the lock is free, and tasks get it in the order they asked for it.
///
/// A `LiveSocket` holds one while it writes a message, so that the frames
/// of two messages never interleave on the wire.
final class AsyncLock: Sendable {
    private let state = LockedState(State())

    private struct State {
        var isLocked = false
        /// The tasks waiting, first come first.
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID = 0
    }

    /// Runs `body` holding the lock, after the tasks that asked before.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it
    ///   waits (then `body` does not run), or the error of `body`.
    func withLock<T>(_ body: () async throws -> T) async throws -> T {
        try await lock()
        defer { unlock() }
        return try await body()
    }

    private func lock() async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case acquired, waiting, cancelled }
                let outcome: Outcome = state.withLock { state in
                    // Checked under the lock: a cancellation handler that
                    // ran before found no waiter to resume.
                    if Task.isCancelled { return .cancelled }
                    if !state.isLocked {
                        state.isLocked = true
                        return .acquired
                    }
                    state.waiters.append((id, continuation))
                    return .waiting
                }
                switch outcome {
                case .acquired: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Hands the lock to the first waiter, or frees it.
    private func unlock() {
        let next = state.withLock { state in
            guard !state.waiters.isEmpty else {
                state.isLocked = false
                return CheckedContinuation<Void, any Error>?.none
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
#endif
