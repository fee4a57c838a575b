import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

#if SQLCipher
/// Encrypted databases, with the `SQLCipher` trait: files written by the
/// `sqlcipher` shell, passphrases right and wrong, re-keying, and what the
/// engine does on SQLCipher's older SQLite.
@Suite(.timeLimit(.minutes(3)))
struct EncryptionTests {
    /// A temporary directory with a database created and encrypted by the
    /// `sqlcipher` shell: a `player` table with Arthur (1) and Barbara (2).
    final class ShellDatabase: Sendable {
        let directory: URL
        let path: String

        init(passphrase: String) throws {
            directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("EncryptionTests-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("db.sqlite").path
            let result = try Self.shell(
                path: path, passphrase: passphrase,
                sql: """
                    CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                    INSERT INTO player VALUES (1, 'Arthur'), (2, 'Barbara');
                    """)
            try #require(result.status == 0, "\(result.error)")
        }

        deinit {
            try? FileManager.default.removeItem(at: directory)
        }

        /// Runs `sql` in the `sqlcipher` shell after `PRAGMA key`, all on
        /// standard input (no passphrase among the arguments).
        static func shell(path: String, passphrase: String, sql: String) throws -> (
            status: Int32, output: String, error: String
        ) {
            let escaped = passphrase.replacingOccurrences(of: "'", with: "''")
            let outcome = try SpawnedProcess.runBlocking(
                "/usr/bin/sqlcipher", ["-bail", path], input: "PRAGMA key = '\(escaped)';\n\(sql)\n")
            guard case .exit(let status) = outcome.termination else {
                return (-1, outcome.output, outcome.error + "\n(sqlcipher \(outcome.termination))")
            }
            return (status, outcome.output, outcome.error)
        }

        func shell(passphrase: String, sql: String) throws -> (status: Int32, output: String, error: String) {
            try Self.shell(path: path, passphrase: passphrase, sql: sql)
        }
    }

    enum WriterKind: String, CaseIterable, CustomTestStringConvertible {
        case queue, pool
        var testDescription: String { rawValue }

        func open(_ path: String, passphrase: String?, configuration: Configuration = Configuration()) throws
            -> any DatabaseWriter
        {
            var configuration = configuration
            if let passphrase {
                configuration.prepareDatabase = { db in try db.usePassphrase(passphrase) }
            }
            switch self {
            case .queue: return try DatabaseQueue(path: path, configuration: configuration)
            case .pool: return try DatabasePool(path: path, configuration: configuration)
            }
        }
    }

    static let names = SQLRequest<String>(sql: "SELECT name FROM player ORDER BY id")

    @Test(arguments: WriterKind.allCases)
    func aDatabaseEncryptedByTheShellOpensWithItsPassphrase(kind: WriterKind) throws {
        let database = try ShellDatabase(passphrase: "secret")
        // The file is encrypted: no plain SQLite header.
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: database.path)).readData(ofLength: 16)
        #expect(header != Data("SQLite format 3\0".utf8))

