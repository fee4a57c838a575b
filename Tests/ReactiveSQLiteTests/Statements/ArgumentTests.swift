import DatabaseTestSupport
import ReactiveSQLite
import Testing

@Suite struct ArgumentTests {
    private func makeDatabase(_ kind: DatabaseKind) throws -> TestDatabase {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INTEGER)")
        }
        return test
    }

    private func rows(_ db: Database) throws -> [Row] {
        try SQLRequest<Row>(sql: "SELECT id, name, score FROM t ORDER BY id").fetchAll(db)
    }

    @Test(arguments: DatabaseKind.allCases)
    func positionalArgumentsBindInOrderAndNilIsNull(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO t (id, name, score) VALUES (?, ?, ?)", arguments: [1, "Arthur", nil])
            try db.execute(sql: "INSERT INTO t (id, name, score) VALUES (?2, ?1, ?3)", arguments: ["Barbara", 2, 100])
            #expect(try db.int("SELECT COUNT(*) FROM t WHERE score IS ?", arguments: [nil]) == 1)
        }
        #expect(try test.writer.read(rows) == [
            Row(["id": 1, "name": "Arthur", "score": nil]),
            Row(["id": 2, "name": "Barbara", "score": 100]),
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func namedArgumentsBindWhateverTheirPrefix(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO t (id, name, score) VALUES (:id, @name, $score)",
                           arguments: ["id": 1, "name": "Arthur", "score": nil])
            // Keys may carry the prefix; a name used twice binds once.
            try db.execute(sql: "INSERT INTO t (id, name, score) VALUES (:id, :name, :id * 10)",
                           arguments: [":id": 2, "@name": "Barbara"])
            // Named values are shared by the statements of one execute.
            try db.execute(sql: """
                INSERT INTO t (id, name) VALUES (:id, :name);
                UPDATE t SET score = :score WHERE id = :id;
                """, arguments: ["id": 3, "name": "Craig", "score": 7])
        }
        #expect(try test.writer.read(rows) == [
            Row(["id": 1, "name": "Arthur", "score": nil]),
            Row(["id": 2, "name": "Barbara", "score": 20]),
            Row(["id": 3, "name": "Craig", "score": 7]),
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func positionalArgumentsAreConsumedByTheStatementsInOrder(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: """
                INSERT INTO t (id, name) VALUES (?, ?);
                DELETE FROM t WHERE id = ?;
                INSERT INTO t (id, name) VALUES (?, 'b');
                """, arguments: [1, "a", 999, 2])
        }
        #expect(try test.writer.read { db in try db.count("t") } == 2)
    }

    private func expectRangeError(
        _ test: TestDatabase, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping (Database) throws -> Void
    ) throws {
        let error = databaseError(sourceLocation: sourceLocation) { try test.writer.write(body) }
        #expect(error?.resultCode == .SQLITE_RANGE, sourceLocation: sourceLocation)
        #expect(error?.sql != nil, sourceLocation: sourceLocation)
        // Nothing ran.
        #expect(try test.writer.count("t") == 0, sourceLocation: sourceLocation)
    }

    @Test(arguments: DatabaseKind.allCases)
    func argumentsThatDoNotFitThrowBeforeTheStatementRuns(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        // Too few.
        try expectRangeError(test) { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (?, ?)", arguments: [1])
        }
        try expectRangeError(test) { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (?, ?)")
        }
        // Too many.
        try expectRangeError(test) { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (?, ?)", arguments: [1, "a", "extra"])
        }
        try expectRangeError(test) { db in
            try db.execute(sql: "INSERT INTO t (id) VALUES (1)", arguments: [1])
        }
        // Unknown name, missing name.
        try expectRangeError(test) { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (:id, :name)", arguments: ["id": 1, "name": "a", "nmae": "b"])
        }
        try expectRangeError(test) { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (:id, :name)", arguments: ["id": 1])
        }
        // Through a statement.
        try expectRangeError(test) { db in
            try db.makeStatement(sql: "INSERT INTO t (id) VALUES (?)").execute(arguments: [1, 2])
        }
        try expectRangeError(test) { db in
            try db.cachedStatement(sql: "INSERT INTO t (id) VALUES (:id)").execute(arguments: ["identifier": 1])
        }
        // Arguments without SQL.
        try expectRangeError(test) { db in
            try db.execute(sql: " ", arguments: [1])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func leftoverArgumentsAfterTheLastStatementRollBackTheWholeWrite(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t (id, name) VALUES (10, 'before')")
                try db.execute(sql: """
                    INSERT INTO t (id, name) VALUES (?, ?);
                    INSERT INTO t (id, name) VALUES (?, ?);
                    """, arguments: [1, "a", 2, "b", "leftover"])
            }
        }
        #expect(error?.resultCode == .SQLITE_RANGE)
        #expect(error?.message?.contains("1") == true)
        #expect(error?.arguments == "[1, 'a', 2, 'b', 'leftover']")
        #expect(try test.writer.count("t") == 0)

        // The same with named arguments nobody uses.
        let namedError = databaseError {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t (id) VALUES (:a); INSERT INTO t (id) VALUES (:b)",
                               arguments: ["a": 1, "b": 2, "c": 3])
            }
        }
        #expect(namedError?.resultCode == .SQLITE_RANGE)
        #expect(namedError?.message?.contains("c") == true)
        #expect(try test.writer.count("t") == 0)
    }

    @Test(arguments: DatabaseKind.allCases)
    func requestsCheckTheirArgumentsToo(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.read { db in
            let tooMany = databaseError { _ = try SQLRequest<Row>(sql: "SELECT * FROM t WHERE id = ?", arguments: [1, 2]).fetchAll(db) }
            #expect(tooMany?.resultCode == .SQLITE_RANGE)
            let tooFew = databaseError { _ = try SQLRequest<Int>(sql: "SELECT ? + ?", arguments: [1]).fetchOne(db) }
            #expect(tooFew?.resultCode == .SQLITE_RANGE)
            let unknown = databaseError { _ = try SQLRequest<Row>(sql: "SELECT :a", arguments: ["b": 1]).fetchCount(db) }
            #expect(unknown?.resultCode == .SQLITE_RANGE)
        }
    }

    @Test func argumentsDescribeThemselves() {
        #expect(StatementArguments([1, "Arthur", nil]).description == "[1, 'Arthur', NULL]")
        let named: StatementArguments = [":name": "Arthur", "@id": 1]
        #expect(named.namedValues.keys.sorted() == ["id", "name"])
        #expect(StatementArguments().isEmpty)
        var appended: StatementArguments = [1]
        appended.append(contentsOf: [2, "three"])
        appended.append(contentsOf: ["a": 1])
        #expect(appended.values.count == 3)
        #expect(appended.namedValues.count == 1)
    }
}
