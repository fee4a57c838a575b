import Foundation
import ReactiveSQLite
import Testing
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

// A copy of the minimum of Tests/ReactiveSQLiteTests/Support/DatabaseKind.swift
// (test targets cannot share it): the three kinds of database every
// database test runs on.

/// The three kinds of database every database test runs on.
enum DatabaseKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemoryQueue
    case fileQueue
    case pool

    var testDescription: String { rawValue }

    /// A fresh database of this kind, set up with `sql`, deleted when the
    /// returned value is released.
    func make(sql: String = "") throws -> TestDatabase {
        let test = try TestDatabase(kind: self)
        if !sql.isEmpty {
            try test.writer.write { db in try db.execute(sql: sql) }
        }
        return test
    }
}

/// A database for one test: a writer, and for file databases their own
/// temporary directory, removed on release.
final class TestDatabase: Sendable {
    let kind: DatabaseKind
    let writer: any DatabaseWriter
    /// The directory of the database file (nil in memory).
    let directory: URL?

    init(kind: DatabaseKind) throws {
        self.kind = kind
        switch kind {
        case .inMemoryQueue:
            directory = nil
            writer = try DatabaseQueue()
        case .fileQueue, .pool:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("ReactiveSQLiteCombineTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            let path = directory.appendingPathComponent("db.sqlite").path
            writer = kind == .pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        }
    }

    deinit {
        writer.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}

extension DatabaseWriter {
    /// Runs statements in one transaction, blocking.
    func writeSQL(_ sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// Runs statements outside of any transaction: the SQL handles transactions itself.
    func writeSQLWithoutTransaction(_ sql: String) throws {
        try writeWithoutTransaction { db in try db.execute(sql: sql) }
    }
}
