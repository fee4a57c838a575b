import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// The records of a set difference decode from the values the observation
/// keeps, not from the statement: every typed read gives what the same
/// read of a freshly fetched row gives, whatever the storage class.
@Suite struct SetDifferenceDecodingTests {
    /// Reads each column of `v(id, a, b, c)` as every standard type, and
    /// keeps its row.
    struct Reads: FetchableRecord, TableRecord, Sendable, Equatable {
        static let databaseTableName = "v"
        var id: Int64
        /// Per column: what each typed read gave, or `error`.
        var reads: [String]
        var values: [DatabaseValue]
        var row: Row

        init(row: Row) throws {
            id = try row[0]
            reads = []
            for index in 1..<row.count {
                func read<Value: DatabaseValueConvertible>(_: Value.Type) -> String {
                    (try? row[index] as Value).map { "\($0)" } ?? "error"
                }
                reads += [
                    read(Int64.self), read(Int.self), read(Double.self), read(Bool.self), read(String.self),
                    read(Int64?.self), read(Int?.self), read(Double?.self), read(Bool?.self), read(String?.self),
                    read(Data.self), read(DatabaseValue.self),
                ]
            }
            values = row.databaseValues
            self.row = row
        }
    }

    /// Values of every storage class: integers and reals that compare
    /// equal, reals that are no integer, texts (invalid UTF-8 too), blobs,
    /// NULL.
    static func randomValue(using generator: inout SplitMix64) -> DatabaseValue {
        switch Int.random(in: 0..<8, using: &generator) {
        case 0: DatabaseValue(storage: .integer(Int64.random(in: -3...3, using: &generator)))
        case 1: DatabaseValue(storage: .real(Double(Int.random(in: -3...3, using: &generator))))
        case 2: DatabaseValue(storage: .real([0.5, -2.25, 1e300][Int.random(in: 0..<3, using: &generator)]))
        case 3: DatabaseValue(storage: .integer([Int64.max, Int64.min][Int.random(in: 0..<2, using: &generator)]))
        case 4: DatabaseValue(storage: .text(["", "a", "Player 7", "1", "é"][Int.random(in: 0..<5, using: &generator)]))
        case 5: DatabaseValue(textBytes: [[0x63, 0x61, 0x66, 0xE9], [0xF0, 0x9F, 0x98], [0xFF]][Int.random(in: 0..<3, using: &generator)])
        case 6: DatabaseValue(storage: .blob(Data((0..<Int.random(in: 0...3, using: &generator)).map { UInt8($0) })))
        default: .null
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func recordsOfTheFirstDifferenceAreTheRecordsOfAFetch(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: "CREATE TABLE v(id INTEGER PRIMARY KEY, a, b, c)")
        var generator = SplitMix64(seed: 1616)
        let rows = (1...300).map { id in
            let values: [(any DatabaseValueConvertible)?] = (0..<3).map { _ in Self.randomValue(using: &generator) }
            return StatementArguments([id] + values)
        }
        try await test.writer.write { db in
            for arguments in rows { try db.execute(sql: "INSERT INTO v VALUES (?, ?, ?, ?)", arguments: arguments) }
        }
        let recorder = Recorder<SetDifference<Reads>>()
        let cancellable = ValueObservation.trackingSetDifferences(Reads.orderByPrimaryKey())
            .start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        let first = try #require(try await recorder.wait(for: 1).first)
        let fetched = try await test.writer.read { db in try Reads.orderByPrimaryKey().fetchAll(db) }
        #expect(first.inserted.count == 300 && first.updated.isEmpty && first.deleted.isEmpty)
        #expect(first.inserted.map(\.id) == fetched.map(\.id))
        for (observed, fresh) in zip(first.inserted, fetched) where observed != fresh {
            Issue.record("row \(fresh.id): observed \(observed.reads) \(observed.values), fetched \(fresh.reads) \(fresh.values)")
        }
        // Kept rows hold their own values, after the rows they were read from moved on.
        #expect(first.inserted.map(\.row.databaseValues) == fetched.map(\.values))
    }

    /// A row that does not decode, among rows that do (whose records keep
    /// their rows), ends the observation with its decoding error.
    @Test(arguments: DatabaseKind.allCases)
    func aRowThatDoesNotDecodeEndsTheObservationBeforeTheFirstDifference(kind: DatabaseKind) async throws {
        struct Strict: FetchableRecord, TableRecord, Sendable {
            static let databaseTableName = "v"
            var row: Row
            var a: Int64
            init(row: Row) throws {
                self.row = row
                a = try row[1]
            }
        }
        let test = try kind.make(sql: """
            CREATE TABLE v(id INTEGER PRIMARY KEY, a, b, c);
            INSERT INTO v VALUES (1, 1, 2, 3), (2, 2, 2, 3), (3, 'x', 2, 3), (4, 4, 2, 3);
            """)
        let error = try await firstError(of: ValueObservation.trackingSetDifferences(Strict.orderByPrimaryKey()), in: test.writer)
        #expect(error is RowDecodingError)
    }
}
