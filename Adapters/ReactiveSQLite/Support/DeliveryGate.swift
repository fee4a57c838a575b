#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets an observation, or a subscription of the Combine adapter, stop its
/// deliveries for good: after `cancel()`
/// returns, no delivery starts, and none is still running, unless
/// `cancel()` was called from inside that delivery.
///
/// `@unchecked Sendable`: its state is only read and written while holding `condition`.
package final class DeliveryGate: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var isCancelled = false
    private var deliveringThread: pthread_t?

    package init() {}

    /// Whether deliveries may still run: true until `cancel()` is called.
    package var isOpen: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !isCancelled
    }

    /// Runs `body` unless the gate is cancelled. User code runs without the lock held.
    /// Returns false when cancelled.
    @discardableResult
    package func deliver(_ body: () -> Void) -> Bool {
        condition.lock()
        guard !isCancelled else {
            condition.unlock()
            return false
        }
        deliveringThread = pthread_self()
        condition.unlock()
        body()
        condition.lock()
        deliveringThread = nil
        condition.broadcast()
        condition.unlock()
        return true
    }

    /// Closes the gate, waiting for a delivery running on another thread.
    /// Returns true the first time.
    @discardableResult
    package func cancel() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let wasOpen = !isCancelled
        isCancelled = true
        while let thread = deliveringThread, pthread_equal(thread, pthread_self()) == 0 {
            condition.wait()
        }
        return wasOpen
    }
}
