import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

@Suite(.onItsOwnThread) struct ConfigurationTests {
    private static let foreignKeySchema = """
        CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child (parentID INTEGER REFERENCES parent(id));
        """

    @Test(arguments: DatabaseKind.allCases)
    func foreignKeysAreEnforcedByDefault(kind: DatabaseKind) throws {
        let test = try kind.make()
        #expect(Configuration().foreignKeysEnabled)
        try test.writer.write { db in try db.execute(sql: Self.foreignKeySchema) }
        #expect(try test.writer.read { db in try db.int("PRAGMA foreign_keys") } == 1)
        let error = databaseError { try test.writer.write { db in try db.execute(sql: "INSERT INTO child VALUES (1)") } }
        #expect(error?.extendedResultCode.rawValue == 787)
    }

    @Test(arguments: DatabaseKind.allCases)
    func foreignKeysCanBeDisabled(kind: DatabaseKind) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in
            try db.execute(sql: Self.foreignKeySchema)
            try db.execute(sql: "INSERT INTO child VALUES (1)")
        }
        #expect(try test.writer.read { db in try db.int("PRAGMA foreign_keys") } == 0)
        #expect(try test.writer.count("child") == 1)
    }

    @Test func aReadonlyQueueReadsAndCannotWrite() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("db.sqlite")
        try await DatabaseQueue(path: path).write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        #expect(try queue.count("t") == 1)
        #expect(databaseError { try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") } }?.resultCode
            == .SQLITE_READONLY)
        #expect(databaseError { try queue.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO t VALUES (2)") } }?
            .resultCode == .SQLITE_READONLY)
        #expect(await databaseError { try await queue.write { db in try db.execute(sql: "DELETE FROM t") } }?.resultCode
            == .SQLITE_READONLY)
        #expect(try queue.count("t") == 1)
    }

    @Test func aReadonlyPoolReadsAndCannotWrite() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("db.sqlite")
        do {
            let pool = try DatabasePool(path: path)
            try pool.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }
            pool.close()
        }
        var configuration = Configuration()
        configuration.readonly = true
        let pool = try DatabasePool(path: path, configuration: configuration)
        #expect(try pool.count("t") == 1)
        #expect(databaseError { try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") } }?.resultCode
            == .SQLITE_READONLY)
        #expect(try pool.count("t") == 1)
    }

    @Test func openingAMissingFileReadonlyThrowsCantOpenAndCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("missing.sqlite")
        var configuration = Configuration()
        configuration.readonly = true
        #expect(databaseError { _ = try DatabaseQueue(path: path, configuration: configuration) }?.resultCode
            == .SQLITE_CANTOPEN)
        #expect(databaseError { _ = try DatabasePool(path: path, configuration: configuration) }?.resultCode
            == .SQLITE_CANTOPEN)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func aWriteThrowsBusyAfterTheTimeoutWhenAnotherConnectionHoldsTheLock(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(300)
        let test = try kind.make(configuration: configuration)
        try await test.writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        // Another connection holds the write lock, in a write that lasts
        // until `unlock` opens, then rolls back.
        let other = try DatabaseQueue(path: try #require(test.path))
        let (locked, unlock) = (Gate(), Gate())
        let otherWrite = ThreadResult {
            try other.write { db in
                try db.execute(sql: "INSERT INTO t VALUES ('other')")
                locked.open()
                _ = unlock.wait()
                throw TestError()
            }
        }
        defer { unlock.open() }
        #expect(await locked.waitAsync())

        let clock = ContinuousClock()
        let start = clock.now
        let error = databaseError { try test.writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } }
        let elapsed = clock.now - start
        #expect(error?.resultCode == .SQLITE_BUSY)
        #expect(elapsed >= .milliseconds(300))

        let asyncStart = clock.now
        let asyncError = await databaseError {
            try await test.writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        }
        #expect(asyncError?.resultCode == .SQLITE_BUSY)
        #expect(clock.now - asyncStart >= .milliseconds(300))
        // Reads are not blocked by the lock.
        #expect(try test.writer.count("t") == 0)
        unlock.open()
        let outcome = await otherWrite.waitAsync()
        #expect(throws: TestError()) { try outcome?.get() }
    }

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func aWriteWaitsForALockReleasedWithinTheTimeout(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(patience)
        let test = try kind.make(configuration: configuration)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        // Another connection holds the write lock, in a write that lasts
        // until `unlock` opens, then commits.
        let other = try DatabaseQueue(path: try #require(test.path))
        let (locked, unlock) = (Gate(), Gate())
        let otherWrite = ThreadResult {
            try other.write { db in
                try db.execute(sql: "INSERT INTO t VALUES ('other')")
                locked.open()
                _ = unlock.wait()
            }
        }
        defer { unlock.open() }
        #expect(await locked.waitAsync())
        let starting = Gate()
        let write = ThreadResult {
            starting.open()
            try writer.write { db in try db.execute(sql: "INSERT INTO t VALUES ('mine')") }
        }
        #expect(await starting.waitAsync())
        // Give the write time to meet the lock (it succeeds whatever this delay).
        try await Task.sleep(for: .milliseconds(200))
        unlock.open()
        try #require(await otherWrite.waitAsync()).get()
        try #require(await write.waitAsync()).get()
        #expect(try writer.count("t") == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func theLabelNamesTheDispatchQueuesAndTheErrors(kind: DatabaseKind) throws {
        var configuration = Configuration()
        configuration.label = "Library"
        let test = try kind.make(configuration: configuration)
        let writerLabel = try test.writer.writeWithoutTransaction { _ in currentDispatchQueueLabel() ?? "" }
        let readerLabel = try test.writer.read { _ in currentDispatchQueueLabel() ?? "" }
        #expect(writerLabel.hasPrefix("Library."))
        #expect(readerLabel.hasPrefix("Library."))
        if kind == .pool {
            #expect(writerLabel != readerLabel)
        }
        let error = databaseError { try test.writer.write { db in try db.execute(sql: "SELECT * FROM nope") } }
        #expect(error?.connectionLabel == writerLabel)
        #expect(error?.description.contains("(connection \(writerLabel))") == true)
    }

    /// SQLite takes the busy timeout in milliseconds, as an `Int32`: a longer
    /// timeout is clamped to `Int32.max` milliseconds (about 24.8 days), a
    /// negative one to zero, and opening never traps.
    @Test(arguments: DatabaseKind.allCases, [
        (Duration.seconds(Int64.max), Int(Int32.max)),
        (.seconds(3_000_000), Int(Int32.max)),
        (.milliseconds(Int64(Int32.max)), Int(Int32.max)),
        (.milliseconds(1500), 1500),
        (.zero, 0),
        (.milliseconds(-1), 0),
        (.seconds(-1), 0),
        (.seconds(Int64.min), 0),
    ])
    func anOutOfRangeBusyTimeoutIsClampedAndTheDatabaseWorks(kind: DatabaseKind, timeout: (Duration, Int)) throws {
        var configuration = Configuration()
        configuration.busyTimeout = timeout.0
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }
        #expect(try test.writer.count("t") == 1)
        #expect(try test.writer.writeWithoutTransaction { db in try db.int("PRAGMA busy_timeout") } == timeout.1)
        #expect(try test.writer.read { db in try db.int("PRAGMA busy_timeout") } == timeout.1)
    }

    @Test func theBusyTimeoutAndReaderCountHaveDefaults() {
        let configuration = Configuration()
        #expect(configuration.busyTimeout == .seconds(5))
        #expect(configuration.maximumReaderCount == 5)
        #expect(configuration.readonly == false)
        #expect(configuration.label == "ReactiveSQLite")
    }
}
