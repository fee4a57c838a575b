import Dispatch
import Foundation
import Testing

import TestSupport

// A minimal copy of helpers of Tests/ReactiveSQLiteTests/Observation/ObservationSupport.swift
// and Support/ConnectionTestSupport.swift (test targets cannot share them).
// `Recorder` is TestSupport's.

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
