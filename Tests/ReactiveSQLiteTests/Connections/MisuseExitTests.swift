import Dispatch
import Foundation
import ReactiveSQLite
import Testing
import TestSupport

/// Programmer errors stop the program with a message saying what was wrong.
/// Each body runs in a child process.
@Suite(.isolated) struct MisuseExitTests {
    private func expectMessage(
        _ result: ExitTest.Result?, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains(message), "stderr: \(output)", sourceLocation: sourceLocation)
    }

    @Test func usingADatabaseAfterItsClosureReturnedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            final class Box { var database: Database? }
            let queue = try DatabaseQueue()
            let box = Box()
            try queue.write { db in box.database = db }
            _ = box.database?.changesCount
        }
        expectMessage(result, "outside of the closure of read, write or writeWithoutTransaction")
    }

    @Test func usingAPoolReaderDatabaseAfterItsClosureReturnedTraps() async throws {
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            final class Box { var database: Database? }
            let pool = try DatabasePool(path: databasePath)
            let box = Box()
            try pool.read { db in box.database = db }
            try box.database?.execute(sql: "SELECT 1")
        }
        expectMessage(result, "outside of the closure")
    }

    @Test func usingADatabaseFromAnotherThreadDuringItsAccessTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            try queue.write { db in
                // Smuggled to another thread through an unmanaged address.
                let address = UInt(bitPattern: Unmanaged.passUnretained(db).toOpaque())
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    let smuggled = Unmanaged<Database>
                        .fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
                    _ = smuggled.lastInsertedRowID
                    done.signal()
                }
                done.wait()
            }
        }
        expectMessage(result, "from another thread")
    }

    @Test func usingAStatementAfterItsClosureReturnedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            let statement = try queue.write { db in try db.makeStatement(sql: "SELECT 1") }
            try statement.execute()
        }
        expectMessage(result, "outside of the closure")
    }

    @Test func usingACursorAfterItsClosureReturnedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            let cursor = try queue.read { db in
                try SQLRequest<Int>(sql: "SELECT 1 UNION ALL SELECT 2").fetchCursor(db)
            }
            _ = try cursor.next()
        }
        expectMessage(result, "outside of the closure")
    }

    @Test func releasingAStatementOutsideItsAccessTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            // Returned from the closure, released on this thread while the
            // connection may serve other threads: a race, caught here.
            _ = try queue.write { db in try db.makeStatement(sql: "SELECT 1") }
        }
        expectMessage(result, "A Statement or a DatabaseCursor was released outside of the closure")
    }

    @Test func usingAStatementAfterTheDatabaseIsClosedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            let statement = try queue.write { db in try db.makeStatement(sql: "SELECT 1") }
            queue.close()
            try statement.execute()
        }
        expectMessage(result, "outside of the closure")
    }

    @Test func statementsAndCursorsReleasedAfterTheDatabaseIsClosedAreFinalizedQuietly() async throws {
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        await #expect(processExitsWith: .success) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_FAILURE)
            let pool = try DatabasePool(path: databasePath)
            try pool.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)") }
            let statement = try pool.write { db in try db.makeStatement(sql: "SELECT * FROM t") }
            let cursor = try pool.read { db in
                let cursor = try SQLRequest<Int>(sql: "SELECT a FROM t").fetchCursor(db)
                _ = try cursor.next()
                return cursor
            }
            pool.close()
            withExtendedLifetime((statement, cursor)) {}
        }
    }

    @Test func aCursorLeftRunningAfterItsReadDoesNotPinTheReadersSnapshot() async throws {
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_FAILURE)
            var configuration = Configuration()
            configuration.maximumReaderCount = 1
            let pool = try DatabasePool(path: databasePath, configuration: configuration)
            try pool.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)") }
            // A programmer error, not caught when the cursor is kept alive
            // until the pool is closed: the read must still end cleanly.
            let cursor = try pool.read { db in
                let cursor = try SQLRequest<Int>(sql: "SELECT a FROM t").fetchCursor(db)
                _ = try cursor.next()
                return cursor
            }
            try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
            let count = try pool.read { db in try db.count("t") }
            precondition(count == 3, "the reader still sees \(count) rows")
            // The same cached SQL runs on the reader again.
            let values = try pool.read { db in try SQLRequest<Int>(sql: "SELECT a FROM t").fetchAll(db) }
            precondition(values == [1, 2, 3], "read \(values)")
            pool.close()
            withExtendedLifetime(cursor) {}
        }
    }

    @Test func aWriteInsideAWriteOfTheSameQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            try queue.write { _ in try queue.write { _ in } }
        }
        expectMessage(result, "not reentrant")
    }

    @Test func aReadInsideAWriteOfTheSameQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            try queue.write { _ in try queue.read { _ in } }
        }
        expectMessage(result, "not reentrant")
    }

    @Test func aWriteInsideAWriteOfTheSamePoolTraps() async throws {
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let pool = try DatabasePool(path: databasePath)
            try pool.writeWithoutTransaction { _ in try pool.write { _ in } }
        }
        expectMessage(result, "not reentrant")
    }

    @Test func aReadInsideAReadOfTheSamePoolTraps() async throws {
        // With one reader, it would wait forever for itself.
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            var configuration = Configuration()
            configuration.maximumReaderCount = 1
            let pool = try DatabasePool(path: databasePath, configuration: configuration)
            try pool.read { _ in try pool.read { _ in } }
        }
        expectMessage(result, "not reentrant")
    }

    @Test func aWriteInsideAReadOfTheSamePoolTraps() async throws {
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let pool = try DatabasePool(path: databasePath)
            try pool.read { _ in try pool.write { _ in } }
        }
        expectMessage(result, "not reentrant")
    }

    @Test func aWriteInsideAReadInsideAWriteOfTheSamePoolTraps() async throws {
        // Not detected by the reader's queue: it would deadlock on the writer.
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let pool = try DatabasePool(path: databasePath)
            try pool.write { _ in try pool.read { _ in try pool.write { _ in } } }
        }
        expectMessage(result, "not reentrant")
    }

    @Test func closingADatabaseFromInsideItsAccessTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            let queue = try DatabaseQueue()
            try queue.write { _ in queue.close() }
        }
        expectMessage(result, "close()")
    }

    @Test func accessesOfDistinctDatabasesNestFreely() throws {
        // Not a trap: accesses of other queues and pools inside an access.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let queue = try DatabaseQueue()
        let pool = try DatabasePool(path: directory.path("db.sqlite"))
        let otherPool = try DatabasePool(path: directory.path("other.sqlite"))
        let count = try queue.read { _ in
            try pool.write { db in
                try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)")
                let one = try otherPool.read { db in try db.int("SELECT 1") }
                return try db.count("t") + (one ?? 0)
            }
        }
        #expect(count == 2)
    }

    @Test func aNonPositiveExternalChangePollIntervalTraps() async throws {
        // The parent owns the directory: a child that traps cannot remove it.
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [databasePath = directory.path("db.sqlite") as String] in
            armExitTestWatchdog(exitCode: EXIT_SUCCESS)
            var configuration = Configuration()
            configuration.observesExternalChanges = true
            configuration.externalChangePollInterval = .zero
            _ = try DatabaseQueue(path: databasePath, configuration: configuration)
        }
        expectMessage(result, "externalChangePollInterval must be positive")
    }
}
