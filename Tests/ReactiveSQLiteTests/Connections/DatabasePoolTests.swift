import Foundation
import ReactiveSQLite
import TestSupport
import Testing

@Suite(.isolated) struct DatabasePoolTests {
    /// A pool with a table `t` of one row, and its directory, which must be
    /// kept alive until the end of the test.
    private func makePool(maximumReaderCount: Int = 5) throws -> (TemporaryDirectory, DatabasePool) {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.maximumReaderCount = maximumReaderCount
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO t (name) VALUES ('committed')")
        }
        return (directory, pool)
    }

    @Test func walModeIsOn() throws {
        let (directory, pool) = try makePool()
        defer { withExtendedLifetime(directory) {} }
        #expect(try pool.read { db in try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(db) } == "wal")
        #expect(try pool.writeWithoutTransaction { db in
            try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(db)
        } == "wal")
    }

    @Test func aPoolOnAnInMemoryPathThrows() throws {
        let error = databaseError { _ = try DatabasePool(path: ":memory:") }
        #expect(error?.resultCode == .SQLITE_ERROR)
        #expect(error?.message?.contains("WAL") == true)
    }

    @Test func readsRunConcurrentlyWithEachOther() async throws {
        let (directory, pool) = try makePool()
        defer { withExtendedLifetime(directory) {} }
        let firstInside = Gate()
        let secondInside = Gate()
        // Each read waits, inside its closure, for the other to be inside too.
        let first = ThreadResult {
            try pool.read { db in
                firstInside.open()
                let count = try db.count("t")
                return secondInside.wait() && count == 1
            }
        }
        let second = ThreadResult {
            try pool.read { db in
                secondInside.open()
                let count = try db.count("t")
                return firstInside.wait() && count == 1
            }
        }
        #expect(try #require(await first.waitAsync()).get())
        #expect(try #require(await second.waitAsync()).get())
    }

    @Test func asyncReadsRunConcurrentlyWithEachOther() async throws {
        let (directory, pool) = try makePool()
        defer { withExtendedLifetime(directory) {} }
        let firstInside = Gate()
        let secondInside = Gate()
        async let first = pool.read { _ in
            firstInside.open()
            return secondInside.wait()
        }
        async let second = pool.read { _ in
            secondInside.open()
            return firstInside.wait()
        }
        let results = try await (first, second)
        #expect(results == (true, true))
    }

    @Test func aReadRunsDuringAWriteAndSeesOnlyCommittedData() async throws {
        let (directory, pool) = try makePool()
        defer { withExtendedLifetime(directory) {} }
        let written = Gate()
        let readDone = Gate()
        let write = ThreadResult {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO t (name) VALUES ('uncommitted'), ('uncommitted')")
                written.open()
                #expect(readDone.wait())
            }
        }
        #expect(await written.waitAsync())
        // The write transaction is open, with uncommitted rows.
        let names = try synchronously { try pool.read { db in try SQLRequest<String>(sql: "SELECT name FROM t").fetchAll(db) } }
        let asyncNames = try await pool.read { db in try SQLRequest<String>(sql: "SELECT name FROM t").fetchAll(db) }
        readDone.open()
        #expect(names == ["committed"])
        #expect(asyncNames == ["committed"])
        try #require(await write.waitAsync()).get()
        #expect(try pool.count("t") == 3)
    }

    @Test func aReadSeesOneCommittedStateEvenWhenAWriteCommitsMeanwhile() throws {
        let (directory, pool) = try makePool()
        defer { withExtendedLifetime(directory) {} }
        let (before, after) = try pool.read { db in
            let before = try db.count("t")
            // A write commits while the read is open.
            let write = ThreadResult {
                try pool.write { db in try db.execute(sql: "INSERT INTO t (name) VALUES ('new')") }
            }
            let written = write.wait()
            #expect(written != nil)
            try written?.get()
            return (before, try db.count("t"))
        }
        #expect(before == 1)
        #expect(after == 1)
        #expect(try pool.count("t") == 2)
    }

    @Test func atMostMaximumReaderCountReadsRunAtOnce() async throws {
        let (directory, pool) = try makePool(maximumReaderCount: 2)
        defer { withExtendedLifetime(directory) {} }
        let gauge = ConcurrencyGauge()
        let inside = [Gate(), Gate()]
        let release = [Gate(), Gate()]
        let holders = (0..<2).map { index in
            ThreadResult {
                try pool.read { _ in
                    gauge.measure {
                        inside[index].open()
                        _ = release[index].wait()
                    }
                }
            }
        }
        #expect(await inside[0].waitAsync())
        #expect(await inside[1].waitAsync())

        // A third read, sync and another async, must wait for a reader.
        let thirdInside = Gate()
        let third = ThreadResult {
            try pool.read { db in
                gauge.measure { thirdInside.open() }
                return try db.count("t")
            }
        }
        let fourthInside = Gate()
        let fourth = Task {
            try await pool.read { db in
                gauge.measure { fourthInside.open() }
                return try db.count("t")
            }
        }
        // Neither gets in while both readers are busy (a correct pool never
        // lets them in, whatever the length of this wait).
        #expect(!thirdInside.wait(seconds: 0.3))
        #expect(!fourthInside.wait(seconds: 0.05))

        // Each ends once a reader is released.
        release[0].open()
        release[1].open()
        #expect(try #require(await third.waitAsync()).get() == 1)
        #expect(try await fourth.value == 1)
        for holder in holders { try #require(await holder.waitAsync()).get() }
        #expect(gauge.maximum == 2)
    }

    @Test func failingReadsGiveTheirReaderBack() async throws {
        let (directory, pool) = try makePool(maximumReaderCount: 1)
        defer { withExtendedLifetime(directory) {} }
        for _ in 0..<10 {
            #expect(throws: TestError()) { try pool.read { _ in throw TestError() } }
            #expect(throws: DatabaseError.self) { try pool.read { db in try db.execute(sql: "SELEC 1") } }
            await #expect(throws: TestError()) { try await pool.read { _ in throw TestError() } }
            await #expect(throws: DatabaseError.self) { try await pool.read { db in try db.execute(sql: "DELETE FROM t") } }
        }
        // Were the only reader leaked, this read would wait forever.
        let read = ThreadResult { try pool.read { db in try db.count("t") } }
        #expect(try #require(await read.waitAsync()).get() == 1)
        #expect(try await pool.read { db in try db.count("t") } == 1)
    }

    @Test func readsDoNotChangeTheDatabase() throws {
        let (directory, pool) = try makePool()
        defer { withExtendedLifetime(directory) {} }
        let error = databaseError { try pool.read { db in try db.execute(sql: "DELETE FROM t") } }
        #expect(error?.resultCode == .SQLITE_READONLY)
        #expect(try pool.count("t") == 1)
    }

    @Test func aReaderSeesTheSchemaChangesOfTheWriter() throws {
        let (directory, pool) = try makePool(maximumReaderCount: 1)
        defer { withExtendedLifetime(directory) {} }
        let row = try pool.read { db in try SQLRequest<Row>(sql: "SELECT * FROM t").fetchOne(db) }
        #expect(row?.columnNames == ["id", "name"])
        try pool.write { db in
            try db.execute(sql: """
                DROP TABLE t;
                CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
                INSERT INTO t VALUES (1, 'a', 10);
                """)
        }
        let newRow = try pool.read { db in try SQLRequest<Row>(sql: "SELECT * FROM t").fetchOne(db) }
        #expect(newRow?.columnNames == ["id", "name", "score"])
        #expect(newRow == Row(["id": 1, "name": "a", "score": 10]))
    }

    @Test func aReaderSeesATableCreatedByTheWriterAfterItLookedForIt() throws {
        struct Item: FetchableRecord, TableRecord {
            var id: Int64
            init(row: Row) throws { id = try row["id"] }
        }
        let (directory, pool) = try makePool(maximumReaderCount: 1)
        defer { withExtendedLifetime(directory) {} }
        #expect(throws: DatabaseError.self) { try pool.read { db in try Item.orderByPrimaryKey().fetchAll(db) } }
        try pool.write { db in try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY); INSERT INTO item VALUES (3)") }
        #expect(try pool.read { db in try Item.orderByPrimaryKey().fetchAll(db) }.map(\.id) == [3])
    }

    @Test func aReaderThatFailsToOpenGivesItsSlotBack() async throws {
        let parent = try TemporaryDirectory()
        defer { withExtendedLifetime(parent) {} }
        let directory = parent.url.appendingPathComponent("database")
        let moved = parent.url.appendingPathComponent("moved")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        let pool = try DatabasePool(path: directory.appendingPathComponent("db.sqlite").path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }

        // The files are gone when the first reader opens.
        try FileManager.default.moveItem(at: directory, to: moved)
        #expect(databaseError { _ = try pool.read { db in try db.count("t") } }?.resultCode == .SQLITE_CANTOPEN)
        #expect(await databaseError { _ = try await pool.read { db in try db.count("t") } }?.resultCode == .SQLITE_CANTOPEN)
        try FileManager.default.moveItem(at: moved, to: directory)

        // Were the only slot leaked, these would wait forever.
        let read = ThreadResult { try pool.read { db in try db.count("t") } }
        #expect(try #require(await read.waitAsync()).get() == 1)
        #expect(try await pool.read { db in try db.count("t") } == 1)
    }
}
