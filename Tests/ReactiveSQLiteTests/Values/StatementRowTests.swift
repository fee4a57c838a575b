import DatabaseTestSupport
import Dispatch
import Foundation
import Synchronization
import ReactiveSQLite
import TestSupport
import Testing

/// A record fetched by `fetchAll`, `fetchOne` or a cursor decodes from a row
/// that reads the statement in place, with typed reads for the standard
/// types: every read gives what the same read of a row of values gives,
/// value or `RowDecodingError`.
@Suite struct StatementRowTests {
    /// One value of each kind SQLite stores, and edge cases of conversions.
    static let values: [String] = [
        "NULL", "0", "1", "-7", "9223372036854775807", "-9223372036854775808",
        "1.0", "1.5", "-0.0", "1e300", "9.3e18", "'text'", "''", "'12'", "X'00FF'", "X''",
        "CAST(X'41FF42' AS TEXT)",
    ]

    static let sql = "SELECT " + values.enumerated().map { "\($1) AS c\($0)" }.joined(separator: ", ")
        + " FROM (SELECT 1 UNION ALL SELECT 2)"

    /// What each standard type, and its optional, decodes from a column.
    struct Reads: Equatable, CustomStringConvertible {
        var results: [String] = []
        var description: String { results.joined(separator: "\n") }

        init(row: Row) {
            func read<Value: DatabaseValueConvertible>(_ type: Value.Type, _ index: Int) -> String {
                do {
                    let value: Value = try row[index]
                    return "\(index) \(Value.self): \(String(reflecting: value))"
                } catch {
                    return "\(index) \(Value.self): \(error)"
                }
            }
            for index in 0..<row.count {
                results.append(read(Int64.self, index))
                results.append(read(Int.self, index))
                results.append(read(Double.self, index))
                results.append(read(String.self, index))
                results.append(read(Bool.self, index))
                results.append(read(Int64?.self, index))
                results.append(read(Int?.self, index))
                results.append(read(Double?.self, index))
                results.append(read(String?.self, index))
                results.append(read(Bool?.self, index))
                results.append(read(Int32.self, index))
                results.append(read(Data.self, index))
                results.append(read(DatabaseValue.self, index))
            }
            results.append(read(Int64.self, row.count))
            results.append(read(String?.self, -1))
        }
    }

    /// A record that reads every column as every standard type.
    struct Reader: FetchableRecord {
        var reads: Reads
        init(row: Row) throws { reads = Reads(row: row) }
    }

    @Test(arguments: DatabaseKind.allCases)
    func typedReadsGiveWhatRowsOfValuesGive(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db in
            let rows = try SQLRequest<Row>(sql: Self.sql).fetchAll(db)
            #expect(rows.count == 2)
            let expected = rows.map { Reads(row: $0) }
            // The expectations mean something: errors and values of each kind.
            #expect(expected[0].results.contains { $0.contains("could not decode Int64 from NULL") })
            #expect(expected[0].results.contains { $0.contains("could not decode Int from 1.5") })
            #expect(expected[0].results.contains { $0.hasPrefix("16 String: \"A\u{FFFD}B\"") })
            #expect(try SQLRequest<Reader>(sql: Self.sql).fetchAll(db).map(\.reads) == expected)
            #expect(try SQLRequest<Reader>(sql: Self.sql).fetchOne(db)?.reads == expected[0])
            var cursorReads: [Reads] = []
            try SQLRequest<Reader>(sql: Self.sql).fetchCursor(db).forEach { cursorReads.append($0.reads) }
            #expect(cursorReads == expected)
        }
    }

    /// A decoding error that holds the row it failed on.
    struct RowError: Error {
        var row: Row
    }

    /// A record that throws its row at the second row.
    struct Thrower: FetchableRecord, TableRecord {
        static let databaseTableName = "player"
        init(row: Row) throws {
            let id: Int64 = try row[0]
            if id == 2 { throw RowError(row: row) }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRowThrownByTheRecordKeepsItsValues(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
                INSERT INTO player VALUES (1, 'Arthur'), (2, 'Barbara'), (3, 'Craig');
                """)
        }
        let error = try #require(throws: RowError.self) {
            try test.writer.read { db in try Thrower.orderByPrimaryKey().fetchAll(db) }
        }
        #expect(error.row == Row(["id": 2, "name": "Barbara"]))
    }

    /// A record that keeps its row, read on another thread after the fetch.
    struct Keeper: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        var row: Row
        init(row: Row) throws { self.row = row }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aKeptRowReadsOnAnyThread(kind: DatabaseKind) async throws {
        let test = try kind.make()
        try await test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
                INSERT INTO player VALUES (1, 'Arthur'), (2, NULL);
                """)
        }
        let records = try await test.writer.read { db in try Keeper.orderByPrimaryKey().fetchAll(db) }
        let reads = await Task.detached {
            records.map { record -> String in
                let id: Int64? = try? record.row[0]
                let name: String? = try? record.row["name"]
                return "\(id.map(String.init) ?? "-") \(name ?? "nil")"
            }
        }.value
        #expect(reads == ["1 Arthur", "2 nil"])
    }

    /// A record that keeps its row and reads it on another thread at once,
    /// without waiting.
    final class SentRows: Sendable {
        let reads = LockedStrings()
    }

    struct Sender: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        static let sent = SentRows()
        static let group = DispatchGroup()
        var row: Row
        init(row: Row) throws {
            self.row = row
            Self.group.enter()
            DispatchQueue.global().async {
                Self.sent.reads.append(row.description)
                Self.group.leave()
            }
        }
    }

    /// Serialized: the records of the cases share `Sender.sent`.
    @Test(.serialized, arguments: DatabaseKind.allCases)
    func aKeptRowReadOnAnotherThreadAtOnceGivesItsValues(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT)")
            for id in 1...200 { try db.execute(sql: "INSERT INTO player VALUES (?, ?)", arguments: [id, "P\(id)"]) }
        }
        Sender.sent.reads.removeAll()
        let records = try test.writer.read { db in try Sender.orderByPrimaryKey().fetchAll(db) }
        Sender.group.wait()
        #expect(Sender.sent.reads.sorted() == records.map(\.row.description).sorted())
        #expect(records.map(\.row.description) == (1...200).map { "[id:\($0) name:'P\($0)']" })
    }
}

/// Strings appended from several threads.
///
/// Behind `Locked` (an `NSLock`, a pthread mutex, which the thread sanitizer
/// intercepts), not `Synchronization.Mutex`, whose futex-based lock the
/// sanitizer did not take for synchronization on Linux: it reported two
/// appends made under it as a race (a CI rehearsal, issue 29).
final class LockedStrings: Sendable {
    private let strings = Locked<[String]>([])
    func append(_ string: String) { strings.withLock { $0.append(string) } }
    func removeAll() { strings.withLock { $0.removeAll() } }
    func sorted() -> [String] { strings.withLock { $0.sorted() } }
}
