import Foundation
import ReactiveSQLite
import Testing

/// The three kinds of database every database test runs on.
public enum DatabaseKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemoryQueue
    case fileQueue
    case pool

    public var testDescription: String { rawValue }

    /// A fresh, empty database of this kind, deleted when the returned value is released.
    public func make(configuration: Configuration = Configuration()) throws -> TestDatabase {
        try TestDatabase(kind: self, configuration: configuration)
    }

    /// A fresh database of this kind, set up with `sql`, deleted when the
    /// returned value is released.
    public func make(configuration: Configuration = Configuration(), sql: String) throws -> TestDatabase {
        let test = try make(configuration: configuration)
        if !sql.isEmpty {
            try test.writer.write { db in try db.execute(sql: sql) }
        }
        return test
    }

    /// A fresh database of this kind, tracking changes with `changeTracking`,
    /// set up with `sql`.
    public func make(changeTracking: Configuration.ChangeTracking, sql: String) throws -> TestDatabase {
        var configuration = Configuration()
        configuration.changeTracking = changeTracking
        return try make(configuration: configuration, sql: sql)
    }
}

/// A database for one test: a writer, and for file databases their own
/// temporary directory, removed on release.
public final class TestDatabase: Sendable {
    public let kind: DatabaseKind
    public let writer: any DatabaseWriter
    /// The directory of the database file (nil in memory).
    public let directory: URL?
    /// The path of the database file (nil in memory).
    public var path: String? { directory?.appendingPathComponent("db.sqlite").path }

    init(kind: DatabaseKind, configuration: Configuration) throws {
        self.kind = kind
        #if SQLCipher
        // Built with the SQLCipher trait, every file database of the tests
        // is encrypted: the suites that CI runs with the trait check that
        // everything works on encrypted databases.
        let configuration = kind == .inMemoryQueue ? configuration : TestDatabase.encrypted(configuration)
        #endif
        switch kind {
        case .inMemoryQueue:
            directory = nil
            writer = try DatabaseQueue(configuration: configuration)
        case .fileQueue, .pool:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("ReactiveSQLiteTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            let path = directory.appendingPathComponent("db.sqlite").path
            do {
                writer = kind == .pool
                    ? try DatabasePool(path: path, configuration: configuration)
                    : try DatabaseQueue(path: path, configuration: configuration)
            } catch {
                // No instance, so no `deinit`: the tests that expect the
                // opening to fail would leave their directory behind.
                try? FileManager.default.removeItem(at: directory)
                throw error
            }
        }
    }

    #if SQLCipher
    /// The passphrase of the file databases of the tests, with the SQLCipher trait.
    public static let passphrase = "correct horse battery staple"

    /// `configuration`, with a `prepareDatabase` that sets `passphrase`
    /// first, then runs the configuration's own.
    public static func encrypted(_ configuration: Configuration) -> Configuration {
        var configuration = configuration
        let prepareDatabase = configuration.prepareDatabase
        configuration.prepareDatabase = { db in
            try db.usePassphrase(passphrase)
            try prepareDatabase?(db)
        }
        return configuration
    }
    #endif

    deinit {
        writer.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}

extension TestDatabase {
    /// A `DatabasePool` in WAL mode whose pages have `pageSize` bytes (small
    /// pages: deep b-trees and overflow pages from few rows), with
    /// `auto_vacuum = FULL` or not, where `sql` then runs, outside of any
    /// transaction.
    /// A database file in rollback mode (SQLite's default `DELETE`
    /// journal) with pages of `pageSize` bytes, set up with `sql`, opened
    /// by a `DatabaseQueue`.
    public static func rollbackQueue(pageSize: Int, sql: String) throws -> TestDatabase {
        let test = try DatabaseKind.fileQueue.make(sql: "SELECT 1")
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = \(pageSize); VACUUM")
            try db.execute(sql: sql)
        }
        return test
    }

    public static func walPool(pageSize: Int, autoVacuum: Bool = false, sql: String) throws -> TestDatabase {
        let test = try DatabaseKind.pool.make(sql: "SELECT 1")
        try test.writer.writeWithoutTransaction { db in
            // The page size of a WAL database changes only out of WAL mode.
            try db.execute(sql: """
                PRAGMA journal_mode = DELETE; PRAGMA page_size = \(pageSize);
                PRAGMA auto_vacuum = \(autoVacuum ? "FULL" : "NONE"); VACUUM; PRAGMA journal_mode = WAL
                """)
            try db.execute(sql: sql)
        }
        return test
    }
}

extension DatabaseWriter {
    /// Runs several statements in one transaction, blocking.
    public func writeSQL(_ sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// Runs statements outside of any transaction: the SQL handles transactions itself.
    public func writeSQLWithoutTransaction(_ sql: String) throws {
        try writeWithoutTransaction { db in try db.execute(sql: sql) }
    }
}

extension Configuration.ChangeTracking {
    /// Whether the library in use has SQLite's pre-update hook (Debian's
    /// libsqlite3 has it; SQLCipher 3.4.1 has not).
    public static let libraryHasPreUpdateHook: Bool = {
        guard let queue = try? DatabaseQueue() else { return false }
        let used = try? queue.read { db in
            try SQLRequest<Bool>(sql: "SELECT sqlite_compileoption_used('ENABLE_PREUPDATE_HOOK')").fetchOne(db)
        }
        return used == true
    }()

    /// Whether a connection with this setting tracks changes with the
    /// pre-update hook: `.automatic`, where the library has the hook.
    public var usesPreUpdateHook: Bool {
        self == .automatic && Self.libraryHasPreUpdateHook
    }
}
