import Dispatch
import Foundation

// Waiting for the values of an observation in tests, shared by the test
// targets of the adapters: each wait goes through a continuation and is
// bounded by a timeout that fails the test instead of hanging it. No sleep
// decides an outcome. Shared by every test target that observes a database.

/// How long a test waits for something that must happen.
public let observationPatience: Duration = .seconds(30)

/// A wait that did not end in time.
public struct ObservationTimeout: Error, CustomStringConvertible {
    /// What was awaited, and what was seen.
    public var description: String

    /// Creates a timeout error.
    public init(description: String) {
        self.description = description
    }
}

/// Collects the values of an observation, and lets a test wait for them,
/// asynchronously or (from a thread of its own) blocking.
///
/// Its state lives behind `NSCondition` rather than `Synchronization.Mutex`:
/// ThreadSanitizer cannot see a contended `Mutex` hand over through the
/// kernel on Linux, and would report races that are not.
///
/// `@unchecked Sendable`: `state` is only used while holding `condition`.
public final class Recorder<Value: Sendable>: @unchecked Sendable {
    private struct Waiter {
        var id: Int
        var isReady: @Sendable ([Value]) -> Bool
        var continuation: CheckedContinuation<[Value]?, Never>
    }

    private struct State {
        var values: [Value] = []
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        /// Waits whose timeout came before they waited.
        var expiredWaiterIDs: Set<Int> = []
    }

    private let condition = NSCondition()
    private var state = State()

    /// Creates an empty recorder.
    public init() { StallWatchdog.startIfRequested() }

    private func withLock<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    /// Records a value and wakes up the waits it satisfies.
    public func append(_ value: Value) {
        let ready = withLock { state -> [(CheckedContinuation<[Value]?, Never>, [Value])] in
            state.values.append(value)
            condition.broadcast()
            let values = state.values
            var ready: [(CheckedContinuation<[Value]?, Never>, [Value])] = []
            state.waiters.removeAll { waiter in
                guard waiter.isReady(values) else { return false }
                ready.append((waiter.continuation, values))
                return true
            }
            return ready
        }
        for (continuation, values) in ready { continuation.resume(returning: values) }
    }

    /// The values recorded so far, in order.
    public var values: [Value] { withLock { $0.values } }

    /// Waits until the recorded values satisfy `isReady`, and returns them.
    ///
    /// The timeout is a task's sleep, on Swift's cooperative pool like the
    /// work a test waits for (an observation's task, the test's next
    /// step): when every pool thread is held (a loaded machine, hundreds of
    /// tests ready to run), the expiry waits its turn behind that work
    /// instead of firing first. A timer of its own (a dispatch timer, as
    /// before) expired while the awaited value was queued: the flaky
    /// timeouts of loaded runs.
    ///
    /// - Throws: `ObservationTimeout` after `timeout`.
    @discardableResult
    public func wait(
        timeout: Duration = observationPatience,
        until isReady: @escaping @Sendable ([Value]) -> Bool
    ) async throws -> [Value] {
        let id = withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let deadline = expiry(after: timeout) { self.expire(id) }
        defer { deadline.cancel() }
        let values = await withCheckedContinuation { (continuation: CheckedContinuation<[Value]?, Never>) in
            let ready = withLock { state -> [Value]?? in
                if isReady(state.values) { return .some(state.values) }
                if state.expiredWaiterIDs.remove(id) != nil { return .some(nil) }
                state.waiters.append(Waiter(id: id, isReady: isReady, continuation: continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        guard let values else {
            throw ObservationTimeout(description: "timed out with values \(self.values)")
        }
        return values
    }

    private func expire(_ id: Int) {
        let expired = withLock { state -> CheckedContinuation<[Value]?, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.expiredWaiterIDs.insert(id)
                return nil
            }
            return state.waiters.remove(at: index).continuation
        }
        expired?.resume(returning: nil)
    }

    /// Waits until `count` values were recorded, and returns them.
    @discardableResult
    public func wait(for count: Int, timeout: Duration = observationPatience) async throws -> [Value] {
        try await wait(timeout: timeout) { $0.count >= count }
    }

    /// Blocks the current thread until `count` values were recorded; false
    /// after `timeout`. For callbacks that run on a dispatch queue of their
    /// own, never for a task.
    public func waitBlocking(for count: Int, timeout: Duration = observationPatience) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.nanoseconds) / 1e9)
        condition.lock()
        defer { condition.unlock() }
        while state.values.count < count {
            if !condition.wait(until: deadline) { return state.values.count >= count }
        }
        return true
    }
}

extension Duration {
    /// The duration in whole nanoseconds, for Dispatch deadlines.
    public var nanoseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}

extension Recorder where Value: Equatable {
    /// Waits until the last recorded value is `value`, and returns the values.
    @discardableResult
    public func wait(forLast value: Value, timeout: Duration = observationPatience) async throws -> [Value] {
        try await wait(timeout: timeout) { $0.last == value }
    }
}
