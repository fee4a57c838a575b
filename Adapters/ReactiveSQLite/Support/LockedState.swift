/// State that several threads share, behind a lock that ThreadSanitizer
/// understands (see `ThreadCondition`).
///
/// `@unchecked Sendable`: `state` is only read and written while `lock` is held.
package final class LockedState<State: Sendable>: @unchecked Sendable {
    private let lock = ThreadCondition()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state. `body` must not call
    /// user code, nor take this lock again.
    package func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
