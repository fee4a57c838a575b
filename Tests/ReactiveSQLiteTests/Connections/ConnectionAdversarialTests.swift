import DatabaseRegions
import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// An adversarial review of connections, transactions and errors: files
/// that are not what they seem, locks held by other connections, SQL that
/// fails at each step, transactions that SQLite ends on its own. Every
/// failure must be a clear thrown `DatabaseError`, never a trap or a hang.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct ConnectionAdversarialTests {
    // MARK: - Support

    /// Another connection to `path` that holds a lock, taken by `begin` (and
    /// the statements after it), until `release()`.
    final class LockHolder: Sendable {
        private let locked = Gate()
        private let unlock = Gate()
        private let outcome: ThreadResult<Void>

        init(path: String, sql: String) throws {
            let queue = try DatabaseQueue(path: path)
            let (locked, unlock) = (self.locked, self.unlock)
            outcome = ThreadResult {
                try queue.writeWithoutTransaction { db in
                    try db.execute(sql: sql)
                    locked.open()
                    _ = unlock.wait()
                    try db.execute(sql: "ROLLBACK")
                }
                queue.close()
            }
            guard locked.wait() else { throw TestError(tag: 1) }
        }

        /// Rolls back the other connection's transaction.
        func release() throws {
            unlock.open()
            guard let result = outcome.wait() else { throw TestError(tag: 2) }
            try result.get()
        }
    }

    private static func ids(_ db: Database, _ table: String = "t") throws -> [Int] {
        try SQLRequest<Int>(sql: "SELECT id FROM \(table) ORDER BY id").fetchAll(db)
    }

    private static func configuration(busyTimeout: Duration) -> Configuration {
        var configuration = Configuration()
        configuration.busyTimeout = busyTimeout
        return configuration
    }

    // MARK: - Opening

    @Test func aDirectoryAsPathThrows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("a directory.sqlite")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        // Read-write: SQLite cannot open a directory.
        let queueError = databaseError { _ = try DatabaseQueue(path: path) }
        #expect(queueError?.resultCode == .SQLITE_CANTOPEN, "\(String(describing: queueError))")
        #expect(queueError?.message?.contains(path) == true)
        let poolError = databaseError { _ = try DatabasePool(path: path) }
        #expect(poolError?.resultCode == .SQLITE_CANTOPEN, "\(String(describing: poolError))")
        // Read-only: the directory opens, and its first read fails.
        var configuration = Configuration()
        configuration.readonly = true
        for error in [
            databaseError { _ = try DatabaseQueue(path: path, configuration: configuration) },
            databaseError { _ = try DatabasePool(path: path, configuration: configuration) },
        ] {
            #expect([.SQLITE_IOERR, .SQLITE_CANTOPEN].contains(error?.resultCode), "\(String(describing: error))")
            #expect(error?.message?.contains(path) == true)
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    /// Bug: an error of `sqlite3_open_v2` carries its primary code only
    /// (SQLITE_IOERR), though SQLite has the extended one
    /// (`sqlite3_extended_errcode`: SQLITE_IOERR_READ, 266). Correct: the
    /// extended code, as for every other error.
    @Test func openErrorsCarryTheExtendedResultCode() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("a directory.sqlite")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        var configuration = Configuration()
        configuration.readonly = true
        let error = databaseError { _ = try DatabaseQueue(path: path, configuration: configuration) }
        #expect(error?.extendedResultCode.rawValue == 266, "\(String(describing: error))")  // SQLITE_IOERR_READ
    }

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func anEmptyFileOpensAsAnEmptyDatabase(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let writer: any DatabaseWriter = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        #expect(try writer.read { db in try db.count("sqlite_master") } == 0)
        try writer.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        #expect(try writer.read { db in try Self.ids(db) } == [1])
        writer.close()
    }

    /// A database file cut short: opening or reading throws, nothing traps.
    @Test(arguments: [100, 4096, 4096 * 5, -1])
    func aTruncatedDatabaseThrowsWhenOpenedOrRead(length: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.writeSQL("""
                CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
                INSERT INTO t SELECT i, randomblob(1000) FROM n;
                CREATE INDEX t_payload ON t(payload);
                """)
            queue.close()
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(length < 0 ? size / 2 : length))
        try handle.close()
        for kind in [DatabaseKind.fileQueue, .pool] {
            let writer: any DatabaseWriter
            do {
                writer = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
            } catch let error as DatabaseError {
                #expect([.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode), "\(kind): \(error)")
                continue
            }
            let readError = databaseError {
                _ = try writer.read { db in
                    try SQLRequest<Row>(sql: "SELECT count(*), sum(length(payload)) FROM t").fetchAll(db)
                }
            }
            #expect(readError?.resultCode == .SQLITE_CORRUPT, "\(kind): \(String(describing: readError))")
            #expect(readError?.sql != nil)
            let writeError = databaseError {
                try writer.write { db in try db.execute(sql: "UPDATE t SET payload = zeroblob(10)") }
            }
            #expect(writeError?.resultCode == .SQLITE_CORRUPT, "\(kind): \(String(describing: writeError))")
            writer.close()
        }
    }

    /// A write-ahead log whose database is gone: SQLite deletes it, and the
    /// database opens empty.
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func aWALFileWithoutItsDatabaseOpensAnEmptyDatabase(kind: DatabaseKind) throws {
        let source = try TemporaryDirectory()
        let orphan = try TemporaryDirectory()
        let pool = try DatabasePool(path: source.path("db.sqlite"))
        try pool.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        try FileManager.default.copyItem(atPath: source.path("db.sqlite-wal"), toPath: orphan.path("db.sqlite-wal"))
        pool.close()
        let path = orphan.path("db.sqlite")
        let writer: any DatabaseWriter = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        #expect(try writer.read { db in try db.count("sqlite_master") } == 0)
        writer.close()
    }

    /// Another connection holds an EXCLUSIVE lock (rollback journal): opening
    /// a queue or a pool, and reading, throw SQLITE_BUSY after the timeout;
    /// everything works once the lock is released.
    @Test func aDatabaseLockedExclusivelyByAnotherConnectionThrowsBusy() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try DatabaseQueue(path: path).writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let configuration = Self.configuration(busyTimeout: .milliseconds(100))
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let holder = try LockHolder(path: path, sql: "BEGIN EXCLUSIVE; INSERT INTO t VALUES (2)")
        defer { try? holder.release() }

        let queueError = databaseError { _ = try DatabaseQueue(path: path, configuration: configuration) }
        #expect(queueError?.resultCode == .SQLITE_BUSY, "\(String(describing: queueError))")
        #expect(queueError?.sql != nil)
        let poolError = databaseError { _ = try DatabasePool(path: path, configuration: configuration) }
        #expect(poolError?.resultCode == .SQLITE_BUSY, "\(String(describing: poolError))")
        let readError = databaseError { _ = try queue.read { db in try Self.ids(db) } }
        #expect(readError?.resultCode == .SQLITE_BUSY, "\(String(describing: readError))")
        let writeError = databaseError { try queue.writeSQL("INSERT INTO t VALUES (3)") }
        #expect(writeError?.resultCode == .SQLITE_BUSY, "\(String(describing: writeError))")
        #expect(writeError?.description.contains("database is locked") == true)

        try holder.release()
        // The failed read left no `query_only` behind: writes work.
        try queue.writeSQL("INSERT INTO t VALUES (4)")
        #expect(try queue.read { db in try Self.ids(db) } == [1, 4])
        let pool = try DatabasePool(path: path, configuration: configuration)
        #expect(try pool.read { db in try Self.ids(db) } == [1, 4])
        pool.close()
        queue.close()
    }

    /// A pool opened on a database in rollback-journal mode, while a queue
    /// has it open, switches it to WAL; both keep working.
    @Test func aPoolOnARollbackJournalDatabaseOpenedElsewhereSwitchesItToWAL() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        #expect(try queue.read { db in try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(db) } == "delete")
        let pool = try DatabasePool(path: path)
        #expect(try pool.read { db in try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(db) } == "wal")
        try queue.writeSQL("INSERT INTO t VALUES (2)")
        try pool.writeSQL("INSERT INTO t VALUES (3)")
        #expect(try pool.read { db in try Self.ids(db) } == [1, 2, 3])
        #expect(try queue.read { db in try Self.ids(db) } == [1, 2, 3])
        pool.close()
        queue.close()
    }

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func pathsWithUnicodeAndSpacesWork(kind: DatabaseKind) throws {
        let parent = try TemporaryDirectory()
        let directoryPath = parent.path("dir with spaces, é and 🙂")
        try FileManager.default.createDirectory(atPath: directoryPath, withIntermediateDirectories: false)
        // Decomposed é (e + U+0301): the bytes of the path, not a normalized form, name the file.
        let path = directoryPath + "/de\u{301}jà vu 'quoted' \"db\".sqlite"
        let writer: any DatabaseWriter = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        try writer.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        #expect(try writer.read { db in try Self.ids(db) } == [1])
        let names = try FileManager.default.contentsOfDirectory(atPath: directoryPath)
        #expect(names.contains { Array($0.utf8) == Array("de\u{301}jà vu 'quoted' \"db\".sqlite".utf8) }, "\(names)")
        writer.close()
        #expect(try DatabaseQueue(path: path).read { db in try Self.ids(db) } == [1])
    }

    @Test func emptyAndInMemoryPathsForAPoolThrow() throws {
        for path in ["", ":memory:", "file::memory:", "file:connadv?mode=memory&cache=shared"] {
            let error = databaseError { _ = try DatabasePool(path: path) }
            #expect(error?.resultCode == .SQLITE_ERROR, "\(path): \(String(describing: error))")
            #expect(error?.message?.contains("WAL") == true, "\(path)")
        }
        // A queue on the empty path is a private temporary database.
        let queue = try DatabaseQueue(path: "")
        try queue.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        #expect(try queue.read { db in try Self.ids(db) } == [1])
    }

    /// SQLite reads `file:` paths as URIs (the library is built with
    /// SQLITE_USE_URI): `mode=ro` opens a read-only connection.
    @Test func aReadOnlyURIMakesWritesThrowReadonly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try DatabaseQueue(path: path).writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let queue = try DatabaseQueue(path: "file:\(path)?mode=ro")
        #expect(try queue.read { db in try Self.ids(db) } == [1])
        let error = databaseError { try queue.writeSQL("INSERT INTO t VALUES (2)") }
        #expect(error?.resultCode == .SQLITE_READONLY, "\(String(describing: error))")
        #expect(try queue.read { db in try Self.ids(db) } == [1])
    }

    /// Bug: a path with a NUL character opens the file named by the text
    /// before the NUL (SQLite reads a C string), silently: another file
    /// than the one asked for, created if missing. Correct: a thrown
    /// `DatabaseError`, as for SQL with a NUL (`Database.execute`).
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func aPathWithANULCharacterThrowsInsteadOfOpeningAnotherFile(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite") + "\0.backup"
        do {
            let writer: any DatabaseWriter = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
            writer.close()
            Issue.record("opened \(path.debugDescription)")
        } catch {
            #expect(error is DatabaseError, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("db.sqlite")), "a truncated path was created")
    }

    /// A file name longer than the file system takes, and a path longer
    /// than SQLite takes (512 bytes), throw SQLITE_CANTOPEN.
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func tooLongPathsThrowCantOpen(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        var deep = directory.url.path
        for index in 0..<4 {
            deep += "/" + String(repeating: "\(index)", count: 200)
            try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: false)
        }
        for path in [directory.path(String(repeating: "n", count: 300) + ".sqlite"), deep + "/db.sqlite"] {
            let error = databaseError {
                let writer: any DatabaseWriter = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
                writer.close()
            }
            #expect(error?.resultCode == .SQLITE_CANTOPEN, "\(path.utf8.count) bytes: \(String(describing: error))")
            #expect(error?.message?.contains(path) == true)
        }
    }

    /// A database file replaced under an open queue (rollback journal):
    /// SQLite refuses the next write with SQLITE_READONLY_DBMOVED. (In WAL
    /// mode SQLite does not check, and its log, left behind, then applies
    /// to the new file: https://www.sqlite.org/howtocorrupt.html#unlink.)
    @Test func aDatabaseFileReplacedUnderAnOpenQueueMakesWritesThrowDBMoved() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let other = directory.path("other.sqlite")
        try DatabaseQueue(path: other).writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (2)")
        #expect(rename(other, path) == 0)
        let error = databaseError { try queue.writeSQL("INSERT INTO t VALUES (3)") }
        #expect(error?.extendedResultCode == .SQLITE_READONLY_DBMOVED, "\(String(describing: error))")
        #expect(error?.description.contains("1032") == true)
        queue.close()
        #expect(try DatabaseQueue(path: path).read { db in try Self.ids(db) } == [2])
    }

    // MARK: - Busy and locked

    /// Counts the commits and rollbacks a `TransactionObserver` is told of.
    final class TransactionCounter: TransactionObserver, Sendable {
        let counts = Locked((commits: 0, rollbacks: 0))
        func observes(eventsOfKind kind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { counts.withLock { $0.commits += 1 } }
        func databaseDidRollback(_ db: Database) { counts.withLock { $0.rollbacks += 1 } }
        var commits: Int { counts.withLock { $0.commits } }
        var rollbacks: Int { counts.withLock { $0.rollbacks } }
    }

    /// In rollback-journal mode a COMMIT needs an EXCLUSIVE lock: another
    /// connection's SHARED lock held beyond the busy timeout makes it fail
    /// with SQLITE_BUSY (SQLite leaves the transaction open): the write
    /// rolls back and throws, and nobody hears of a commit.
    @Test func aCommitBlockedByAReaderBeyondTheTimeoutThrowsBusyAndRollsBack() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let queue = try DatabaseQueue(path: path, configuration: Self.configuration(busyTimeout: .milliseconds(200)))
        try queue.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let counter = TransactionCounter()
        try queue.writeWithoutTransaction { db in db.add(transactionObserver: counter, extent: .databaseLifetime) }
        let regionChanges = Counter()
        let cancellable = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM t")).start(
            in: queue, onError: { Issue.record($0) }
        ) { _ in regionChanges.increment() }
        defer { cancellable.cancel() }

        let holder = try LockHolder(path: path, sql: "BEGIN; SELECT * FROM t")
        defer { try? holder.release() }
        let error = databaseError { try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") } }
        #expect(error?.resultCode == .SQLITE_BUSY, "\(String(describing: error))")
        #expect(error?.sql == "COMMIT TRANSACTION")
        try queue.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
        #expect(counter.commits == 0)
        #expect(counter.rollbacks == 1)
        #expect(regionChanges.current == 0)

        try holder.release()
        #expect(try queue.read { db in try Self.ids(db) } == [1])
        try queue.writeSQL("INSERT INTO t VALUES (3)")
        #expect(try queue.read { db in try Self.ids(db) } == [1, 3])
        #expect(counter.commits == 1)
        #expect(regionChanges.current == 1)
    }

    /// SQLite refuses to drop a table while a statement of the same
    /// connection reads: SQLITE_LOCKED, and the cursor goes on.
    @Test(arguments: DatabaseKind.allCases)
    func droppingATableWhileACursorOfTheSameConnectionIteratesThrowsLocked(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3);
            CREATE TABLE u (id INTEGER PRIMARY KEY);
            """)
        try test.writer.write { db in
            let cursor = try SQLRequest<Int>(sql: "SELECT id FROM t ORDER BY id").fetchCursor(db)
            #expect(try cursor.next() == 1)
            for sql in ["DROP TABLE t", "DROP TABLE u"] {
                let error = databaseError { try db.execute(sql: sql) }
                #expect(error?.resultCode == .SQLITE_LOCKED, "\(String(describing: error))")
                #expect(error?.sql == sql)
                #expect(error?.message == "database table is locked")
                #expect(error?.isLockContention == true)
            }
            #expect(try cursor.next() == 2)
            #expect(try cursor.next() == 3)
            #expect(try cursor.next() == nil)
            #expect(db.isInsideTransaction)
            try db.execute(sql: "DROP TABLE u")
        }
        #expect(try test.writer.read { db in try Self.ids(db) } == [1, 2, 3])
        let error = databaseError { _ = try test.writer.read { db in try Self.ids(db, "u") } }
        #expect(error?.message == "no such table: u")
    }

    /// Two queues on one shared-cache in-memory database: a table that one
    /// writes is locked for the other, which throws SQLITE_LOCKED_SHAREDCACHE
    /// at once (no busy timeout applies).
    @Test func aSharedCacheTableLockThrowsLocked() throws {
        let path = "file:connadv-\(UUID().uuidString)?mode=memory&cache=shared"
        let configuration = Self.configuration(busyTimeout: .seconds(patience))
        let writer = try DatabaseQueue(path: path, configuration: configuration)
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        try writer.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        #expect(try reader.read { db in try Self.ids(db) } == [1])
        let (inside, release) = (Gate(), Gate())
        let write = ThreadResult {
            try writer.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                inside.open()
                _ = release.wait()
            }
        }
        defer { release.open() }
        #expect(inside.wait())
        let clock = ContinuousClock()
        let start = clock.now
        let error = databaseError { _ = try reader.read { db in try Self.ids(db) } }
        #expect(clock.now - start < .seconds(patience / 2))
        #expect(error?.resultCode == .SQLITE_LOCKED, "\(String(describing: error))")
        #expect(error?.extendedResultCode.rawValue == 262)  // SQLITE_LOCKED_SHAREDCACHE
        #expect(error?.sql != nil)
        release.open()
        try #require(write.wait()).get()
        #expect(try reader.read { db in try Self.ids(db) } == [1, 2])
    }

    /// In WAL mode, a deferred transaction that read, then writes after
    /// another connection committed, fails at once with
    /// SQLITE_BUSY_SNAPSHOT, an extended code of lock contention.
    @Test func aStaleSnapshotUpgradedToAWriteThrowsBusySnapshot() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let pool = try DatabasePool(path: path)
        try pool.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let other = try DatabaseQueue(path: path)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN DEFERRED")
            #expect(try Self.ids(db) == [1])
            let otherWrite = ThreadResult { try other.writeSQL("INSERT INTO t VALUES (2)") }
            try #require(otherWrite.wait()).get()
            let error = databaseError { try db.execute(sql: "INSERT INTO t VALUES (3)") }
            #expect(error?.extendedResultCode.rawValue == 517, "\(String(describing: error))")  // SQLITE_BUSY_SNAPSHOT
            #expect(error?.resultCode == .SQLITE_BUSY)
            #expect(error?.isLockContention == true)
            #expect(error?.sql == "INSERT INTO t VALUES (3)")
            #expect(try Self.ids(db) == [1])
            try db.execute(sql: "ROLLBACK")
        }
        try pool.writeSQL("INSERT INTO t VALUES (3)")
        #expect(try pool.read { db in try Self.ids(db) } == [1, 2, 3])
        other.close()
        pool.close()
    }

    /// A checkpoint that must wait for a pool's reader gives up after the
    /// busy timeout without an error, and the read keeps its snapshot.
    @Test func aCheckpointDuringAReadLeavesTheReadItsSnapshot() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(
            path: directory.path("db.sqlite"), configuration: Self.configuration(busyTimeout: .milliseconds(100)))
        try pool.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let (inside, release) = (Gate(), Gate())
        let read = ThreadResult {
            try pool.read { db in
                let before = try Self.ids(db)
                inside.open()
                _ = release.wait()
                return before + (try Self.ids(db))
            }
        }
        defer { release.open() }
        #expect(inside.wait())
        try pool.writeSQL("INSERT INTO t VALUES (2)")
        let checkpoint = try pool.writeWithoutTransaction { db in
            try SQLRequest<Int>(sql: "PRAGMA wal_checkpoint(TRUNCATE)").fetchOne(db)
        }
        #expect(checkpoint == 1, "busy: a reader uses the log")
        release.open()
        #expect(try #require(read.wait()).get() == [1, 1])
        let second = try pool.writeWithoutTransaction { db in
            try SQLRequest<Int>(sql: "PRAGMA wal_checkpoint(TRUNCATE)").fetchOne(db)
        }
        #expect(second == 0)
        #expect(try pool.read { db in try Self.ids(db) } == [1, 2])
    }

    // MARK: - Transactions SQLite ends on its own

    /// The statements that make SQLite roll back the whole transaction
    /// (https://www.sqlite.org/lang_transaction.html#response_to_errors_within_a_transaction):
    /// a conflict resolved with ROLLBACK, and SQLITE_FULL.
    enum ImplicitRollback: String, CaseIterable, CustomTestStringConvertible {
        case conflictRollback
        case triggerRaiseRollback
        case full

        var testDescription: String { rawValue }

        /// A database with `t (id)` holding row 1, where `failingSQL` fails
        /// and rolls back the transaction.
        func makeDatabase(_ kind: DatabaseKind) throws -> TestDatabase {
            var configuration = Configuration()
            if self == .full {
                configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA max_page_count = 20") }
            }
            return try kind.make(configuration: configuration, sql: """
                CREATE TABLE t (id INTEGER PRIMARY KEY);
                CREATE TABLE big (payload BLOB);
                CREATE TABLE refused (x);
                CREATE TRIGGER refuse BEFORE INSERT ON refused BEGIN SELECT RAISE(ROLLBACK, 'refused'); END;
                INSERT INTO t VALUES (1);
                """)
        }

        var failingSQL: String {
            switch self {
            case .conflictRollback: "INSERT OR ROLLBACK INTO t VALUES (1)"
            case .triggerRaiseRollback: "INSERT INTO refused VALUES (1)"
            case .full: "INSERT INTO big VALUES (randomblob(1000000))"
            }
        }
    }

    /// Bug: when a statement makes SQLite roll back the whole transaction
    /// of a `write` (a conflict resolved with ROLLBACK, RAISE(ROLLBACK),
    /// SQLITE_FULL) and the closure catches the error, the write returns
    /// as if it committed, though its earlier changes are gone. Correct (as
    /// GRDB's `checkForAbortedTransaction`): the write throws (SQLITE_ABORT).
    @Test(arguments: DatabaseKind.allCases, ImplicitRollback.allCases)
    func aWriteWhoseTransactionSQLiteRolledBackDoesNotReturnAsCommitted(
        kind: DatabaseKind, rollback: ImplicitRollback
    ) throws {
        let test = try rollback.makeDatabase(kind)
        let outcome = Result {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                let error = databaseError { try db.execute(sql: rollback.failingSQL) }
                #expect(error != nil)
                #expect(!db.isInsideTransaction, "SQLite rolled the transaction back")
            }
        }
        #expect(try test.writer.read { db in try Self.ids(db) } == [1], "row 2 was rolled back")
        #expect(throws: DatabaseError.self, "the write reported a commit that did not happen") { try outcome.get() }
    }

    /// Bug: after SQLite rolled back the transaction of a `write`, the
    /// closure's next statements run in autocommit mode, each committed at
    /// once: they stay committed when the closure then throws. Correct: a
    /// write commits all of its closure's changes or none (GRDB throws
    /// SQLITE_ABORT for statements run in an aborted transaction).
    @Test(arguments: DatabaseKind.allCases, ImplicitRollback.allCases)
    func statementsAfterSQLiteRolledBackTheWriteAreNotCommittedWhenItThrows(
        kind: DatabaseKind, rollback: ImplicitRollback
    ) throws {
        let test = try rollback.makeDatabase(kind)
        #expect(throws: TestError(tag: 3)) {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                _ = try? db.execute(sql: rollback.failingSQL)
                _ = try? db.execute(sql: "INSERT INTO t VALUES (3)")
                throw TestError(tag: 3)
            }
        }
        #expect(try test.writer.read { db in try Self.ids(db) } == [1], "the write threw: none of its changes stay")
    }

    /// Bug: the same with `Database.inTransaction`: its body returns after
    /// SQLite rolled the transaction back, and it returns as if committed.
    /// Correct: it throws (SQLITE_ABORT).
    @Test(arguments: DatabaseKind.allCases)
    func inTransactionWhoseTransactionSQLiteRolledBackDoesNotReturnAsCommitted(kind: DatabaseKind) throws {
        let test = try ImplicitRollback.conflictRollback.makeDatabase(kind)
        let outcome = try test.writer.writeWithoutTransaction { db in
            Result {
                try db.inTransaction {
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    _ = try? db.execute(sql: ImplicitRollback.conflictRollback.failingSQL)
                }
            }
        }
        #expect(try test.writer.read { db in try Self.ids(db) } == [1], "row 2 was rolled back")
        #expect(throws: DatabaseError.self, "inTransaction reported a commit that did not happen") { try outcome.get() }
    }

    // MARK: - Transaction statements run by hand

    @Test(arguments: DatabaseKind.allCases)
    func transactionStatementsRunByHandInsideAWrite(kind: DatabaseKind) throws {
        let test = try kind.make(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let writer = test.writer
        // A COMMIT and a BEGIN by hand: the write commits the second transaction.
        try writer.write { db in
            try db.execute(sql: "INSERT INTO t VALUES (1); COMMIT; BEGIN IMMEDIATE; INSERT INTO t VALUES (2)")
        }
        #expect(try writer.read { db in try Self.ids(db) } == [1, 2])
        // Savepoints by hand: rolled back to, released, or left open.
        try writer.write { db in
            try db.execute(sql: "SAVEPOINT s; INSERT INTO t VALUES (3); ROLLBACK TO s; RELEASE s; INSERT INTO t VALUES (4)")
            try db.execute(sql: "SAVEPOINT open; INSERT INTO t VALUES (5)")
        }
        #expect(try writer.read { db in try Self.ids(db) } == [1, 2, 4, 5])
        // Errors that name the statement.
        let begin = databaseError { try writer.write { db in try db.execute(sql: "BEGIN") } }
        #expect(begin?.message == "cannot start a transaction within a transaction")
        #expect(begin?.sql == "BEGIN")
        let release = databaseError { try writer.write { db in try db.execute(sql: "RELEASE nope") } }
        #expect(release?.message == "no such savepoint: nope")
        let commit = databaseError { try writer.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") } }
        #expect(commit?.message == "cannot commit - no transaction is active")
        try writer.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
        #expect(try writer.read { db in try Self.ids(db) } == [1, 2, 4, 5])
    }

    /// A savepoint begun by hand in `writeWithoutTransaction` and left open
    /// is a transaction left open: rolled back, and SQLITE_MISUSE.
    @Test(arguments: DatabaseKind.allCases)
    func aSavepointLeftOpenInWriteWithoutTransactionIsRolledBackAndThrows(kind: DatabaseKind) throws {
        let test = try kind.make(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let error = databaseError {
            try test.writer.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO t VALUES (1); SAVEPOINT s; INSERT INTO t VALUES (2)")
            }
        }
        #expect(error?.resultCode == .SQLITE_MISUSE)
        #expect(try test.writer.read { db in try Self.ids(db) } == [1])
        try test.writer.writeSQL("INSERT INTO t VALUES (3)")
        #expect(try test.writer.read { db in try Self.ids(db) } == [1, 3])
    }

    /// A COMMIT refused for a deferred foreign key leaves the transaction
    /// open (SQLite's behaviour): fixed, it commits.
    @Test(arguments: DatabaseKind.allCases)
    func aCommitRefusedForADeferredForeignKeyLeavesTheTransactionOpenToFix(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parentID INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN; INSERT INTO child (parentID) VALUES (1)")
            let error = databaseError { try db.execute(sql: "COMMIT") }
            #expect(error?.extendedResultCode.rawValue == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
            #expect(error?.sql == "COMMIT")
            #expect(db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO parent (id) VALUES (1); COMMIT")
            #expect(!db.isInsideTransaction)
        }
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO child (parentID) VALUES (2)")
            #expect(databaseError { try db.execute(sql: "COMMIT") }?.extendedResultCode.rawValue == 787)
            try db.execute(sql: "INSERT INTO parent (id) VALUES (2)")
        }
        #expect(try test.writer.read { db in try Self.ids(db, "child") } == [1, 2])
    }

    /// A ROLLBACK by hand inside `inSavepoint` ends the whole transaction:
    /// the savepoint's release then fails, and the write throws.
    @Test(arguments: DatabaseKind.allCases)
    func aRollbackByHandInsideASavepointMakesTheWriteThrow(kind: DatabaseKind) throws {
        let test = try kind.make(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let error = databaseError {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                try db.inSavepoint { try db.execute(sql: "INSERT INTO t VALUES (2); ROLLBACK") }
            }
        }
        #expect(error?.resultCode == .SQLITE_ERROR, "\(String(describing: error))")
        #expect(try test.writer.read { db in try Self.ids(db) } == [])
        try test.writer.writeSQL("INSERT INTO t VALUES (3)")
        #expect(try test.writer.read { db in try Self.ids(db) } == [3])
    }

    // MARK: - Statements that fail

    /// Errors raised while a statement runs (not when it is compiled) name
    /// their SQL, and leave the connection usable.
    @Test(arguments: DatabaseKind.allCases)
    func statementsThatFailWhileTheyRunThrowTheirSQLAndMessage(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER);
            INSERT INTO t VALUES (1, 9223372036854775807), (2, 1);
            """)
        let failures: [(sql: String, code: ResultCode, message: String)] = [
            ("SELECT sum(n) FROM t", .SQLITE_ERROR, "integer overflow"),
            ("SELECT abs(-9223372036854775807 - 1)", .SQLITE_ERROR, "integer overflow"),
            ("SELECT json('{\"a\":')", .SQLITE_ERROR, "malformed JSON"),
            ("SELECT length(zeroblob(2000000000))", .SQLITE_TOOBIG, "string or blob too big"),
            ("SELECT load_extension('nope')", .SQLITE_ERROR, "not authorized"),
        ]
        for (sql, code, message) in failures {
            let error = databaseError { _ = try test.writer.read { db in try SQLRequest<Row>(sql: sql).fetchAll(db) } }
            #expect(error?.resultCode == code, "\(sql): \(String(describing: error))")
            #expect(error?.message == message, "\(sql)")
            #expect(error?.sql == sql)
            #expect(error?.description.contains(sql) == true)
            let writeError = databaseError { try test.writer.write { db in try db.execute(sql: sql) } }
            #expect(writeError?.resultCode == code, "\(sql): \(String(describing: writeError))")
            #expect(writeError?.sql == sql)
        }
        #expect(try test.writer.read { db in try Self.ids(db) } == [1, 2])
        try test.writer.writeSQL("INSERT INTO t VALUES (3, 0)")
        #expect(try test.writer.read { db in try Self.ids(db) } == [1, 2, 3])
    }

    /// RAISE(ABORT), a CHECK constraint and RAISE(FAIL) in the middle of a
    /// statement of a write: only that statement is undone (what RAISE(FAIL)
    /// kept before the failure stays), and the write goes on.
    @Test(arguments: DatabaseKind.allCases)
    func aStatementThatFailsMidwayInAWriteLeavesItsTransactionUsable(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE g (x CHECK (x > 0));
            CREATE TRIGGER guard BEFORE INSERT ON g WHEN NEW.x = 42 BEGIN SELECT RAISE(ABORT, 'forty-two is refused'); END;
            CREATE TABLE f (x);
            CREATE TRIGGER failer BEFORE INSERT ON f WHEN NEW.x = 42 BEGIN SELECT RAISE(FAIL, 'failed at forty-two'); END;
            """)
        func values(_ table: String) throws -> [Int] {
            try test.writer.read { db in try SQLRequest<Int>(sql: "SELECT x FROM \(table) ORDER BY rowid").fetchAll(db) }
        }
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO g VALUES (1)")
            let abort = databaseError { try db.execute(sql: "INSERT INTO g VALUES (2), (42), (3)") }
            #expect(abort?.extendedResultCode.rawValue == 1811)  // SQLITE_CONSTRAINT_TRIGGER
            #expect(abort?.message == "forty-two is refused")
            #expect(abort?.sql == "INSERT INTO g VALUES (2), (42), (3)")
            let check = databaseError { try db.execute(sql: "INSERT INTO g VALUES (4), (-1)") }
            #expect(check?.extendedResultCode.rawValue == 275)  // SQLITE_CONSTRAINT_CHECK
            #expect(check?.message?.hasPrefix("CHECK constraint failed") == true)
            let fail = databaseError { try db.execute(sql: "INSERT INTO f VALUES (1), (42), (2)") }
            #expect(fail?.extendedResultCode.rawValue == 1811)
            #expect(fail?.message == "failed at forty-two")
            #expect(db.isInsideTransaction)
        }
        #expect(try values("g") == [1])
        #expect(try values("f") == [1])
        // In several statements: those before the failing one ran, none after.
        try test.writer.writeWithoutTransaction { db in
            let error = databaseError {
                try db.execute(sql: "INSERT INTO g VALUES (5); INSERT INTO g VALUES (42); INSERT INTO g VALUES (6)")
            }
            #expect(error?.sql?.hasPrefix("INSERT INTO g VALUES (42)") == true, "\(String(describing: error?.sql))")
        }
        #expect(try values("g") == [1, 5])
    }

    /// SQL beyond SQLite's limits is refused with SQLite's message: deep
    /// expressions, deep parentheses, too many columns or parameters.
    @Test(arguments: DatabaseKind.allCases)
    func sqlBeyondSQLiteLimitsThrowsClearly(kind: DatabaseKind) throws {
        let test = try kind.make()
        let tooDeep = ["Expression tree is too large", "parser stack overflow"]
        let cases: [(sql: String, messages: [String])] = [
            ("SELECT " + String(repeating: "1 + ", count: 5000) + "1", tooDeep),
            ("SELECT " + String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000), tooDeep),
            ("SELECT " + String(repeating: "CASE WHEN 1 THEN ", count: 2000) + "1" + String(repeating: " END", count: 2000),
             tooDeep),
            ("SELECT " + (0..<3000).map { "\($0)" }.joined(separator: ", "), ["too many columns in result set"]),
            ("SELECT ?2147483647", ["variable number must be between ?1 and ?"]),
        ]
        try test.writer.write { db throws in
            for (sql, messages) in cases {
                let error = databaseError { _ = try SQLRequest<Row>(sql: sql).fetchAll(db) }
                let message = error?.message ?? ""
                #expect(messages.contains { message.contains($0) }, "\(message)")
                #expect(error?.sql == sql)
                let executeError = databaseError { try db.execute(sql: sql) }
                #expect(executeError?.message == error?.message)
            }
            // A megabyte of SQL that SQLite accepts.
            let values = (0..<150_000).map { "\($0)" }.joined(separator: ",")
            #expect(try SQLRequest<Int>(sql: "SELECT count(*) FROM json_each('[\(values)]')").fetchOne(db) == 150_000)
            #expect(try SQLRequest<Int>(sql: "SELECT 149999 IN (\(values))").fetchOne(db) == 1)
        }
    }

    /// SQL that holds no statement, or ends in an unterminated comment.
    @Test(arguments: DatabaseKind.allCases)
    func commentsAndEmptySQL(kind: DatabaseKind) throws {
        let test = try kind.make(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try test.writer.write { db throws in
            for sql in ["", "   ", "-- only a comment", "/* only a comment */", ";;;", "/* unterminated", "--"] {
                try db.execute(sql: sql)
                let error = databaseError { _ = try SQLRequest<Int>(sql: sql).fetchAll(db) }
                #expect(error?.resultCode == .SQLITE_MISUSE, "\(sql): \(String(describing: error))")
            }
            try db.execute(sql: "INSERT INTO t VALUES (1); /* unterminated")
            try db.execute(sql: "INSERT INTO t VALUES (2) -- trailing")
            #expect(try SQLRequest<Int>(sql: "SELECT count(*) FROM t /* unterminated").fetchOne(db) == 2)
            let unterminated = databaseError { try db.execute(sql: "INSERT INTO t VALUES ('3)") }
            #expect(unterminated?.message == "unrecognized token: \"'3)\"")
        }
        #expect(try test.writer.read { db in try Self.ids(db) } == [1, 2])
    }

    // MARK: - Tasks, pools and observations

    /// Async accesses of tasks cancelled while they wait all end; every
    /// write that returned is committed, and no other.
    @Test(arguments: DatabaseKind.allCases)
    func cancelledTasksAccessesEndAndOnlyTheirReturnedWritesAreCommitted(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let writer = test.writer
        let tasks = (0..<120).map { index in
            Task { () -> Bool in
                do {
                    if index % 3 == 0 {
                        _ = try await writer.read { db in try db.count("t") }
                        return false
                    }
                    try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [index]) }
                    return true
                } catch is CancellationError {
                    return false
                } catch {
                    Issue.record(error)
                    return false
                }
            }
        }
        for (index, task) in tasks.enumerated() where index % 2 == 0 { task.cancel() }
        var written = 0
        for task in tasks where await task.value { written += 1 }
        #expect(try await writer.read { db in try db.count("t") } == written)
    }

    /// Observations keep their pool alive: released by its owner while one
    /// runs, the pool closes (and removes its WAL) once it is cancelled.
    @Test func aPoolReleasedWhileAnObservationRunsClosesWhenTheObservationEnds() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        var pool: DatabasePool? = try DatabasePool(path: path)
        try pool?.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.tracking { db in try Self.ids(db) }.start(
            in: try #require(pool), scheduling: .observationQueue, onError: { Issue.record($0) },
            onChange: recorder.append)
        #expect(try await recorder.wait(for: 1) == [[1]])
        let reference = WeakReference(try #require(pool))
        pool = nil
        #expect(!reference.isReleased)
        cancellable.cancel()
        try await waitUntil { reference.isReleased }
        // The last connection closes on its queue, just after.
        try await waitUntil { !FileManager.default.fileExists(atPath: path + "-wal") }
        #expect(try synchronously { try DatabaseQueue(path: path).read { db in try Self.ids(db) } } == [1])
    }

    /// `Configuration.maximumReaderCount = 0` stopped the program in
    /// `DatabasePool.init` (ConnectionPool.init's fatalError). Correct: a
    /// thrown `DatabaseError` (SQLITE_MISUSE), as documented.
    @Test(arguments: [0, -1])
    func aPoolWithoutReadersThrowsInsteadOfTrapping(readerCount: Int) throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.maximumReaderCount = readerCount
        let error = databaseError { _ = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration) }
        #expect(error?.resultCode == .SQLITE_MISUSE, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: directory.path("db.sqlite")), "nothing was opened")
    }
}
