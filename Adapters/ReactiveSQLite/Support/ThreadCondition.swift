#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX mutex and a condition variable over it.
///
/// Observations, the connection pool and delivery gates use it rather than
/// `Synchronization.Mutex`: on Linux, a contended `Mutex` is handed over
/// through priority-inheritance futexes, inside the kernel, where
/// ThreadSanitizer cannot see it, and the sanitizer then reports races
/// between accesses that the mutex does serialize. ThreadSanitizer
/// intercepts the calls of `pthread_mutex_t` and `pthread_cond_t`: the
/// sanitizer run of the tests reports real races only. (It replaces
/// Foundation's `NSLock` and `NSCondition`, the same primitives, so that the
/// library needs no more of Foundation than `FoundationEssentials`.)
///
/// `@unchecked Sendable`: the mutex and the condition are the
/// synchronization; their storage never moves (allocated once, freed in
/// `deinit`).
package final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        // Default attributes: these calls fail only for invalid attributes.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }

    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the lock until `broadcast()` wakes the thread (or a
    /// spurious wake-up: wait in a loop on the awaited state), and takes
    /// it again. Called with the lock held.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes the threads that `wait()`. Called with the lock held.
    package func broadcast() { pthread_cond_broadcast(condition) }
}
