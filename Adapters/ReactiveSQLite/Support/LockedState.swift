import Foundation

/// State that several threads share, behind a lock that ThreadSanitizer
/// understands.
///
/// Observations and the connection pool use it rather than
/// `Synchronization.Mutex`: on Linux, a contended `Mutex` is handed over
/// through priority-inheritance futexes, inside the kernel, where
/// ThreadSanitizer cannot see it, and the sanitizer then reports races
/// between accesses that the mutex does serialize. An `NSLock` is a `pthread_mutex_t`, whose calls ThreadSanitizer intercepts:
/// the sanitizer run of the tests reports real races only.
///
/// `@unchecked Sendable`: `state` is only read and written while `lock` is held.
package final class LockedState<State: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
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
