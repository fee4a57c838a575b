#if GRDB
// Built with the package trait GRDB only.
import Differences
import Foundation
import GRDB
import GRDBDifferences
import TestSupport
import Testing

/// `trackingSetDifferences` identifies records by the primary key of their
/// table, read from the schema, in SQLite's BINARY order on raw values.
@Suite struct TrackingSetDifferencesKeyTests {
    /// A record of any table: its raw row, as "column=value" pairs in
    /// column order (the key columns included). Requests of it name their
    /// table (`Table<AnyRecord>("big").all()`), which the observation reads.
    struct AnyRecord: FetchableRecord, TableRecord, Sendable, CustomStringConvertible {
        static let databaseTableName = "unused"
        var values: [String]

        init(row: Row) {
            values = row.map { name, value in "\(name)=\(value)" }
        }

        var description: String { values.joined(separator: " ") }
    }

    struct Membership: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "membership"
        var teamID: Int64
        var playerID: Int64
        var role: String

        init(row: Row) {
            teamID = row["teamID"]
            playerID = row["playerID"]
            role = row["role"]
        }

        var label: String { "\(teamID)/\(playerID) \(role)" }
    }

    struct Tag: FetchableRecord, PersistableRecord, Sendable {
        static let databaseTableName = "tag"
        var name: String
        var count: Int

        init(name: String, count: Int) {
            self.name = name
            self.count = count
        }

        init(row: Row) {
            name = row["name"]
            count = row["count"]
        }

        func encode(to container: inout PersistenceContainer) {
            container["name"] = name
            container["count"] = count
        }

        var label: String { "\(name) \(count)" }
    }

    struct Note: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "note"
        var rowID: Int64
        var text: String

        init(row: Row) {
            rowID = row["rowid"]
            text = row["text"]
        }

        var label: String { "\(rowID) \(text)" }
    }

    /// Starts `observation`, runs each step in a transaction, waits for one
    /// difference after each step but the `silent` ones, and returns the
    /// differences as labels.
    ///
    /// - Parameter notifiedTable: A table whose changes GRDB does not see (a
    ///   WITHOUT ROWID table): each step tells GRDB it changed.
    static func differences<Record: Sendable>(
        kind: GRDBDatabaseKind,
        schema: String,
        of observation: ValueObservation<DifferencesReducer<ValueReducers.Fetch<TrackedRows>, SetDifference<Record>>>,
        steps: [String],
        silent: Set<Int> = [],
        notifiedTable: String? = nil,
        label: @escaping (Record) -> String
    ) async throws -> [DifferenceSummary] {
        let test = try kind.make(sql: schema)
        let recorder = Recorder<SetDifference<Record>>()
        let cancellable = observation.record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }
        var expectedCount = 1
        try await recorder.wait(for: expectedCount)
        for (index, step) in steps.enumerated() {
            try await test.writer.write { db in
                try db.execute(sql: step)
                if let notifiedTable { try db.notifyChanges(in: Table(notifiedTable)) }
            }
            if !silent.contains(index) {
                expectedCount += 1
                try await recorder.wait(for: expectedCount)
            }
        }
        return recorder.values.map { difference in
            DifferenceSummary(
                inserted: difference.inserted.map(label), updated: difference.updated.map(label),
                deleted: difference.deleted.map(label))
        }
    }

    @Test(arguments: GRDBDatabaseKind.allCases)
    func compoundPrimaryKeys(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: """
                CREATE TABLE membership (
                    teamID INTEGER NOT NULL, playerID INTEGER NOT NULL, role TEXT NOT NULL,
                    PRIMARY KEY (teamID, playerID));
                INSERT INTO membership VALUES (2, 1, 'coach'), (1, 2, 'captain'), (1, 1, 'player');
                """,
            of: ValueObservation.trackingSetDifferences(Membership.all()),
            steps: [
                "UPDATE membership SET role = 'player' WHERE teamID = 1 AND playerID = 2",
                "DELETE FROM membership WHERE teamID = 2; INSERT INTO membership VALUES (1, 3, 'rookie')",
                // Same playerID, other team: another key.
                "UPDATE membership SET teamID = 3 WHERE playerID = 3",
            ],
            label: \.label)
        #expect(differences == [
            DifferenceSummary(inserted: ["1/1 player", "1/2 captain", "2/1 coach"]),
            DifferenceSummary(updated: ["1/2 player"]),
            DifferenceSummary(inserted: ["1/3 rookie"], deleted: ["2/1 coach"]),
            DifferenceSummary(inserted: ["3/3 rookie"], deleted: ["1/3 rookie"]),
        ])
    }

    /// The request orders rows by the key's NOCASE collation (a, B, C, d);
    /// differences are in BINARY order (B, C, a, d), the order of the raw
    /// values, and still pair each row with its previous version.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func textPrimaryKeysDeclaredCollateNocase(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: """
                CREATE TABLE tag (name TEXT NOT NULL COLLATE NOCASE PRIMARY KEY, count INTEGER NOT NULL);
                INSERT INTO tag VALUES ('a', 1), ('B', 1);
                """,
            of: ValueObservation.trackingSetDifferences(Tag.orderByPrimaryKey()),
            steps: [
                "UPDATE tag SET count = 2 WHERE name = 'a'",
                "INSERT INTO tag VALUES ('d', 1), ('C', 1)",
                "DELETE FROM tag WHERE name = 'b'; UPDATE tag SET count = 2 WHERE name = 'D'",
                // The same row under NOCASE, another raw key: a deletion and an insertion.
                "UPDATE tag SET name = 'A' WHERE name = 'a'",
            ],
            label: \.label)
        #expect(differences == [
            DifferenceSummary(inserted: ["B 1", "a 1"]),
            DifferenceSummary(updated: ["a 2"]),
            DifferenceSummary(inserted: ["C 1", "d 1"]),
            DifferenceSummary(updated: ["d 2"], deleted: ["B 1"]),
            DifferenceSummary(inserted: ["A 2"], deleted: ["a 2"]),
        ])
    }

    /// "é" precomposed and decomposed are equal Swift strings, and two keys
    /// for SQLite.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func canonicallyEquivalentTextKeysAreDistinct(kind: GRDBDatabaseKind) async throws {
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        let differences = try await Self.differences(
            kind: kind,
            schema: "CREATE TABLE tag (name TEXT NOT NULL PRIMARY KEY, count INTEGER NOT NULL)",
            of: ValueObservation.trackingSetDifferences(Tag.all()),
            steps: [
                "INSERT INTO tag VALUES ('\(precomposed)', 1), ('\(decomposed)', 2)",
                "UPDATE tag SET count = 3 WHERE name = '\(decomposed)'",
                "DELETE FROM tag WHERE name = '\(precomposed)'",
            ],
            label: { "\($0.name.unicodeScalars.count) \($0.count)" })
        #expect(differences == [
            DifferenceSummary(),
            DifferenceSummary(inserted: ["5 2", "4 1"]),  // "e" + U+0301 sorts before U+00E9
            DifferenceSummary(updated: ["5 3"]),
            DifferenceSummary(deleted: ["4 1"]),
        ])
    }

    /// 2^53 and 2^53 + 1 are the same Double, and two integer keys.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func integerKeysAbove2To53AreDistinct(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: "CREATE TABLE big (id INTEGER PRIMARY KEY, value TEXT)",
            of: ValueObservation.trackingSetDifferences(Table<AnyRecord>("big").all()),
            steps: [
                "INSERT INTO big VALUES (9007199254740993, 'b'), (9007199254740992, 'a')",
                "UPDATE big SET value = 'c' WHERE id = 9007199254740993",
            ],
            label: \.description)
        #expect(differences == [
            DifferenceSummary(),
            DifferenceSummary(inserted: ["id=9007199254740992 value=\"a\"", "id=9007199254740993 value=\"b\""]),
            DifferenceSummary(updated: ["id=9007199254740993 value=\"c\""]),
        ])
    }

    /// A key column without type affinity holds any storage class: NULL,
    /// then numbers (compared exactly), then texts, then blobs.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func keysOfEveryStorageClassAreInSQLiteOrder(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: "CREATE TABLE mixed (k PRIMARY KEY, v INTEGER)",
            of: ValueObservation.trackingSetDifferences(Table<AnyRecord>("mixed").all()),
            steps: [
                "INSERT INTO mixed VALUES (x'01', 1), ('b', 2), ('a', 3), (2, 4), (1.5, 5), (NULL, 6)",
                "UPDATE mixed SET v = 0 WHERE k = 1.5 OR k = x'01'",
            ],
            label: \.description)
        #expect(differences == [
            DifferenceSummary(),
            DifferenceSummary(inserted: [
                "k=NULL v=6", "k=1.5 v=5", "k=2 v=4", "k=\"a\" v=3", "k=\"b\" v=2", "k=Data(1 bytes) v=1",
            ]),
            DifferenceSummary(updated: ["k=1.5 v=0", "k=Data(1 bytes) v=0"]),
        ])
    }

    /// GRDB does not see the changes of WITHOUT ROWID tables (its
    /// documentation says so, and suggests `notifyChanges(in:)`): the keys
    /// of such tables work all the same.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func withoutRowIDTables(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: """
                CREATE TABLE tag (name TEXT NOT NULL PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO tag VALUES ('x', 1);
                """,
            of: ValueObservation.trackingSetDifferences(Tag.all()),
            steps: [
                "INSERT INTO tag VALUES ('y', 1)",
                "UPDATE tag SET count = 2 WHERE name = 'x'",
                "DELETE FROM tag WHERE name = 'y'",
            ],
            notifiedTable: "tag",
            label: \.label)
        #expect(differences == [
            DifferenceSummary(inserted: ["x 1"]),
            DifferenceSummary(inserted: ["y 1"]),
            DifferenceSummary(updated: ["x 2"]),
            DifferenceSummary(deleted: ["y 1"]),
        ])
    }

    /// Rows of a table without primary key are identified by their rowid,
    /// which the observation adds to the selection: equal rows are distinct.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func tablesWithoutPrimaryKeyAreKeyedByRowID(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: "CREATE TABLE note (text TEXT NOT NULL); INSERT INTO note (rowid, text) VALUES (5, 'x')",
            of: ValueObservation.trackingSetDifferences(Note.all()),
            steps: [
                "INSERT INTO note (rowid, text) VALUES (2, 'x')",
                "UPDATE note SET text = 'y' WHERE rowid = 5",
                "DELETE FROM note WHERE rowid = 2",
            ],
            label: \.label)
        #expect(differences == [
            DifferenceSummary(inserted: ["5 x"]),
            DifferenceSummary(inserted: ["2 x"]),
            DifferenceSummary(updated: ["5 y"]),
            DifferenceSummary(deleted: ["2 x"]),
        ])
    }

    /// The rows are the request's: its filter and limit apply.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func theRequestsFilterOrderAndLimitApply(kind: GRDBDatabaseKind) async throws {
        let differences = try await Self.differences(
            kind: kind,
            schema: """
                CREATE TABLE tag (name TEXT NOT NULL PRIMARY KEY, count INTEGER NOT NULL);
                INSERT INTO tag VALUES ('a', 5), ('b', 4), ('c', 3), ('z', 0);
                """,
            of: ValueObservation.trackingSetDifferences(
                Tag.filter(Column("count") > 0).order(Column("count").desc).limit(2)),
            steps: [
                "UPDATE tag SET count = 9 WHERE name = 'c'",  // c enters the top 2, b leaves
                "UPDATE tag SET count = 1 WHERE name = 'z'",  // outside the top 2: nothing
                "UPDATE tag SET count = 8 WHERE name = 'c'",
            ],
            silent: [1],
            label: \.label)
        #expect(differences == [
            DifferenceSummary(inserted: ["a 5", "b 4"]),
            DifferenceSummary(inserted: ["c 9"], deleted: ["b 4"]),
            DifferenceSummary(updated: ["c 8"]),
        ])
    }

    // MARK: - Initial records

    @Test(arguments: GRDBDatabaseKind.allCases)
    func initialRecordsAreTheBaseOfTheFirstDifference(kind: GRDBDatabaseKind) async throws {
        let initialRecords = [
            CountedPlayer(id: 4, name: "Dave", updateCount: 7),
            CountedPlayer(id: 1, name: "Arthur", updateCount: 5),
            CountedPlayer(id: 2, name: "Bob", updateCount: 3),
        ]
        let test = try kind.make(sql: """
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO player VALUES (1, 'Arthur'), (2, 'Barbara'), (3, 'Craig');
            """)
        let recorder = Recorder<SetDifference<CountedPlayer>>()
        let cancellable = ValueObservation
            .trackingSetDifferences(
                CountedPlayer.all(), initialRecords: initialRecords, updateRecord: CountedPlayer.incrementingCount)
            .record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        // Arthur is unchanged, and keeps his initial instance.
        try test.writer.writeSQL("UPDATE player SET name = 'Art' WHERE id = 1")
        let differences = try await recorder.wait(for: 2).map { DifferenceSummary($0, counts: true) }
        #expect(differences == [
            DifferenceSummary(inserted: ["Craig 0"], updated: ["Barbara 4"], deleted: ["Dave 7"]),
            DifferenceSummary(updated: ["Art 6"]),
        ])
    }

    /// A reading whose value may be NaN, which SQLite stores as NULL.
    struct Reading: FetchableRecord, PersistableRecord, Sendable {
        static let databaseTableName = "reading"
        var id: Int64
        var value: Double?

        init(id: Int64, value: Double?) {
            self.id = id
            self.value = value
        }

        init(row: Row) {
            id = row["id"]
            value = row["value"]
        }

        func encode(to container: inout PersistenceContainer) {
            container["id"] = id
            container["value"] = value
        }

        var label: String { "\(id) \(value.map { "\($0)" } ?? "NULL")" }
    }

    /// An initial record may encode a NaN (GRDB keeps it; SQLite stores
    /// NULL): it compares as NULL, with a NULL, an integer (a column without
    /// affinity keeps integers) or a real, and never traps.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func initialRecordsWithNaNCompareAsNULL(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(sql: """
            CREATE TABLE reading (id INTEGER PRIMARY KEY, value);
            INSERT INTO reading VALUES (1, NULL), (2, 5), (3, 2.5);
            """)
        let recorder = Recorder<SetDifference<Reading>>()
        let cancellable = ValueObservation
            .trackingSetDifferences(
                Reading.all(), initialRecords: [1, 2, 3].map { Reading(id: $0, value: .nan) })
            .record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }
        let difference = try #require(try await recorder.wait(for: 1).first)
        #expect(difference.inserted.isEmpty)
        #expect(difference.updated.map(\.label) == ["2 5.0", "3 2.5"])
        #expect(difference.deleted.isEmpty)
    }

    @Test func initialRecordsWithoutTheirKeyFailTheObservation() async throws {
        let test = try GRDBDatabaseKind.inMemoryQueue.make(sql: "CREATE TABLE tag (count INTEGER NOT NULL)")
        let values = Recorder<SetDifference<Tag>>()
        let errors = Recorder<any Error>()
        let cancellable = ValueObservation
            .trackingSetDifferences(Tag.all(), initialRecords: [Tag(name: "a", count: 1)])
            .record(in: test.writer, into: values, errors: errors)
        defer { cancellable.cancel() }
        let error = try #require(try await errors.wait(for: 1).first as? DifferencesObservationError)
        #expect(error.kind == .missingPrimaryKeyColumn)
        #expect(error.message.contains("\"rowid\""))
        #expect(values.values.isEmpty)
    }
}

#endif
