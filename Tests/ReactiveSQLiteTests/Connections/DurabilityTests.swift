import DatabaseTestSupport
import DatabaseRegions
import Foundation
import ReactiveSQLite
import Synchronization
import TestSupport
import Testing

/// Durability defaults (a pool commits in WAL mode with `synchronous =
/// NORMAL`, a queue keeps SQLite's defaults) and `Configuration.prepareDatabase`.
@Suite struct DurabilityTests {
    /// What `prepareDatabase` saw, connection by connection, in call order.
    private final class Calls: Sendable {
        private let labels = Mutex<[String]>([])

        func record(_ db: Database) { labels.withLock { $0.append(db.label) } }

        var all: [String] { labels.withLock { $0 } }

        /// The number of calls per connection label.
        var countByLabel: [String: Int] { all.reduce(into: [:]) { $0[$1, default: 0] += 1 } }
    }

    /// The durability settings a connection reports.
    private struct Durability: Equatable, CustomStringConvertible {
        var synchronous: Int?
        var journalMode: String?
        var description: String { "synchronous \(synchronous.map(String.init) ?? "nil"), \(journalMode ?? "nil")" }

        init(synchronous: Int?, journalMode: String?) {
            self.synchronous = synchronous
            self.journalMode = journalMode
        }

        init(_ db: Database) throws {
            synchronous = try db.int("PRAGMA synchronous")
            journalMode = try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(db)
        }
    }

    /// `PRAGMA synchronous` levels, as SQLite reports them.
    private static let full = 2
    private static let normal = 1

    /// Runs `count` reads of `pool` at once, each on a thread of its own and
    /// each holding its reader until all are inside (so that each needs a
    /// reader of its own), and returns what each read saw: its connection's
    /// label and durability.
    private func concurrentReads(
        _ pool: DatabasePool, count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [(label: String, durability: Durability)] {
        let arrived = Gate()
        let release = Gate()
        let reads = (0..<count).map { _ in
            ThreadResult {
                try pool.read { db in
                    let seen = (label: db.label, durability: try Durability(db))
                    arrived.open()
                    _ = release.wait()
                    return seen
                }
            }
        }
        for _ in 0..<count {
            #expect(await arrived.waitAsync(), "a read did not start", sourceLocation: sourceLocation)
        }
        for _ in 0..<count { release.open() }
        var seen: [(label: String, durability: Durability)] = []
        for read in reads {
            seen.append(try #require(await read.waitAsync(), sourceLocation: sourceLocation).get())
        }
        return seen
    }

    // MARK: - Defaults

    @Test func aDefaultPoolCommitsInWALModeWithSynchronousNormalOnEveryConnection() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        var configuration = Configuration()
        configuration.maximumReaderCount = 3
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        defer { pool.close() }
        let expected = Durability(synchronous: Self.normal, journalMode: "wal")
        #expect(try await pool.writeWithoutTransaction { db in try Durability(db) } == expected)
        #expect(try await pool.write { db in try Durability(db) } == expected)
        let reads = try await concurrentReads(pool, count: 3)
        #expect(Set(reads.map(\.label)) == ["ReactiveSQLite.reader.1", "ReactiveSQLite.reader.2", "ReactiveSQLite.reader.3"])
        for read in reads {
            #expect(read.durability == expected, "\(read.label)")
        }
    }

    @Test func aDefaultReadonlyPoolReadsWithSynchronousNormal() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("db.sqlite")
        try DatabasePool(path: path).close()
        var configuration = Configuration()
        configuration.readonly = true
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { pool.close() }
        let expected = Durability(synchronous: Self.normal, journalMode: "wal")
        #expect(try pool.writeWithoutTransaction { db in try Durability(db) } == expected)
        #expect(try pool.read { db in try Durability(db) } == expected)
    }

    @Test(arguments: [DatabaseKind.inMemoryQueue, .fileQueue])
    func aDefaultQueueKeepsSQLiteDefaults(kind: DatabaseKind) throws {
        let test = try kind.make()
        // SQLite's defaults: synchronous FULL, and a rollback journal
        // (DELETE) for a new file, MEMORY in memory.
        let expected = Durability(synchronous: Self.full, journalMode: kind == .inMemoryQueue ? "memory" : "delete")
        #expect(try test.writer.writeWithoutTransaction { db in try Durability(db) } == expected)
        #expect(try test.writer.read { db in try Durability(db) } == expected)
    }

    // MARK: - prepareDatabase: once per connection, first

