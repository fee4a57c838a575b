import Dispatch
import Foundation
import Testing

// A minimal copy of helpers of Tests/ReactiveSQLiteTests/Observation/ObservationSupport.swift
// and Support/ConnectionTestSupport.swift (test targets cannot share them):
// tests wait for values through continuations, each wait bounded by a
// timeout that fails the test instead of hanging it. No sleep decides an
// outcome.

/// How long a test waits for something that must happen.
let observationPatience: Duration = .seconds(30)

/// A wait that did not end in time.
struct ObservationTimeout: Error, CustomStringConvertible {
    var description: String
}

/// Collects the values of an observation, and lets a test wait for them.
///
/// `@unchecked Sendable`: `state` is only used while holding `lock`.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private struct Waiter {
        var id: Int
        var isReady: @Sendable ([Value]) -> Bool
        var continuation: CheckedContinuation<[Value]?, Never>
    }

    private struct State {
        var values: [Value] = []
        var waiters: [Waiter] = []
        var nextWaiterID = 0
    }

    private let lock = NSLock()
    private var state = State()

    init() {}

    private func withLock<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Records a value and wakes up the waits it satisfies.
    func append(_ value: Value) {
        let ready = withLock { state -> [(CheckedContinuation<[Value]?, Never>, [Value])] in
            state.values.append(value)
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
    var values: [Value] { withLock { $0.values } }

    /// Waits until the recorded values satisfy `isReady`, and returns them.
    ///
    /// - Throws: `ObservationTimeout` after `timeout`.
    @discardableResult
    func wait(
        timeout: Duration = observationPatience,
        until isReady: @escaping @Sendable ([Value]) -> Bool
    ) async throws -> [Value] {
        let values = await withCheckedContinuation { (continuation: CheckedContinuation<[Value]?, Never>) in
            let (readyValues, id) = withLock { state -> ([Value]?, Int) in
                if isReady(state.values) { return (state.values, -1) }
                let id = state.nextWaiterID
                state.nextWaiterID += 1
                state.waiters.append(Waiter(id: id, isReady: isReady, continuation: continuation))
                return (nil, id)
            }
            if let readyValues {
                continuation.resume(returning: readyValues)
                return
            }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                let expired = self.withLock { state -> CheckedContinuation<[Value]?, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: nil)
            }
        }
        guard let values else {
            throw ObservationTimeout(description: "timed out with values \(self.values)")
        }
        return values
    }

    /// Waits until `count` values were recorded, and returns them.
    @discardableResult
    func wait(for count: Int, timeout: Duration = observationPatience) async throws -> [Value] {
        try await wait(timeout: timeout) { $0.count >= count }
    }
}

extension Recorder where Value: Equatable {
    /// Waits until the last recorded value is `value`, and returns the values.
    @discardableResult
    func wait(forLast value: Value, timeout: Duration = observationPatience) async throws -> [Value] {
        try await wait(timeout: timeout) { $0.last == value }
    }
}

/// Polls a condition until it holds, failing after a bounded time. For
/// conditions no callback announces (an object released by another thread).
func waitUntil(
    timeout: Duration = observationPatience, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        if clock.now > deadline {
            throw ObservationTimeout(description: "condition still false at \(sourceLocation)")
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// A value shared between threads.
///
/// `@unchecked Sendable`: `storage` is only used while holding `lock`.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value

    init(_ value: Value) {
        storage = value
    }

    var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }

    @discardableResult
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&storage)
    }
}

/// An object whose lifetime tests follow through a `WeakReference`.
final class LifetimeToken: Sendable {
    init() {}
}

/// A weak reference, readable from any thread.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Storage: Sendable {
        weak var object: Object?
    }
    private let storage: Locked<Storage>

    init(_ object: Object) {
        storage = Locked(Storage(object: object))
    }

    /// Whether the object was deallocated.
    var isReleased: Bool { storage.withLock { $0.object == nil } }
}

/// The label of the dispatch queue running the current code
/// (`dispatch_queue_get_label`, which Swift hides behind `DispatchQueue.label`).
func currentDispatchQueueLabel() -> String? {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dispatch_queue_get_label") else { return nil }
    typealias GetLabel = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    return unsafeBitCast(symbol, to: GetLabel.self)(nil).map { String(cString: $0) }
}
