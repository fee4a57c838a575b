import DatabaseTestSupport
import ReactiveSQLite
import Testing

private typealias F = RequestFixtures
private typealias Player = RequestFixtures.Player

@Suite struct QueryInterfaceRequestTests {
    // MARK: - Table names

    @Test func defaultTableNameIsTheTypeNameWithALowercasedFirstLetter() {
        #expect(F.Player.databaseTableName == "player")
        #expect(F.LogEntry.databaseTableName == "logEntry")
        #expect(F.PlayerSummary.databaseTableName == "playerSummary")
        #expect(F.Hero.databaseTableName == "player")
        #expect(F.Player.all().tableName == "player")
        #expect(F.Hero.all().tableName == "player")
    }

    @Test(arguments: DatabaseKind.allCases)
    func anOverriddenTableNameIsUsed(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try F.Hero.filter(key: 2).asRequest(of: Player.self).fetchOne(db) == .barbara)
            #expect(try F.Hero.all().fetchCount(db) == 4)
        }
    }

    // MARK: - Keys

    @Test(arguments: DatabaseKind.allCases)
    func allFetchesEveryRow(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try Player.all().fetchCount(db) == 4)
            #expect(Set(try Player.all().fetchAll(db).map(\.id)) == [1, 2, 3, 4])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func filterByKeyFetchesOneRow(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try Player.filter(key: 3).fetchOne(db) == .craig)
            #expect(try Player.filter(key: 3).fetchAll(db) == [.craig])
            #expect(try Player.filter(key: 99).fetchOne(db) == nil)
            #expect(try Player.filter(key: nil as Int?).fetchAll(db) == [])
            #expect(try Player.filter(key: ["id": 2]).fetchOne(db) == .barbara)
            #expect(try Player.all().filter(key: 1).fetchCount(db) == 1)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func filterByKeysFetchesTheirRows(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try Player.filter(keys: [3, 1, 99]).orderByPrimaryKey().fetchAll(db) == [.arthur, .craig])
            #expect(try Player.filter(keys: [3, 1, 99]).fetchCount(db) == 2)
            #expect(try Player.filter(keys: [Int]()).fetchAll(db) == [])
            #expect(try Player.filter(keys: [Int]()).fetchCount(db) == 0)
            #expect(try Player.filter(keys: [1, 2, 3]).filter(keys: [2, 3, 4]).orderByPrimaryKey().fetchAll(db) == [.barbara, .craig])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func filterByKeyOnTheHiddenRowID(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: "INSERT INTO logEntry (rowid, message) VALUES (3, 'c'), (1, 'a'), (2, 'b')")
            let messages = F.LogEntry.all().asRequest(of: String.self)
            #expect(try messages.filter(key: 2).fetchOne(db) == "b")
            #expect(try messages.filter(keys: [1, 3]).orderByPrimaryKey().fetchAll(db) == ["a", "c"])
            #expect(try messages.orderByPrimaryKey().fetchAll(db) == ["a", "b", "c"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aColumnNamedRowIDDoesNotHideTheRowID(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: """
                CREATE TABLE shadow (rowid TEXT, message TEXT);
                INSERT INTO shadow (_rowid_, rowid, message) VALUES (2, 'x', 'second'), (1, 'y', 'first');
                """)
            struct Shadow: TableRecord {}
            #expect(try Shadow.filter(key: 2).asRequest(of: Row.self).fetchOne(db) == Row(["rowid": "x", "message": "second"]))
            #expect(try Shadow.orderByPrimaryKey().asRequest(of: Row.self).fetchAll(db).map { try $0["message"] as String }
                == ["first", "second"])
            #expect(try Shadow.filter(key: 2).databaseRegion(db).description == "shadow(*)[2]")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func filterByCompoundKey(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: "INSERT INTO pair (a, b, c) VALUES ('x', 1, 'x1'), ('x', 2, 'x2'), ('y', 1, 'y1')")
            let values = F.Pair.all().asRequest(of: Row.self)
            #expect(try values.filter(key: ["a": "x", "b": 2]).fetchAll(db) == [Row(["a": "x", "b": 2, "c": "x2"])])
            #expect(try values.filter(key: ["B": 1, "A": "y"]).fetchOne(db) == Row(["a": "y", "b": 1, "c": "y1"]))
            #expect(try values.filter(key: ["a": "y", "b": 2]).fetchOne(db) == nil)
            #expect(try values.filter(key: ["a": "x", "b": nil]).fetchOne(db) == nil)
            #expect(try values.filter(key: ["a": "x", "b": 1]).filter(sql: "c = ?", arguments: ["x1"]).fetchCount(db) == 1)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func keysThatDoNotFitThePrimaryKeyThrow(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            let requests: [(String, QueryInterfaceRequest<Row>)] = [
                ("one value for a compound key", F.Pair.filter(key: "x").asRequest(of: Row.self)),
                ("values for a compound key", F.Pair.filter(keys: ["x", "y"]).asRequest(of: Row.self)),
                ("a missing column", F.Pair.filter(key: ["a": "x"]).asRequest(of: Row.self)),
                ("an extra column", F.Pair.filter(key: ["a": "x", "b": 1, "c": "x1"]).asRequest(of: Row.self)),
                ("another column", F.Pair.filter(key: ["a": "x", "c": "x1"]).asRequest(of: Row.self)),
                ("a column that is not the key", F.Player.filter(key: ["name": "Arthur"]).asRequest(of: Row.self)),
            ]
            for (label, request) in requests {
                for fetch in Self.fetches(request) {
                    let error = #expect(throws: DatabaseError.self, "\(label)") { try fetch(db) }
                    #expect(error?.resultCode == .SQLITE_MISUSE, "\(label)")
                    #expect(error?.message?.contains("the primary key of") == true, "\(label)")
                }
            }
            let error = #expect(throws: DatabaseError.self) { try F.Pair.filter(key: "x").asRequest(of: Row.self).fetchAll(db) }
            #expect(error?.message == "the primary key of pair has 2 column(s) (a, b): a key of 1 value(s) does not fit; "
                + "filter a compound key with a dictionary, as in filter(key: [\"a\": 1, \"b\": 2])")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aMissingTableThrows(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            let requests: [QueryInterfaceRequest<Row>] = [
                F.Ghost.all().asRequest(of: Row.self),
                F.Ghost.filter(key: 1).asRequest(of: Row.self),
                F.Ghost.filter(keys: [1, 2]).asRequest(of: Row.self),
                F.Ghost.filter(key: ["id": 1]).asRequest(of: Row.self),
                F.Ghost.orderByPrimaryKey().asRequest(of: Row.self),
            ]
            for request in requests {
                for fetch in Self.fetches(request) {
                    let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                    #expect(error?.resultCode == .SQLITE_ERROR)
                    #expect(error?.message == "no such table: ghost")
                }
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aViewHasNoPrimaryKey(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try F.PlayerSummary.all().fetchCount(db) == 4)
            let error = #expect(throws: DatabaseError.self) {
                try F.PlayerSummary.filter(key: 1).asRequest(of: Row.self).fetchOne(db)
            }
            #expect(error?.message == "playerSummary is a view, not a table: it has no primary key")
        }
    }

    // MARK: - Primary key order

    @Test(arguments: DatabaseKind.allCases)
    func orderByPrimaryKeyUsesEveryKeyColumnInBinaryOrder(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            // spelling declares COLLATE NOCASE, which would give a, b, B.
            try db.execute(sql: "INSERT INTO word (spelling, language) VALUES ('a', 'en'), ('B', 'fr'), ('b', 'de')")
            let words = try F.Word.orderByPrimaryKey().asRequest(of: Row.self).fetchAll(db)
            #expect(words == [
                Row(["spelling": "B", "language": "fr"]),
                Row(["spelling": "a", "language": "en"]),
                Row(["spelling": "b", "language": "de"]),
            ])
            #expect(try SQLRequest<String>(sql: "SELECT spelling FROM word ORDER BY spelling, language").fetchAll(db)
                == ["a", "b", "B"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func orderByPrimaryKeyOfAWithoutRowIDCompoundKey(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: "INSERT INTO pair (a, b, c) VALUES ('y', 1, 'y1'), ('x', 2, 'x2'), ('x', 10, 'x10'), ('x', 1, 'x1')")
            let values = try F.Pair.orderByPrimaryKey().asRequest(of: Row.self).fetchAll(db).map { try $0["c"] as String }
            #expect(values == ["x1", "x2", "x10", "y1"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func integerPrimaryKeyDescendingIsNotTheRowID(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: "INSERT INTO descending (id, label) VALUES (5, 'five'), (1, 'one'), (3, 'three')")
            // Not an alias: the rowids are 1, 2, 3 in insertion order.
            #expect(try SQLRequest<Int>(sql: "SELECT rowid FROM descending WHERE id = 5").fetchOne(db) == 1)
            let labels = F.Descending.all().order(sql: "label").asRequest(of: Row.self)
            #expect(try labels.fetchAll(db).map { try $0["label"] as String } == ["five", "one", "three"])
            let ordered = try F.Descending.orderByPrimaryKey().asRequest(of: Row.self).fetchAll(db)
            #expect(try ordered.map { try $0["id"] as Int } == [1, 3, 5])
            #expect(try F.Descending.filter(key: 5).asRequest(of: Row.self).fetchOne(db) == Row(["id": 5, "label": "five"]))
            #expect(try F.Descending.filter(key: 1).asRequest(of: Row.self).fetchOne(db) == Row(["id": 1, "label": "one"]))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func textKeysAreComparedByTheirBytes(kind: DatabaseKind) throws {
        let decomposed = "e\u{301}"  // 65 CC 81
        let precomposed = "\u{e9}"  // C3 A9
        // Swift's String comparison finds them equal, SQLite does not.
        #expect(decomposed == precomposed)
        #expect(decomposed.databaseValue != precomposed.databaseValue)
        #expect(decomposed.databaseValue < precomposed.databaseValue)
        #expect(!(precomposed.databaseValue < decomposed.databaseValue))

        let test = try F.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(
                sql: "INSERT INTO country (code, name) VALUES (?, 'precomposed'), (?, 'decomposed')",
                arguments: [precomposed, decomposed])
            let rows = try F.Country.orderByPrimaryKey().asRequest(of: Row.self).fetchAll(db)
            #expect(rows.count == 2)
            #expect(try rows.map { try Array(($0["code"] as String).utf8) } == [Array(decomposed.utf8), Array(precomposed.utf8)])
            #expect(try rows.map { try $0["name"] as String } == ["decomposed", "precomposed"])
            // DatabaseValue's order is SQLite's.
            let values = try rows.map { try $0["code"] as DatabaseValue }
            #expect(values == [precomposed.databaseValue, decomposed.databaseValue].sorted())
            #expect(try SQLRequest<Bool>(sql: "SELECT ? < ?", arguments: [decomposed, precomposed]).fetchOne(db) == true)
            // Each key finds its own row.
            let names = F.Country.all().order(sql: "name").asRequest(of: Row.self)
            #expect(try names.filter(key: precomposed).fetchAll(db).map { try $0["name"] as String } == ["precomposed"])
            #expect(try names.filter(key: decomposed).fetchAll(db).map { try $0["name"] as String } == ["decomposed"])
            #expect(try names.filter(keys: [decomposed, precomposed]).fetchCount(db) == 2)
        }
    }

    // MARK: - SQL refinements

    @Test(arguments: DatabaseKind.allCases)
    func filterOrderAndLimitCombine(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = Player.filter(sql: "score > ?", arguments: [120]).order(sql: "score DESC")
            #expect(try request.fetchAll(db) == [.barbara, .craig])
            #expect(try request.limit(1).fetchAll(db) == [.barbara])
            #expect(try request.limit(1, offset: 1).fetchAll(db) == [.craig])
            #expect(try request.limit(1).limit(5, offset: 1).fetchAll(db) == [.craig])
            #expect(try request.fetchCount(db) == 2)
            #expect(try request.limit(1).fetchCount(db) == 1)
            #expect(try Player.filter(sql: "name = :name", arguments: ["name": "Craig"]).fetchOne(db) == .craig)
            #expect(try Player.filter(sql: "teamId = ?", arguments: [1]).filter(sql: "score < ?", arguments: [150])
                .fetchAll(db) == [.arthur])
            #expect(try Player.order(sql: "teamId IS NULL").order(sql: "name DESC").fetchAll(db)
                == [.craig, .barbara, .arthur, .david])
            #expect(try Player.limit(2, offset: 1).orderByPrimaryKey().fetchAll(db) == [.barbara, .craig])
            #expect(try Player.filter(keys: [1, 2, 3]).filter(sql: "score >= ?", arguments: [150]).order(sql: "score")
                .fetchAll(db) == [.craig, .barbara])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func asRequestChangesTheElement(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = Player.filter(keys: [1, 4]).orderByPrimaryKey()
            #expect(try request.asRequest(of: Int64.self).fetchAll(db) == [1, 4])
            #expect(try request.asRequest(of: Row.self).fetchOne(db)
                == Row(["id": 1, "teamId": 1, "name": "Arthur", "score": 100]))
            #expect(try request.asRequest(of: Row.self).asRequest(of: Player.self).fetchAll(db) == [.arthur, .david])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func argumentsOfSQLFragmentsAreChecked(kind: DatabaseKind) throws {
        let test = try F.makeDatabase(kind)
        try test.writer.read { db throws in
            let missing = Player.filter(key: 1).filter(sql: "score > ? AND name = ?", arguments: [1])
            for fetch in Self.fetches(missing.asRequest(of: Row.self), region: false) {
                let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                #expect(error?.resultCode == .SQLITE_RANGE)
                #expect(error?.description.contains("missing argument") == true)
                #expect(error?.description.contains("SELECT * FROM \"player\" WHERE \"id\" = ? AND (score > ? AND name = ?)") == true)
            }
            let extra = Player.filter(sql: "score > ?", arguments: [1, 2])
            for fetch in Self.fetches(extra.asRequest(of: Row.self), region: false) {
                let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                #expect(error?.resultCode == .SQLITE_RANGE)
                #expect(error?.description.contains("too many arguments") == true)
            }
            let unknown = Player.filter(sql: "score > :score", arguments: ["score": 1, "name": "Arthur"])
            for fetch in Self.fetches(unknown.asRequest(of: Row.self), region: false) {
                let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                #expect(error?.resultCode == .SQLITE_RANGE)
                #expect(error?.description.contains("unknown argument name(s): name") == true)
            }
        }
    }

    /// Every way to run a request, and its region (which binds no argument).
    private static func fetches(_ request: QueryInterfaceRequest<Row>, region: Bool = true) -> [(Database) throws -> Void] {
        var fetches: [(Database) throws -> Void] = [
            { db in _ = try request.fetchAll(db) },
            { db in _ = try request.fetchOne(db) },
            { db in _ = try request.fetchCount(db) },
            { db in _ = try request.fetchCursor(db).next() },
        ]
        if region { fetches.append { db in _ = try request.databaseRegion(db) } }
        return fetches
    }
}

@Suite struct IdentifierQuotingTests {
    struct Accent: FetchableRecord, TableRecord {
        static let databaseTableName = "a\"\u{301}b"
        var id: Int64
        init(row: Row) throws { id = try row["id"] }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aQuoteFollowedByACombiningMarkIsQuoted(kind: DatabaseKind) throws {
        let test = try kind.make()
        let ids = try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE \"a\"\"\u{301}b\" (id INTEGER PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO \"a\"\"\u{301}b\" (id) VALUES (1), (2)")
            return try Accent.orderByPrimaryKey().fetchAll(db).map(\.id)
        }
        #expect(ids == [1, 2])
    }
}