    @Test func prepareDatabaseRunsOnceOnEachConnectionOfAPool() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let calls = Calls()
        var configuration = Configuration()
        configuration.maximumReaderCount = 3
        configuration.prepareDatabase = { db in calls.record(db) }
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        defer { pool.close() }
        // The writer opens with the pool; readers when reads need them.
        #expect(calls.all == ["ReactiveSQLite.writer"])
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        _ = try await pool.read { db in try db.count("t") }
        #expect(calls.all == ["ReactiveSQLite.writer", "ReactiveSQLite.reader.1"])
        // Three reads at once open two more readers; later reads reuse them.
        _ = try await concurrentReads(pool, count: 3)
        _ = try await concurrentReads(pool, count: 3)
        for _ in 0..<10 { _ = try await pool.read { db in try db.count("t") } }
        try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(calls.countByLabel == [
            "ReactiveSQLite.writer": 1,
            "ReactiveSQLite.reader.1": 1, "ReactiveSQLite.reader.2": 1, "ReactiveSQLite.reader.3": 1,
        ])
    }

    @Test(arguments: [DatabaseKind.inMemoryQueue, .fileQueue])
    func prepareDatabaseRunsOnceOnTheConnectionOfAQueue(kind: DatabaseKind) throws {
        let calls = Calls()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in calls.record(db) }
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        _ = try test.writer.read { db in try db.count("t") }
        _ = try test.writer.writeWithoutTransaction { db in try db.count("t") }
        #expect(calls.all == ["ReactiveSQLite.queue"])
    }

    /// The connection that watches external changes is opened when an
    /// observation starts while none runs: `prepareDatabase` runs on it each
    /// time (a key it sets is needed there as much as anywhere).
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func prepareDatabaseRunsOnTheConnectionThatWatchesExternalChanges(kind: DatabaseKind) throws {
        let calls = Calls()
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.prepareDatabase = { db in calls.record(db) }
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        let before = calls.countByLabel
        #expect(before["ReactiveSQLite.watcher"] == nil)
        for round in 1...2 {
            let cancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "t"))
                .start(in: test.writer) { error in Issue.record("\(error)") } onChange: { _ in }
            #expect(calls.countByLabel["ReactiveSQLite.watcher"] == round)
            cancellable.cancel()
        }
        // No other connection was opened meanwhile.
        var others = calls.countByLabel
        others["ReactiveSQLite.watcher"] = nil
        #expect(others == before)
    }

    /// `prepareDatabase` runs before any statement reads the file: on a file
    /// that is not a database (as an encrypted one looks before its key is
    /// set), it runs, and its error is the one thrown; without an error, the
    /// open then fails with `SQLITE_NOTADB`.
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func prepareDatabaseRunsBeforeTheFileIsRead(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("garbage.sqlite")
        try Data(repeating: 0x2A, count: 4096).write(to: URL(fileURLWithPath: path))
        func open(_ configuration: Configuration) throws {
            switch kind {
            case .pool: _ = try DatabasePool(path: path, configuration: configuration)
            default: _ = try DatabaseQueue(path: path, configuration: configuration)
            }
        }

        let calls = Calls()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            calls.record(db)
            throw TestError(tag: 1)
        }
        #expect(throws: TestError(tag: 1)) { try open(configuration) }
        #expect(calls.all.count == 1)

        configuration.prepareDatabase = { db in calls.record(db) }
        #expect(databaseError { try open(configuration) }?.resultCode == .SQLITE_NOTADB)
        #expect(calls.all.count == 2)
    }

    /// `prepareDatabase` sees the connection as SQLite opened it: the pool
    /// has set neither its synchronous level nor WAL mode yet.
    @Test func prepareDatabaseRunsBeforeThePoolSetsItsDefaults() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let seen = Mutex<[String: Durability]>([:])
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            let durability = try Durability(db)
            seen.withLock { $0[db.label] = durability }
        }
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        defer { pool.close() }
        _ = try pool.read { db in try db.int("SELECT 1") }
        #expect(seen.withLock { $0 } == [
            "ReactiveSQLite.writer": Durability(synchronous: Self.full, journalMode: "delete"),
            // The file is in WAL mode by then; the reader's level is not set yet.
            "ReactiveSQLite.reader.1": Durability(synchronous: Self.full, journalMode: "wal"),
        ])
        #expect(try pool.read { db in try Durability(db) } == Durability(synchronous: Self.normal, journalMode: "wal"))
    }

    // MARK: - prepareDatabase: changing the defaults

    /// A level set in `prepareDatabase` wins over the pool's, on the writer
    /// and the readers, whatever its spelling; the switch to WAL mode keeps it.
    @Test(arguments: [
        ("PRAGMA synchronous = FULL", 2),
        ("pragma SYNCHRONOUS=off", 0),
        ("PRAGMA main.synchronous = 3", 3),
        ("PRAGMA synchronous = NORMAL; PRAGMA synchronous = FULL", 2),
    ])
    func aSynchronousLevelSetInPrepareDatabaseWinsOverThePoolDefault(sql: String, level: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        var configuration = Configuration()
        configuration.maximumReaderCount = 2
        configuration.prepareDatabase = { db in try db.execute(sql: sql) }
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        defer { pool.close() }
        let expected = Durability(synchronous: level, journalMode: "wal")
        #expect(try await pool.writeWithoutTransaction { db in try Durability(db) } == expected)
        for read in try await concurrentReads(pool, count: 2) {
            #expect(read.durability == expected, "\(read.label)")
        }
    }

    /// Reading the level, or setting the level of another schema, is not
    /// setting it: the pool's default applies.
    @Test(arguments: ["PRAGMA synchronous", "SELECT * FROM pragma_synchronous", "PRAGMA temp.synchronous = OFF"])
    func readingTheSynchronousLevelInPrepareDatabaseKeepsThePoolDefault(sql: String) throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: sql) }
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        defer { pool.close() }
        let expected = Durability(synchronous: Self.normal, journalMode: "wal")
        #expect(try pool.writeWithoutTransaction { db in try Durability(db) } == expected)
        #expect(try pool.read { db in try Durability(db) } == expected)
    }

    @Test func aQueueTakesTheDurabilityOfPrepareDatabase() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        }
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"), configuration: configuration)
        defer { queue.close() }
        let expected = Durability(synchronous: Self.normal, journalMode: "wal")
        #expect(try queue.writeWithoutTransaction { db in try Durability(db) } == expected)
        #expect(try queue.read { db in try Durability(db) } == expected)
    }

    @Test(arguments: DatabaseKind.allCases)
    func prepareDatabaseSetsPragmasOnEveryConnection(kind: DatabaseKind) throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA cache_size = -1234") }
        let test = try kind.make(configuration: configuration)
        #expect(try test.writer.writeWithoutTransaction { db in try db.int("PRAGMA cache_size") } == -1234)
        #expect(try test.writer.read { db in try db.int("PRAGMA cache_size") } == -1234)
    }

    // MARK: - prepareDatabase: errors

    @Test(arguments: DatabaseKind.allCases)
    func anErrorOfPrepareDatabaseMakesTheOpenThrowIt(kind: DatabaseKind) throws {
        let calls = Calls()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            calls.record(db)
            throw TestError(tag: 2)
        }
        #expect(throws: TestError(tag: 2)) { _ = try kind.make(configuration: configuration) }
        #expect(calls.all == [kind == .pool ? "ReactiveSQLite.writer" : "ReactiveSQLite.queue"])
    }

    /// A failing `prepareDatabase` releases its connection: nothing keeps
    /// the `Database` (and the closure) alive.
    @Test(arguments: DatabaseKind.allCases)
    func aConnectionWhosePrepareDatabaseFailsIsReleased(kind: DatabaseKind) throws {
        let reference = WeakDatabase()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            reference.database = db
            throw TestError(tag: 3)
        }
        #expect(throws: TestError(tag: 3)) { _ = try kind.make(configuration: configuration) }
        #expect(reference.wasSet)
        #expect(reference.database == nil)
    }

    /// A weak reference to a `Database`.
    ///
    /// `@unchecked Sendable`: written by `prepareDatabase` during the open,
    /// read by the test after the open returned, on the same thread.
    private final class WeakDatabase: @unchecked Sendable {
        weak var database: Database? {
            didSet { wasSet = true }
        }
        var wasSet = false
    }

    @Test func aReaderWhosePrepareDatabaseFailsMakesTheReadThrowAndIsRetriedByTheNextRead() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let calls = Calls()
        let readersFail = Mutex(true)
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            calls.record(db)
            if db.label.contains("reader"), readersFail.withLock({ $0 }) { throw TestError(tag: 4) }
        }
        let pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        defer { pool.close() }
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1)") }
        #expect(throws: TestError(tag: 4)) { try pool.read { db in try db.count("t") } }
        await #expect(throws: TestError(tag: 4)) { try await pool.read { db in try db.count("t") } }
        // The writer still works, and a later reader that opens fine serves reads.
        try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        readersFail.withLock { $0 = false }
        #expect(try await pool.read { db in try db.count("t") } == 2)
        #expect(calls.countByLabel == ["ReactiveSQLite.writer": 1, "ReactiveSQLite.reader.1": 1,
                                       "ReactiveSQLite.reader.2": 1, "ReactiveSQLite.reader.3": 1])
    }

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func anErrorOfPrepareDatabaseOnTheWatchingConnectionReachesTheObservation(kind: DatabaseKind) throws {
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.prepareDatabase = { db in
            if db.label.hasSuffix(".watcher") { throw TestError(tag: 5) }
        }
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        let errors = Mutex<[any Error]>([])
        let cancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "t"))
            .start(in: test.writer) { error in errors.withLock { $0.append(error) } } onChange: { _ in }
        defer { cancellable.cancel() }
        #expect(errors.withLock { $0.map { $0 as? TestError } } == [TestError(tag: 5)])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTransactionLeftOpenByPrepareDatabaseMakesTheOpenThrow(kind: DatabaseKind) throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "BEGIN") }
        let error = databaseError { _ = try kind.make(configuration: configuration) }
        #expect(error?.resultCode == .SQLITE_MISUSE)
    }
}
