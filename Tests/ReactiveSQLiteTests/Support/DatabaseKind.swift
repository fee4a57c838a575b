import Foundation
import ReactiveSQLite
import Testing

/// The three kinds of database every database test runs on.
enum DatabaseKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemoryQueue
    case fileQueue
    case pool

    var testDescription: String { rawValue }

    /// A fresh, empty database of this kind, deleted when the returned value is released.
    func make(configuration: Configuration = Configuration()) throws -> TestDatabase {
        try TestDatabase(kind: self, configuration: configuration)
    }
}

/// A database for one test: a writer, and for file databases their own
/// temporary directory, removed on release.
final class TestDatabase: Sendable {
    let kind: DatabaseKind
    let writer: any DatabaseWriter
    /// The directory of the database file (nil in memory).
    let directory: URL?
    /// The path of the database file (nil in memory).
    var path: String? { directory?.appendingPathComponent("db.sqlite").path }

    init(kind: DatabaseKind, configuration: Configuration) throws {
        self.kind = kind
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
            writer = kind == .pool
                ? try DatabasePool(path: path, configuration: configuration)
                : try DatabaseQueue(path: path, configuration: configuration)
        }
    }

    deinit {
        writer.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}
