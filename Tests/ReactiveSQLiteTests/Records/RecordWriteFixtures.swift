import DatabaseTestSupport
import Foundation
import ReactiveSQLite

/// The schema and the records of the tests of records' writes: one table per
/// kind of primary key. Types are nested so that their names do not clash
/// with other tests' records.
enum RecordWriteFixtures {
    static let schemaSQL = """
        CREATE TABLE player (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL DEFAULT 0 CHECK (score >= 0));
        CREATE TABLE country (code TEXT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE membership (
            teamId INTEGER, playerId INTEGER, role TEXT NOT NULL, PRIMARY KEY (teamId, playerId));
        CREATE TABLE word (spelling TEXT, language TEXT, meaning TEXT, PRIMARY KEY (spelling, language)) WITHOUT ROWID;
        CREATE TABLE note (text TEXT NOT NULL, rank INTEGER);
        CREATE TABLE descending (id INTEGER PRIMARY KEY DESC, label TEXT);
        """

    /// An auto-incremented id, learned in `didInsert`.
    struct Player: Codable, FetchableRecord, MutablePersistableRecord, Equatable, Sendable, Identifiable {
        var id: Int64?
        var name: String
        var score: Int

        init(id: Int64? = nil, name: String, score: Int = 0) {
            self.id = id
            self.name = name
            self.score = score
        }

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }
    }

    /// A text primary key.
    struct Country: Codable, FetchableRecord, PersistableRecord, Equatable, Sendable {
        var code: String
        var name: String
    }

    /// A compound primary key, in a table with rowids.
    struct Membership: Codable, FetchableRecord, PersistableRecord, Equatable, Sendable {
        var teamId: Int64
        var playerId: Int64
        var role: String
    }

    /// A compound primary key, in a WITHOUT ROWID table.
    struct Word: Codable, FetchableRecord, PersistableRecord, Equatable, Sendable {
        var spelling: String
        var language: String
        var meaning: String?
    }

    /// A table without primary key: the record encodes the rowid.
    struct Note: Codable, FetchableRecord, MutablePersistableRecord, Equatable, Sendable {
        var rowid: Int64?
        var text: String
        var rank: Int?

        mutating func didInsert(_ inserted: InsertionSuccess) {
            rowid = inserted.rowID
        }
    }

    /// A table without primary key, and a record that does not encode the
    /// rowid: it can insert, not identify its row.
    struct AnonymousNote: Codable, FetchableRecord, PersistableRecord, Equatable, Sendable {
        static let databaseTableName = "note"
        var text: String
        var rank: Int?
    }

    /// `INTEGER PRIMARY KEY DESC`: a key that is not the rowid.
    struct Descending: Codable, FetchableRecord, PersistableRecord, Equatable, Sendable {
        var id: Int64
        var label: String?
    }

    /// A database of `kind` with the schema.
    static func makeDatabase(_ kind: DatabaseKind, configuration: Configuration = Configuration()) throws -> TestDatabase {
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in try db.execute(sql: schemaSQL) }
        return test
    }
}

/// The statements a connection runs, as `Database.trace` reports them.
final class StatementLog {
    private(set) var statements: [String] = []

    /// The statements that `body` runs on `db`.
    static func statements(in db: Database, _ body: () throws -> Void) throws -> [String] {
        let log = StatementLog()
        db.trace { log.statements.append($0.sql) }
        defer { db.trace(nil) }
        try body()
        return log.statements
    }
}
