#if GRDB
// Built with the package trait GRDB only.
import Foundation
import GRDB
import Testing

/// The three kinds of GRDB database every test runs on: the pattern of
/// Tests/ReactiveSQLiteTests/Support/DatabaseKind.swift, with GRDB's
/// connections.
enum GRDBDatabaseKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemoryQueue
    case fileQueue
    case pool

    var testDescription: String { rawValue }

    /// A fresh database of this kind, set up with `sql`, deleted when the
    /// returned value is released.
    func make(sql: String = "") throws -> GRDBTestDatabase {
        let test = try GRDBTestDatabase(kind: self)
        if !sql.isEmpty {
            try test.writer.write { db in try db.execute(sql: sql) }
        }
        return test
    }
}

/// A GRDB database for one test: a writer, and for file databases their own
/// temporary directory, removed on release.
final class GRDBTestDatabase: Sendable {
    let writer: any DatabaseWriter
    /// The directory of the database file (nil in memory).
    let directory: URL?

    init(kind: GRDBDatabaseKind) throws {
        switch kind {
        case .inMemoryQueue:
            directory = nil
            writer = try DatabaseQueue()
        case .fileQueue, .pool:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("GRDBDifferencesTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            let path = directory.appendingPathComponent("db.sqlite").path
            writer = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        }
    }

    deinit {
        try? writer.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}

extension DatabaseWriter {
    /// Runs statements in one transaction, blocking.
    func writeSQL(_ sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try write { db in try db.execute(sql: sql, arguments: arguments) }
    }
}

#endif
