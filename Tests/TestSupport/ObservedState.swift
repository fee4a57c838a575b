import Foundation

/// A value that changes over time, and tasks that wait, with a deadline,
/// until it satisfies a condition: the output of a child process, its exit
/// status, the events of a Server-Sent Events stream.
///
/// Waiting is a continuation resumed by the update that satisfies the
/// condition, or by the deadline: no polling, and the deadline only decides
/// failures.
public final class ObservedState<Value: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value?, Never>
    }

    private struct State {
        var value: Value
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        /// Waiters whose deadline passed before they were registered.
        var expiredWaiterIDs: Set<Int> = []
    }

    /// Behind an `NSLock`, which ThreadSanitizer understands (a contended
    /// `Synchronization.Mutex` hands over in the kernel, where it cannot see).
    private let state: Locked<State>

    public init(_ value: Value) {
        state = Locked(State(value: value))
    }

    public var value: Value {
        state.withLock { $0.value }
    }

    /// Changes the value, and resumes the waiters whose condition now holds.
    public func update(_ change: (inout Value) -> Void) {
        let satisfied = state.withLock { state -> [(CheckedContinuation<Value?, Never>, Value)] in
            change(&state.value)
            let value = state.value
            let ids = state.waiters.filter { $0.value.condition(value) }.map(\.key)
            return ids.compactMap { id in state.waiters.removeValue(forKey: id).map { ($0.continuation, value) } }
        }
        // Resumed outside the lock.
        for (continuation, value) in satisfied { continuation.resume(returning: value) }
    }

    /// Waits until `condition` holds, and returns the value that satisfied
    /// it; nil when `timeout` passed first.
    public func wait(until condition: @escaping @Sendable (Value) -> Bool, timeout: Duration) async -> Value? {
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let deadline = expiry(after: timeout) { self.expire(id) }
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            let result = state.withLock { state -> Value?? in
                if condition(state.value) { return .some(state.value) }
                if state.expiredWaiterIDs.remove(id) != nil { return .some(nil) }
                state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                return nil
            }
            if let result { continuation.resume(returning: result) }
        }
    }

    private func expire(_ id: Int) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.expiredWaiterIDs.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.continuation.resume(returning: nil)
    }
}

/// A task that calls `expire` after `timeout` on the cooperative pool,
/// unless it is cancelled first (the wait it bounds ended): the timeout of
/// the tests' waits, queued behind the work they wait for.
func expiry(after timeout: Duration, _ expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
    Task {
        do { try await Task.sleep(for: timeout) } catch { return }
        expire()
    }
}