        let writer = try kind.open(database.path, passphrase: "secret")
        defer { writer.close() }
        #expect(try writer.read { try Self.names.fetchAll($0) } == ["Arthur", "Barbara"])
        try writer.write { db in try db.execute(sql: "INSERT INTO player VALUES (3, 'Craig')") }
        #expect(try writer.read { try Self.names.fetchAll($0) } == ["Arthur", "Barbara", "Craig"])
    }

    @Test(arguments: WriterKind.allCases)
    func aWrongPassphraseFailsTheOpen(kind: WriterKind) throws {
        let database = try ShellDatabase(passphrase: "secret")
        for passphrase in ["wrong", nil] as [String?] {
            let error = #expect(throws: DatabaseError.self) {
                try kind.open(database.path, passphrase: passphrase)
            }
            #expect(error?.resultCode == .SQLITE_NOTADB)
            #expect(error?.message?.contains("not a database") == true, "\(String(describing: error))")
        }
        // The file is intact.
        #expect(try database.shell(passphrase: "secret", sql: "SELECT count(*) FROM player;").output == "2\n")
    }

    @Test func changePassphraseReKeysTheFile() throws {
        let database = try ShellDatabase(passphrase: "old secret")
        do {
            let queue = try WriterKind.queue.open(database.path, passphrase: "old secret")
            defer { queue.close() }
            try queue.writeWithoutTransaction { db in try db.changePassphrase("new secret") }
            // The connection goes on with the new key.
            #expect(try queue.read { try Self.names.fetchAll($0) } == ["Arthur", "Barbara"])
        }
        let withNew = try database.shell(passphrase: "new secret", sql: "SELECT name FROM player ORDER BY id;")
        #expect(withNew.status == 0)
        #expect(withNew.output == "Arthur\nBarbara\n")
        let withOld = try database.shell(passphrase: "old secret", sql: "SELECT name FROM player ORDER BY id;")
        #expect(withOld.status != 0)
        #expect(withOld.output.isEmpty)
        #expect(throws: DatabaseError.self) { try WriterKind.queue.open(database.path, passphrase: "old secret") }
        let queue = try WriterKind.queue.open(database.path, passphrase: "new secret")
        defer { queue.close() }
        #expect(try queue.read { try Self.names.fetchAll($0) } == ["Arthur", "Barbara"])
    }

    @Test func changePassphraseRefusesAnOpenTransaction() throws {
        let database = try ShellDatabase(passphrase: "secret")
        let queue = try WriterKind.queue.open(database.path, passphrase: "secret")
        defer { queue.close() }
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.changePassphrase("other") }
        }
        #expect(error?.resultCode == .SQLITE_MISUSE)
        #expect(try queue.read { try Self.names.fetchAll($0) } == ["Arthur", "Barbara"])
    }

    /// A pool's readers, and the connection that watches external changes,
    /// would keep reading with the old key: refused, and the file keeps it.
    @Test(arguments: [WriterKind.pool, .queue])
    func changePassphraseRefusesConnectionsOthersShareTheKeyWith(kind: WriterKind) throws {
        let database = try ShellDatabase(passphrase: "secret")
        var configuration = Configuration()
        configuration.observesExternalChanges = kind == .queue
        let writer = try kind.open(database.path, passphrase: "secret", configuration: configuration)
        defer { writer.close() }
        let error = #expect(throws: DatabaseError.self) {
            try writer.writeWithoutTransaction { db in try db.changePassphrase("other") }
        }
        #expect(error?.resultCode == .SQLITE_MISUSE)
        #expect(error?.message?.contains("DatabaseQueue that does not observe external changes") == true)
        #expect(try writer.read { try Self.names.fetchAll($0) } == ["Arthur", "Barbara"])
        #expect(try database.shell(passphrase: "secret", sql: "SELECT count(*) FROM player;").output == "2\n")
    }

    @Test func aNewFileIsCreatedEncrypted() throws {
        let test = try DatabaseKind.fileQueue.make(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (42)")
        let path = try #require(test.path)
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)).readData(ofLength: 16)
        // The test databases themselves: encrypted, so that every suite run
        // with the trait runs on encrypted files.
        #expect(header != Data("SQLite format 3\0".utf8))
        let result = try ShellDatabase.shell(path: path, passphrase: TestDatabase.passphrase, sql: "SELECT a FROM t;")
        #expect(result.output == "42\n")
    }

    /// Observations on a queue and a pool see the commits of the `sqlcipher`
    /// shell (external changes) and their own.
    @Test(arguments: WriterKind.allCases)
    func observationsSeeExternalChangesOfAnEncryptedFile(kind: WriterKind) async throws {
        let database = try ShellDatabase(passphrase: "secret")
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.externalChangePollInterval = .milliseconds(20)
        let writer = try kind.open(database.path, passphrase: "secret", configuration: configuration)
        defer { writer.close() }
        let recorder = Recorder<[String]>()
        let cancellable = ValueObservation.trackingAll(Self.names).removeDuplicates()
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        let result = try database.shell(passphrase: "secret", sql: "INSERT INTO player VALUES (3, 'Craig');")
        try #require(result.status == 0, "\(result.error)")
        try await recorder.wait(forLast: ["Arthur", "Barbara", "Craig"])
        try await writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id = 1") }
        try await recorder.wait(forLast: ["Barbara", "Craig"])
    }

    // MARK: - SQLCipher's older SQLite

    /// The version of the SQLite inside SQLCipher (3.15.2 in Debian's 3.4.1).
    static func sqliteVersionNumber() throws -> Int {
        let queue = try DatabaseQueue()
        let version = try queue.read { try SQLRequest<String>(sql: "SELECT sqlite_version()").fetchOne($0) } ?? ""
        let parts = version.split(separator: ".").compactMap { Int($0) } + [0, 0, 0]
        return parts[0] * 1_000_000 + parts[1] * 1000 + parts[2]
    }

    struct Player: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "player"
        var id: Int64?
        var name: String
        var score: Int
    }

    @Test(arguments: DatabaseKind.allCases)
    func recordsInsertAndFetchWithoutReturning(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE pair (a TEXT, b TEXT, n INTEGER DEFAULT 7, PRIMARY KEY (a, b)) WITHOUT ROWID;
            """)
        try test.writer.write { db in
            let inserted = try Player(id: nil, name: "Arthur", score: 10).insertAndFetch(db)
            #expect(inserted == Player(id: 1, name: "Arthur", score: 10))
            #expect(try db.primaryKeyColumns(ofTable: "pair") == ["a", "b"])
            try db.execute(sql: "INSERT INTO pair (a, b) VALUES ('x', 'y')")
            #expect(try SQLRequest<Int>(sql: "SELECT n FROM pair").fetchOne(db) == 7)
        }
    }

    @Test func upsertNeedsSQLite3_24() throws {
        let test = try DatabaseKind.fileQueue.make(sql: """
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
            """)
        try test.writer.write { db in
            if try Self.sqliteVersionNumber() >= 3_024_000 {
                try Player(id: 1, name: "Arthur", score: 10).upsert(db)
            } else {
                let error = #expect(throws: DatabaseError.self) {
                    try Player(id: 1, name: "Arthur", score: 10).upsert(db)
                }
                #expect(error?.message?.contains("needs SQLite 3.24 or later") == true)
            }
        }
    }

    /// Without the pre-update hook, `.automatic` takes the update-hook path:
    /// an update that changes nothing still counts as a change.
    @Test(arguments: DatabaseKind.allCases)
    func changeTrackingFallsBackToTheUpdateHook(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a); INSERT INTO t VALUES (1, 'x')")
        let recorder = Recorder<[String]>()
        let cancellable = ValueObservation.trackingAll(SQLRequest<String>(sql: "SELECT a FROM t"))
            .start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try test.writer.writeSQL("UPDATE t SET a = 'y'")
        #expect(try await recorder.wait(for: 2) == [["x"], ["y"]])
    }
}
#else
/// Without the `SQLCipher` trait, the passphrase methods say what is missing.
@Suite struct EncryptionUnavailableTests {
    @Test func passphrasesNeedTheSQLCipherTrait() throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.usePassphrase("secret") }
        let error = #expect(throws: DatabaseError.self) { try DatabaseQueue(configuration: configuration) }
        #expect(error?.resultCode == .SQLITE_MISUSE)
        #expect(error?.message?.contains("SQLCipher") == true)

        let queue = try DatabaseQueue()
        let rekeyError = #expect(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in try db.changePassphrase("secret") }
        }
        #expect(rekeyError?.resultCode == .SQLITE_MISUSE)
        #expect(rekeyError?.message?.contains("SQLCipher") == true)
    }
}
#endif
