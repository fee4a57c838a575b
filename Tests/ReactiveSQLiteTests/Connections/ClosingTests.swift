import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

@Suite struct ClosingTests {
    @Test(arguments: DatabaseKind.allCases)
    func accessesQueuedBeforeCloseEndAndLaterOnesThrow(kind: DatabaseKind) async throws {
        let test = try kind.make()
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        enum Outcome { case wrote, read, closed }
        let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
            for index in 0..<100 {
                group.addTask {
                    do {
                        if index == 50 {
                            writer.close()
                            return .closed
                        }
                        if index.isMultiple(of: 2) {
                            try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
                            return .wrote
                        } else {
                            _ = try await writer.read { db in try db.count("t") }
                            return .read
                        }
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_MISUSE {
                        return .closed
                    }
                }
            }
            var outcomes: [Outcome] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.count == 100)
        #expect(databaseError { _ = try writer.read { _ in } }?.resultCode == .SQLITE_MISUSE)
        if let path = test.path {
            // Every write that did not throw was committed.
            #expect(try DatabaseQueue(path: path).count("t") == outcomes.filter { $0 == .wrote }.count)
        }
    }

    @Test func closingAPoolLetsReadsInFlightEndAndFailsTheWaitingOnes() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }

        let inside = Gate()
        let release = Gate()
        let inFlight = ThreadResult {
            try pool.read { db in
                inside.open()
                // Long enough for any machine: with the default 20 s, a
                // full run beside two CPU hogs (this test took 138 s) saw
                // the read end before close(), and the waiting reads served.
                _ = release.wait(seconds: 600)
                return try db.count("t")  // the connection is still open
            }
        }
        #expect(await inside.waitAsync())
        let waitingStarted = Gate()
        let waitingSync = ThreadResult {
            waitingStarted.open()
            return try pool.read { db in try db.count("t") }
        }
        let waitingAsync = Task { try await pool.read { db in try db.count("t") } }
        #expect(await waitingStarted.waitAsync())

        // close() does not wait for the read in flight.
        let closing = ThreadResult { pool.close() }
        #expect(await closing.waitAsync() != nil)

        release.open()
        #expect(try #require(await inFlight.waitAsync()).get() == 1)
        // The waiting reads (or, had they not started waiting yet, the reads
        // that start after close) throw.
        let syncResult = try #require(await waitingSync.waitAsync())
        #expect(throws: DatabaseError.self) { try syncResult.get() }
        await #expect(throws: DatabaseError.self) { try await waitingAsync.value }
        #expect(databaseError { _ = try pool.read { _ in } }?.resultCode == .SQLITE_MISUSE)
    }

    @Test(arguments: DatabaseKind.allCases)
    func closeWaitsForTheWriteInProgress(kind: DatabaseKind) async throws {
        let test = try kind.make()
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        let inside = Gate()
        let release = Gate()
        let write = ThreadResult {
            try writer.write { db in
                inside.open()
                _ = release.wait()
                try db.execute(sql: "INSERT INTO t VALUES (1)")
            }
        }
        #expect(await inside.waitAsync())
        let closeStarted = Gate()
        let closing = ThreadResult {
            closeStarted.open()
            writer.close()
        }
        #expect(await closeStarted.waitAsync())
        release.open()
        try #require(await write.waitAsync()).get()
        #expect(await closing.waitAsync() != nil)
        if let path = test.path {
            #expect(try DatabaseQueue(path: path).count("t") == 1)
        }
    }

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func aReleasedDatabaseIsClosedWithoutExplicitClose(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("db.sqlite")
        do {
            let writer: any DatabaseWriter = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
            try writer.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }
            #expect(try writer.count("t") == 1)
        }
        // WAL and shared memory files are removed when the last connection closes.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(try DatabaseQueue(path: path).count("t") == 1)
    }
}
