import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `trackingSetDifferences`: identity by the primary key of every kind of
/// table, SQLite's `BINARY` order, initial records, and what fails.
@Suite struct TrackingSetDifferencesTests {
    // MARK: - Records

    /// `membership(teamId, playerId, role)`, keyed by (teamId, playerId).
    struct Membership: FetchableRecord, TableRecord, Sendable {
        var teamId: Int64
        var playerId: Int64
        var role: String

        init(row: Row) throws {
            teamId = try row["teamId"]
            playerId = try row["playerId"]
            role = try row["role"]
        }

        var description: String { "\(teamId)-\(playerId):\(role)" }
    }

    /// `tag(name, count)`, keyed by a text.
    struct Tag: FetchableRecord, TableRecord, Sendable {
        var name: String
        var count: Int

        init(row: Row) throws {
            name = try row["name"]
            count = try row["count"]
        }

        var description: String { "\(name):\(count)" }
    }

    /// A text key, described by its Unicode scalars (`65+301` for "e\u{301}").
    struct Word: FetchableRecord, TableRecord, Sendable {
        var text: String
        var count: Int

        init(row: Row) throws {
            text = try row["text"]
            count = try row["count"]
        }

        var description: String {
            text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: "+") + ":\(count)"
        }
    }

    /// `big(id, value)`, keyed by large integers.
    struct Big: FetchableRecord, TableRecord, Sendable {
        var id: Int64
        var value: String

        init(row: Row) throws {
            id = try row["id"]
            value = try row["value"]
        }

        var description: String { "\(id):\(value)" }
    }

    /// `note(text)`, a table without primary key. Remembers the columns it
    /// was decoded from.
    struct Note: FetchableRecord, TableRecord, Sendable {
        var text: String
        var columnNames: [String]

        init(row: Row) throws {
            text = try row["text"]
            columnNames = row.columnNames
        }

        var description: String { "\(text)\(columnNames)" }
    }

    /// A class: its instances show which records the observation keeps.
    final class PersonObject: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        let id: Int64
        let name: String

        init(row: Row) throws {
            id = try row["id"]
            name = try row["name"]
        }
    }

    /// A record that does not encode its primary key.
    struct Nameless: FetchableRecord, TableRecord, Encodable, Sendable {
        static let databaseTableName = "player"
        var id: Int64
        var name: String

        enum CodingKeys: String, CodingKey {
            case name
        }

        init(id: Int64, name: String) {
            self.id = id
            self.name = name
        }

        init(row: Row) throws {
            id = try row["id"]
            name = try row["name"]
        }
    }

    /// A record that keeps the row it was decoded from.
    struct RowKeeper: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        var row: Row

        init(row: Row) throws {
            self.row = row
        }

        var description: String { "\(row.databaseValues.map(\.description).joined(separator: ","))" }
    }

    func descriptions<Element>(_ values: [SetDifference<Element>], _ element: (Element) -> String) -> [String] {
        values.map { describe($0, element) }
    }

    // MARK: - Keys

    @Test(arguments: DatabaseKind.allCases)
    func compoundPrimaryKeys(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE membership (
                teamId INTEGER NOT NULL, playerId INTEGER NOT NULL, role TEXT NOT NULL,
                PRIMARY KEY (teamId, playerId));
            INSERT INTO membership VALUES (2, 1, 'coach'), (1, 2, 'captain'), (1, 1, 'player');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Membership.all()), in: test.writer,
            steps: [
                "UPDATE membership SET role = 'coach' WHERE teamId = 1 AND playerId = 2",
                "DELETE FROM membership WHERE teamId = 2; INSERT INTO membership VALUES (1, 3, 'player'), (2, 2, 'player')",
                "UPDATE membership SET playerId = 4 WHERE teamId = 1 AND playerId = 1",
            ])
        #expect(descriptions(values, \.description) == [
            "1-1:player, 1-2:captain, 2-1:coach | - | -",
            "- | 1-2:coach | -",
            "1-3:player, 2-2:player | - | 2-1:coach",
            "1-4:player | - | 1-1:player",
        ])
    }

    /// `loose(id, v)`, whose value has no type: it shows its storage class.
    struct Loose: FetchableRecord, TableRecord, Sendable {
        var id: Int64
        var value: DatabaseValue

        init(row: Row) throws {
            id = try row["id"]
            value = try row["v"]
        }

        var description: String { "\(id):\(value.storage)" }
    }

    /// A value that changes its storage class only (`1`, `1.0`, `'1'`,
    /// which compare equal or not, as SQL values) is an updated record:
    /// the raw row changed, and the record decoded from it may differ.
    @Test(arguments: DatabaseKind.allCases)
    func aChangeOfStorageClassAloneUpdatesTheRecord(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE loose (id INTEGER PRIMARY KEY, v);
            INSERT INTO loose VALUES (1, 1);
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Loose.all()), in: test.writer,
            steps: ["UPDATE loose SET v = 1.0", "UPDATE loose SET v = '1'", "UPDATE loose SET v = 1"])
        #expect(descriptions(values, \.description) == [
            "1:integer(1) | - | -",
            "- | 1:real(1.0) | -",
            "- | 1:text(\"1\") | -",
            "- | 1:integer(1) | -",
        ])
    }

    /// The rows come in `NOCASE` order ("a" before "B"); the differences are
    /// in `BINARY` order ("B" before "a"), and match rows by exact key.
    @Test(arguments: DatabaseKind.allCases)
    func textPrimaryKeysDeclaredNoCase(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE tag (name TEXT PRIMARY KEY COLLATE NOCASE, count INTEGER NOT NULL);
            INSERT INTO tag VALUES ('a', 1), ('B', 2);
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Tag.all().order(sql: "name")), in: test.writer,
            steps: [
                "UPDATE tag SET count = 10 WHERE name = 'a'",
                "INSERT INTO tag VALUES ('c', 3); DELETE FROM tag WHERE name = 'B'",
                "UPDATE tag SET count = 30 WHERE name = 'C'",
                "INSERT INTO tag VALUES ('D', 4), ('_', 5)",
            ])
        #expect(descriptions(values, \.description) == [
            "B:2, a:1 | - | -",
            "- | a:10 | -",
            "c:3 | - | B:2",
            "- | c:30 | -",
            "D:4, _:5 | - | -",
        ])
    }

    /// "e\u{301}" and "\u{e9}" are equal Swift strings, and two keys for SQLite.
    @Test(arguments: DatabaseKind.allCases)
    func canonicallyEquivalentTextKeysAreDistinct(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE word (text TEXT PRIMARY KEY, count INTEGER NOT NULL);
            """)
        try await test.writer.write { db in
            try db.execute(sql: "INSERT INTO word VALUES (?, 1), (?, 2)", arguments: ["e\u{301}", "\u{e9}"])
        }
        #expect("e\u{301}" == "\u{e9}")
        let observation = ValueObservation.trackingSetDifferences(Word.all())
        let recorder = Recorder<SetDifference<Word>>()
        let cancellable = observation.start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try await test.writer.write { db in
            try db.execute(sql: "UPDATE word SET count = 20 WHERE text = ?", arguments: ["\u{e9}"])
        }
        try await recorder.wait(for: 2)
        try await test.writer.write { db in
            try db.execute(sql: "DELETE FROM word WHERE text = ?", arguments: ["e\u{301}"])
        }
        let values = try await recorder.wait(for: 3)
        #expect(descriptions(values, \.description) == [
            "65+301:1, e9:2 | - | -",
            "- | e9:20 | -",
            "- | - | 65+301:1",
        ])
    }

    /// 2^53 and 2^53 + 1 are one `Double`, and two keys; so are the keys of
    /// a WITHOUT ROWID table.
    @Test(arguments: DatabaseKind.allCases)
    func integerKeysAbove2To53InAWithoutRowIDTable(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE big (id INTEGER PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            INSERT INTO big VALUES (9007199254740993, 'b'), (9007199254740992, 'a'), (-1, 'z');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Big.all()), in: test.writer,
            steps: [
                "UPDATE big SET value = 'B' WHERE id = 9007199254740993",
                "DELETE FROM big WHERE id = 9007199254740992; INSERT INTO big VALUES (9007199254740994, 'c')",
            ])
        #expect(descriptions(values, \.description) == [
            "-1:z, 9007199254740992:a, 9007199254740993:b | - | -",
            "- | 9007199254740993:B | -",
            "9007199254740994:c | - | 9007199254740992:a",
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func textKeysOfAWithoutRowIDTable(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE tag (name TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO tag VALUES ('b', 2), ('a', 1);
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Tag.all()), in: test.writer,
            steps: [
                "UPDATE tag SET count = 20 WHERE name = 'b'",
                "UPDATE tag SET name = 'c' WHERE name = 'a'",
                "DELETE FROM tag",
            ])
        #expect(descriptions(values, \.description) == [
            "a:1, b:2 | - | -",
            "- | b:20 | -",
            "c:1 | - | a:1",
            "- | - | b:20, c:1",
        ])
    }

    /// The key is the rowid, which the observation selects and records do
    /// not see: equal rows are distinct records.
    @Test(arguments: DatabaseKind.allCases)
    func tablesWithoutPrimaryKeyAreKeyedByRowID(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE note (text TEXT NOT NULL);
            INSERT INTO note (rowid, text) VALUES (1, 'x'), (2, 'x'), (3, 'y');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Note.all()), in: test.writer,
            steps: [
                "UPDATE note SET text = 'y2' WHERE rowid = 3",
                "DELETE FROM note WHERE rowid = 1; INSERT INTO note (rowid, text) VALUES (4, 'x')",
                "UPDATE note SET rowid = 5 WHERE rowid = 2",
            ])
        #expect(descriptions(values, \.description) == [
            #"x["text"], x["text"], y["text"] | - | -"#,
            #"- | y2["text"] | -"#,
            #"x["text"] | - | x["text"]"#,
            #"x["text"] | - | x["text"]"#,
        ])
    }

    /// An `SQLRequest` on a table without primary key selects the rowid itself.
    @Test(arguments: DatabaseKind.allCases)
    func sqlRequestsOfTablesWithoutPrimaryKeySelectTheRowID(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE note (text TEXT NOT NULL);
            INSERT INTO note (rowid, text) VALUES (1, 'x'), (2, 'x');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(SQLRequest<Note>(sql: "SELECT rowid, text FROM note")),
            in: test.writer, steps: ["UPDATE note SET text = 'z' WHERE rowid = 2"])
        #expect(descriptions(values, \.description) == [
            #"x["rowid", "text"], x["rowid", "text"] | - | -"#,
            #"- | z["rowid", "text"] | -"#,
        ])

        let error = try await firstError(
            of: ValueObservation.trackingSetDifferences(SQLRequest<Note>(sql: "SELECT text FROM note")), in: test.writer)
        let differencesError = try #require(error as? DifferencesObservationError)
        #expect(differencesError.kind == .missingPrimaryKeyColumn)
        #expect(differencesError.message.contains("lack the primary key column rowid of note"))
        #expect(differencesError.message.hasSuffix("SQL: SELECT text FROM note"))
    }

    /// The request's filter, order and limit apply; the rows are sorted by
    /// key whatever the order.
    @Test(arguments: DatabaseKind.allCases)
    func requestsKeepTheirFilterOrderAndLimit(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara'), (3, 'Craig');
            """)
        let request = Person.all().filter(sql: "name <> ?", arguments: ["Zoe"]).order(sql: "id DESC").limit(2)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(request), in: test.writer,
            steps: [
                "INSERT INTO player (id, name) VALUES (4, 'David')",
                "UPDATE player SET name = 'Zoe' WHERE id = 4",
            ])
        #expect(values.map(describe) == [
            "Barbara:0, Craig:0 | - | -",
            "David:0 | - | Barbara:0",
            "Barbara:0 | - | David:0",
        ])
    }

    /// Records are decoded from one row whose values are replaced for each
    /// record: a record that keeps its row keeps its own values, whether
    /// inserted, updated, or decoded by a full scan or a refetch of changed rows.
    @Test(arguments: DatabaseKind.allCases, [Configuration.ChangeTracking.automatic, .updateHookOnly])
    func recordsThatKeepTheirRowKeepTheirOwnValues(kind: DatabaseKind, changeTracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: changeTracking, sql: SetDifferencesObservationTests.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara'), (3, 'Craig');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(RowKeeper.orderByPrimaryKey()), in: test.writer,
            steps: [
                "UPDATE player SET name = 'Art' WHERE id = 1; UPDATE player SET name = 'Craig2' WHERE id = 3",
                "INSERT INTO player (id, name) VALUES (4, 'David'), (5, 'Eve'); DELETE FROM player WHERE id = 2",
            ])
        #expect(descriptions(values, \.description) == [
            "1,'Arthur', 2,'Barbara', 3,'Craig' | - | -",
            "- | 1,'Art', 3,'Craig2' | -",
            "4,'David', 5,'Eve' | - | 2,'Barbara'",
        ])
    }

    // MARK: - Initial records

    /// Initial records in any order: the first difference goes from them.
    @Test(arguments: DatabaseKind.allCases)
    func initialRecordsAreTheBaseOfTheFirstDifference(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara'), (3, 'Craig');
            """)
        var babs = Person(id: 2, name: "Babs")
        babs.updateCount = 5
        let initialRecords = [Person(id: 9, name: "Zoe"), babs, Person(id: 1, name: "Arthur")]
        let plain = ValueObservation.trackingSetDifferences(Person.all(), initialRecords: initialRecords)
        let values = try await recordValues(
            of: plain, in: test.writer, steps: ["UPDATE player SET name = 'Art' WHERE id = 1"])
        #expect(values.map(describe) == ["Craig:0 | Barbara:0 | Zoe:0", "- | Art:0 | -"])

        let counting = ValueObservation.trackingSetDifferences(Person.all(), initialRecords: initialRecords) { old, row in
            var record = old
            record.name = (try? row["name"]) ?? "(undecodable)"
            record.updateCount += 1
            return record
        }
        let countedValues = try await recordValues(
            of: counting, in: test.writer, steps: ["UPDATE player SET name = 'Barbara2' WHERE id = 2"])
        // Arthur is Art now: updated from the initial Arthur.
        #expect(countedValues.map(describe) == ["Craig:0 | Art:1, Barbara:6 | Zoe:0", "- | Barbara2:7 | -"])
    }

    /// Initial records equal to the rows: the first difference is empty and
    /// not delivered; the first value is the difference of the next change.
    @Test(arguments: DatabaseKind.allCases)
    func initialRecordsEqualToTheRowsDeliverNothingFirst(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL)
        let observation = ValueObservation.trackingSetDifferences(
            Person.orderByPrimaryKey(), initialRecords: [Person(id: 1, name: "Arthur")])
        let recorder = Recorder<SetDifference<Person>>()
        let cancellable = observation.start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (2, 'Barbara')")
        let values = try await recorder.wait(for: 1)
        #expect(values.map(describe) == ["Barbara:0 | - | -"])
    }

    /// An initial record that does not encode every column has no raw row
    /// to compare: it is reported updated.
    @Test(arguments: DatabaseKind.allCases)
    func initialRecordsWithoutEveryColumnAreUpdated(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT, team TEXT);
            INSERT INTO player (id, name, team) VALUES (1, 'Arthur', 'red'), (2, 'Barbara', NULL);
            """)
        let observation = ValueObservation.trackingSetDifferences(
            Person.all(), initialRecords: [Person(id: 1, name: "Arthur"), Person(id: 2, name: "Barbara")])
        let values = try await recordValues(of: observation, in: test.writer, steps: [])
        #expect(values.map(describe) == ["- | Arthur:0, Barbara:0 | -"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func initialRecordsMustEncodeTheirKeyOnce(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL)
        let missingKey = try await firstError(
            of: ValueObservation.trackingSetDifferences(Nameless.all(), initialRecords: [Nameless(id: 1, name: "Arthur")]),
            in: test.writer)
        #expect((missingKey as? DifferencesObservationError)?.kind == .missingPrimaryKeyColumn)
        #expect((missingKey as? DifferencesObservationError)?.message.contains("does not encode the primary key column id") == true)

        let duplicateKey = try await firstError(
            of: ValueObservation.trackingSetDifferences(
                Person.all(), initialRecords: [Person(id: 1, name: "Arthur"), Person(id: 1, name: "Art")]),
            in: test.writer)
        #expect((duplicateKey as? DifferencesObservationError)?.kind == .duplicateIdentifier)
        #expect((duplicateKey as? DifferencesObservationError)?.message.hasSuffix("two initial records have the same primary key (1)") == true)
    }

    // MARK: - Records

    /// Records need not be `Equatable`: updates compare raw rows. Unchanged
    /// records keep their instance, which the deletion reports.
    @Test(arguments: DatabaseKind.allCases)
    func unchangedRecordsKeepTheirInstance(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(PersonObject.all()), in: test.writer,
            steps: [
                "UPDATE player SET name = 'Babs' WHERE id = 2",
                "DELETE FROM player",
            ])
        try #require(values.count == 3)
        #expect(values[0].inserted.map(\.name) == ["Arthur", "Barbara"])
        #expect(values[1].updated.map(\.name) == ["Babs"])
        #expect(values[2].deleted.map(\.name) == ["Arthur", "Babs"])
        #expect(values[2].deleted[0] === values[0].inserted[0])
        #expect(values[2].deleted[1] === values[1].updated[0])
    }

    /// A row whose rowid (its `INTEGER PRIMARY KEY`) changes is another record.
    @Test(arguments: DatabaseKind.allCases)
    func changedKeysAreDeletionsAndInsertions(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Person.all()), in: test.writer,
            steps: ["UPDATE player SET id = 10 WHERE id = 1"])
        #expect(values.map { $0.inserted.map(\.id) + $0.deleted.map(\.id) } == [[1], [10, 1]])
    }

    /// A schema change that gives rows another column changes every row:
    /// each record is updated, once; then diffs go on as before.
    @Test(arguments: DatabaseKind.allCases)
    func addedColumnsUpdateEveryRecordOnce(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara');
            """)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Person.orderByPrimaryKey()), in: test.writer,
            steps: [
                "ALTER TABLE player ADD COLUMN team TEXT",
                "UPDATE player SET team = 'red' WHERE id = 2",
            ])
        #expect(values.map(describe) == [
            "Arthur:0, Barbara:0 | - | -",
            "- | Arthur:0, Barbara:0 | -",
            "- | Barbara:0 | -",
        ])
    }

    /// A schema change that gives the table another primary key makes old
    /// and new keys incomparable: every old record is deleted and every
    /// row inserted, once; then diffs go on with the new key.
    @Test(arguments: DatabaseKind.allCases)
    func aNewPrimaryKeyDeletesAndInsertsEveryRecordOnce(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL)
        let values = try await recordValues(
            of: ValueObservation.trackingSetDifferences(Person.all()), in: test.writer,
            steps: [
                // A compound key: keys of another length.
                """
                DROP TABLE player;
                CREATE TABLE player (id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (id, name));
                INSERT INTO player (id, name) VALUES (1, 'Arthur'), (2, 'Barbara');
                """,
                "UPDATE player SET name = 'Craig' WHERE id = 2",
                // A key of one other column, whose values equal the old keys'.
                """
                DROP TABLE player;
                CREATE TABLE player (id INTEGER NOT NULL, name TEXT PRIMARY KEY);
                INSERT INTO player (id, name) VALUES (1, '1');
                """,
            ])
        #expect(values.map(describe) == [
            "Arthur:0 | - | -",
            "Arthur:0, Barbara:0 | - | Arthur:0",
            "Craig:0 | - | Barbara:0",
            "1:0 | - | Arthur:0, Craig:0",
        ])
    }

    // MARK: - Errors

    @Test(arguments: DatabaseKind.allCases)
    func rowsMustHoldOneRowPerPrimaryKey(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: SetDifferencesObservationTests.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara');
            CREATE VIEW playerView AS SELECT * FROM player;
            """)
        let join = SQLRequest<Person>(sql: "SELECT p1.* FROM player p1, player p2")
        let duplicate = try await firstError(of: ValueObservation.trackingSetDifferences(join), in: test.writer)
        #expect((duplicate as? DifferencesObservationError)?.kind == .duplicateIdentifier)
        #expect((duplicate as? DifferencesObservationError)?.message.contains("two rows have the same primary key (1) of player") == true)
        #expect((duplicate as? DifferencesObservationError)?.message.hasSuffix("SQL: \(join.sql)") == true)

        let noKey = SQLRequest<Person>(sql: "SELECT 1 AS identifier, name FROM player")
        let missing = try await firstError(of: ValueObservation.trackingSetDifferences(noKey), in: test.writer)
        #expect((missing as? DifferencesObservationError)?.kind == .missingPrimaryKeyColumn)
        #expect((missing as? DifferencesObservationError)?.message.contains("the rows lack the primary key column id of player") == true)

        struct ViewRecord: FetchableRecord, TableRecord, Sendable {
            static let databaseTableName = "playerView"
            init(row: Row) throws {}
        }
        let view = try await firstError(of: ValueObservation.trackingSetDifferences(ViewRecord.all()), in: test.writer)
        #expect((view as? DatabaseError)?.message == "playerView is a view, not a table: it has no primary key")
    }
}
