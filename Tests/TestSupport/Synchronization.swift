import Dispatch
import Foundation

// Small tools for tests that meet other threads: shared by every test target.

/// Polls a condition until it holds, failing after a bounded time. For
/// conditions no callback announces (an object released by another thread).
///
/// - Throws: `ObservationTimeout` after `timeout`, naming the caller's
///   file and line (the magic literals are the caller's only as default
///   arguments of their own, not inside an interpolation).
public func waitUntil(
    timeout: Duration = observationPatience,
    fileID: String = #fileID,
    line: Int = #line,
    _ condition: @Sendable () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        if clock.now > deadline {
            throw ObservationTimeout(description: "condition still false at \(fileID):\(line)")
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// A value shared between threads.
///
/// `@unchecked Sendable`: `storage` is only used while holding `lock`.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value

    /// Creates a shared value.
    public init(_ value: Value) {
        storage = value
    }

    /// The current value.
    public var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }

    /// Runs `body` with the value, under the lock.
    @discardableResult
    public func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&storage)
    }
}

/// An object whose lifetime tests follow through a `WeakReference`.
public final class LifetimeToken: Sendable {
    /// Creates a token.
    public init() {}
}

/// A weak reference, readable from any thread.
public final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Storage: Sendable {
        weak var object: Object?
    }
    private let storage: Locked<Storage>

    /// Creates a weak reference to `object`.
    public init(_ object: Object) {
        storage = Locked(Storage(object: object))
    }

    /// Whether the object was deallocated.
    public var isReleased: Bool { storage.withLock { $0.object == nil } }
}

/// The label of the dispatch queue running the current code
/// (`dispatch_queue_get_label`, which Swift hides behind `DispatchQueue.label`).
public func currentDispatchQueueLabel() -> String? {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dispatch_queue_get_label") else { return nil }
    typealias GetLabel = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    return unsafeBitCast(symbol, to: GetLabel.self)(nil).map { String(cString: $0) }
}

/// How long a test waits for something that must happen, before it fails.
public let patience: Double = 20

/// A signal between threads, awaited with a bound.
public final class Gate: Sendable {
    public init() {}

    private let semaphore = DispatchSemaphore(value: 0)

    /// Lets one waiter through.
    public func open() { semaphore.signal() }

    /// Whether the gate was opened within `seconds`.
    public func wait(seconds: Double = patience) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }

    /// Whether the gate was opened within `seconds`, waited for on a thread
    /// of its own, so that no cooperative thread is blocked.
    public func waitAsync(seconds: Double = patience) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.wait(seconds: seconds)) }
        }
    }
}

/// A one-time signal between threads and tasks.
public final class Signal: Sendable {
    private let recorder = Recorder<Bool>()

    public init() {}

    public func open() { recorder.append(true) }

    /// Waits asynchronously until the signal is open.
    public func wait(timeout: Duration = observationPatience) async throws {
        try await recorder.wait(for: 1, timeout: timeout)
    }

    /// Blocks until the signal is open; false after `timeout`. Never from a task.
    public func waitBlocking(timeout: Duration = observationPatience) -> Bool {
        recorder.waitBlocking(for: 1, timeout: timeout)
    }
}
