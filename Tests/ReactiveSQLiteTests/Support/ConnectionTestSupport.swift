import Dispatch
import Foundation
import ReactiveSQLite
import Synchronization
import TestSupport
import Testing

// Helpers of the connection, transaction, statement and error tests.
// Threads meet through semaphores with bounded waits: a wait that times out
// fails the test instead of hanging it, and no sleep decides an outcome.
// Shared state is behind `Locked` (an `NSLock`, a pthread mutex, which the
// thread sanitizer intercepts), not `Synchronization.Mutex`, whose futex the
// sanitizer did not take for synchronization on Linux (it reported the
// gauge's counts, changed under the lock, as raced).


/// The result of a block run on a thread outside of Swift concurrency's pool.
final class ThreadResult<Value: Sendable>: Sendable {
    private let result = Locked<Result<Value, any Error>?>(nil)
    private let done = Gate()

    /// Runs `body` on a thread of its own: neither a cooperative thread nor
    /// a thread of a global dispatch queue (those have as many threads as
    /// cores, and blocking them would starve the code under test).
    init(_ body: @escaping @Sendable () throws -> Value) {
        Thread.detachNewThread { [self] in
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
            done.open()
        }
    }

    /// The result, or nil when the block did not end within `seconds`.
    func wait(seconds: Double = patience) -> Result<Value, any Error>? {
        guard done.wait(seconds: seconds) else { return nil }
        done.open()  // later waits return at once
        return result.withLock { $0 }
    }

    /// The result, or nil after `seconds`, waited for on a dispatch thread so
    /// that no cooperative thread is blocked.
    func waitAsync(seconds: Double = patience) async -> Result<Value, any Error>? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.wait(seconds: seconds)) }
        }
    }
}

/// Counts the closures running at once and remembers the largest count.
final class ConcurrencyGauge: Sendable {
    private let counts = Locked<Counts>(Counts())

    struct Counts: Sendable {
        var current = 0
        var maximum = 0
    }

    /// Runs `body` as one of the concurrent runs.
    func measure<T>(_ body: () throws -> T) rethrows -> T {
        counts.withLock {
            $0.current += 1
            $0.maximum = max($0.maximum, $0.current)
        }
        defer { counts.withLock { $0.current -= 1 } }
        return try body()
    }

    /// The largest number of closures that ran at once.
    var maximum: Int { counts.withLock { $0.maximum } }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Locked(0)
    /// Adds one and returns the new value.
    @discardableResult func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    /// The current value.
    var current: Int { value.withLock { $0 } }
}

/// An error thrown by test closures, to check it is rethrown unchanged.
struct TestError: Error, Equatable {
    var tag: Int = 0
}

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("ReactiveSQLiteTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file in the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

extension Database {
    /// The integer result of a query that returns one.
    func int(_ sql: String, arguments: StatementArguments = StatementArguments()) throws -> Int? {
        try SQLRequest<Int?>(sql: sql, arguments: arguments).fetchOne(self) ?? nil
    }

    /// The number of rows of a table.
    func count(_ table: String) throws -> Int {
        try int("SELECT COUNT(*) FROM \(table)") ?? -1
    }
}

extension DatabaseWriter {
    /// The number of rows of a table, read in a read access.
    func count(_ table: String) throws -> Int {
        try read { db in try db.count(table) }
    }
}

/// The `DatabaseError` thrown by `body`, or nil (and a recorded issue) when it
/// throws something else or nothing.
func databaseError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> DatabaseError? {
    do {
        try body()
        Issue.record("Expected a DatabaseError, and nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as DatabaseError {
        return error
    } catch {
        Issue.record("Expected a DatabaseError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The `DatabaseError` thrown by an async `body`, or nil (and a recorded issue).
func databaseError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> DatabaseError? {
    do {
        try await body()
        Issue.record("Expected a DatabaseError, and nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as DatabaseError {
        return error
    } catch {
        Issue.record("Expected a DatabaseError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The number of open file descriptors of the process.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Runs `body`, a synchronous closure: in an `async` function, the database
/// accesses it makes use the synchronous (blocking) variants.
func synchronously<T>(_ body: () throws -> T) rethrows -> T {
    try body()
}

/// Ends the process of an exit test after `seconds` with `exitCode`, so that
/// a body that hangs (a deadlock where a trap was expected) fails the test
/// instead of blocking the run. Call it first thing in the body.
func armExitTestWatchdog(seconds: Double = 60, exitCode: Int32) {
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
        FileHandle.standardError.write(Data("exit test watchdog: no exit after \(seconds) seconds\n".utf8))
        exit(exitCode)
    }
}
