import DatabaseTestSupport
import ReactiveSQLite
import TestSupport
import Testing

@Suite struct StatementTests {
    private func makeDatabase(_ kind: DatabaseKind) throws -> TestDatabase {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        }
        return test
    }

    @Test(arguments: DatabaseKind.allCases)
    func executeRunsSeveralStatements(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: """
                INSERT INTO t (name) VALUES ('a');  -- a comment
                /* another comment */ INSERT INTO t (name) VALUES ('b')
                ;;
                UPDATE t SET name = upper(name);
                -- trailing comment
                """)
        }
        #expect(try test.writer.read { db in try SQLRequest<String>(sql: "SELECT name FROM t ORDER BY id").fetchAll(db) }
            == ["A", "B"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func executeStopsAtTheFirstFailingStatement(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.writeWithoutTransaction { db in
            let error = databaseError {
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a'); INSERT INTO nope VALUES (1); INSERT INTO t (name) VALUES ('c')")
            }
            #expect(error?.message?.contains("no such table: nope") == true)
            #expect(error?.sql == "INSERT INTO nope VALUES (1); INSERT INTO t (name) VALUES ('c')"
                || error?.sql == "INSERT INTO nope VALUES (1)")
            let names = try SQLRequest<String>(sql: "SELECT name FROM t").fetchAll(db)
            #expect(names == ["a"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func makeStatementRejectsSeveralStatementsAndEmptySQL(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            let several = databaseError { _ = try db.makeStatement(sql: "SELECT 1; SELECT 2") }
            #expect(several?.message?.contains("more than one statement") == true)
            #expect(several?.sql == "SELECT 1; SELECT 2")
            let cached = databaseError { _ = try db.cachedStatement(sql: "DELETE FROM t; DELETE FROM t") }
            #expect(cached?.message?.contains("more than one statement") == true)
            let empty = databaseError { _ = try db.makeStatement(sql: "  -- nothing\n ") }
            #expect(empty?.message?.contains("no statement") == true)
            // A trailing semicolon and comment are fine.
            let statement = try db.makeStatement(sql: "SELECT id, name FROM t; -- done")
            #expect(statement.columnNames == ["id", "name"])
            #expect(statement.columnCount == 2)
            #expect(statement.isReadOnly)
            #expect(try !db.makeStatement(sql: "DELETE FROM t").isReadOnly)
        }
    }

    // MARK: - SQL with a NUL character

    /// SQLite reads SQL as a C string, which ends at the first NUL: the text
    /// after it would be silently ignored.
    static let sqlWithNUL = "INSERT INTO t (name) VALUES ('a')\0; DROP TABLE t"

    /// Checks the error of SQL that contains a NUL character at `offset`.
    private func expectNULError(
        _ error: DatabaseError?, sql: String = sqlWithNUL, offset: Int = 33,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error?.resultCode == .SQLITE_MISUSE, sourceLocation: sourceLocation)
        #expect(
            error?.message == "the SQL contains a NUL character at byte offset \(offset)",
            "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.sql == sql, sourceLocation: sourceLocation)
    }

    /// Checks that `t` is still there, with `count` rows.
    private func expectTableIntact(
        _ writer: any DatabaseWriter, count: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(try writer.count("t") == count, sourceLocation: sourceLocation)
    }

    @Test(arguments: DatabaseKind.allCases)
    func executeThrowsForSQLWithANULCharacterAndRunsNothing(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        expectNULError(databaseError { try test.writer.write { db in try db.execute(sql: Self.sqlWithNUL) } })
        expectNULError(databaseError {
            try test.writer.writeWithoutTransaction { db in try db.execute(sql: Self.sqlWithNUL) }
        })
        // Before the statements that precede the NUL, too.
        let late = "INSERT INTO t (name) VALUES ('a'); INSERT INTO t (name) VALUES ('b')\0"
        expectNULError(
            databaseError { try test.writer.writeWithoutTransaction { db in try db.execute(sql: late) } },
            sql: late, offset: 68)
        // Anywhere in the text: in a string literal, in a comment, first.
        for (sql, offset) in [("SELECT 'a\0b'", 9), ("SELECT 1 -- \0", 12), ("\0", 0), ("SELECT 'é'\0", 11)] {
            expectNULError(databaseError { try test.writer.read { db in try db.execute(sql: sql) } }, sql: sql, offset: offset)
        }
        try expectTableIntact(test.writer)
    }

    @Test(arguments: DatabaseKind.allCases)
    func makeStatementAndCachedStatementThrowForSQLWithANULCharacter(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db throws in
            expectNULError(databaseError { _ = try db.makeStatement(sql: Self.sqlWithNUL) })
            let select = "SELECT * FROM t\0 WHERE 0"
            expectNULError(databaseError { _ = try db.makeStatement(sql: select) }, sql: select, offset: 15)
            // Again from the cache: nothing was cached.
            for _ in 0..<2 {
                expectNULError(databaseError { _ = try db.cachedStatement(sql: Self.sqlWithNUL) })
                expectNULError(databaseError { _ = try db.cachedStatement(sql: select) }, sql: select, offset: 15)
            }
            // The same SQL without the NUL is fine.
            #expect(try db.cachedStatement(sql: "SELECT * FROM t").columnNames == ["id", "name"])
        }
        try expectTableIntact(test.writer)
    }

    @Test(arguments: DatabaseKind.allCases)
    func requestsThrowForSQLWithANULCharacter(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in try db.execute(sql: "INSERT INTO t (name) VALUES ('a'), ('b')") }
        let sql = "SELECT name FROM t\0 WHERE 0"
        let rows = SQLRequest<Row>(sql: sql)
        let names = SQLRequest<String>(sql: sql)
        try test.writer.read { db in
            expectNULError(databaseError { _ = try rows.fetchAll(db) }, sql: sql, offset: 18)
            expectNULError(databaseError { _ = try rows.fetchOne(db) }, sql: sql, offset: 18)
            expectNULError(databaseError { _ = try rows.fetchCursor(db) }, sql: sql, offset: 18)
            expectNULError(databaseError { _ = try names.fetchAll(db) }, sql: sql, offset: 18)
            expectNULError(databaseError { _ = try names.fetchOne(db) }, sql: sql, offset: 18)
            expectNULError(databaseError { _ = try names.fetchCount(db) }, sql: sql, offset: 18)
            expectNULError(databaseError { _ = try names.databaseRegion(db) }, sql: sql, offset: 18)
        }
        let delete = SQLRequest<Row>(sql: "DELETE FROM t RETURNING *\0; DROP TABLE t")
        try test.writer.write { db in
            expectNULError(databaseError { _ = try delete.fetchAll(db) }, sql: delete.sql, offset: 25)
        }
        try expectTableIntact(test.writer, count: 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func anObservationOfSQLWithANULCharacterFailsWithTheError(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let sql = "SELECT name FROM t\0 WHERE 0"
        let errors = Recorder<DatabaseError?>()
        let cancellable = ValueObservation.trackingAll(SQLRequest<String>(sql: sql)).start(
            in: test.writer, scheduling: .observationQueue, onError: { errors.append($0 as? DatabaseError) },
            onChange: { Issue.record("Unexpected value \($0)") })
        defer { cancellable.cancel() }
        expectNULError(try await errors.wait(for: 1)[0], sql: sql, offset: 18)
    }

    @Test(arguments: DatabaseKind.allCases)
    func cachedStatementReturnsTheSameStatementForTheSameSQL(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            let first = try db.cachedStatement(sql: "SELECT * FROM t")
            let second = try db.cachedStatement(sql: "SELECT * FROM t")
            #expect(first === second)
            #expect(try db.cachedStatement(sql: "SELECT * FROM t ") !== first)
            #expect(try db.makeStatement(sql: "SELECT * FROM t") !== first)
        }
        // The cache lasts across accesses of a connection.
        let identifiers = try (0..<2).map { _ in
            try test.writer.writeWithoutTransaction { db in ObjectIdentifier(try db.cachedStatement(sql: "SELECT name FROM t")) }
        }
        #expect(identifiers[0] == identifiers[1])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aStatementRunsAgainWithNewArguments(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (name) VALUES (?)")
            for name in ["a", "b", "c"] {
                try insert.execute(arguments: [name])
            }
            let named = try db.makeStatement(sql: "UPDATE t SET name = :name WHERE id = :id")
            try named.execute(arguments: ["id": 1, "name": "x"])
            try named.execute(arguments: ["id": 2, "name": nil])
        }
        let rows = try test.writer.read { db in try SQLRequest<Row>(sql: "SELECT id, name FROM t ORDER BY id").fetchAll(db) }
        #expect(rows == [
            Row(["id": 1, "name": "x"]),
            Row(["id": 2, "name": nil]),
            Row(["id": 3, "name": "c"]),
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func cachedStatementsFollowTablesDroppedAndCreatedAgain(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (1, 'a')")
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db) == [Row(["id": 1, "name": "a"])])
            let insert = try db.cachedStatement(sql: "INSERT INTO t (name) VALUES (?)")
            try insert.execute(arguments: ["b"])

            // Same name, other columns, in the same access.
            try db.execute(sql: "DROP TABLE t; CREATE TABLE t (name TEXT, score INTEGER, id INTEGER PRIMARY KEY)")
            try db.cachedStatement(sql: "INSERT INTO t (name) VALUES (?)").execute(arguments: ["c"])
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db)
                == [Row(["name": "c", "score": nil, "id": 1])])
            // The statement kept by the caller runs against the new table too.
            try insert.execute(arguments: ["d"])
            #expect(try db.count("t") == 2)
        }
        // In later accesses.
        let rows = try test.writer.read { db in try SQLRequest<Row>(sql: "SELECT * FROM t ORDER BY id").fetchAll(db) }
        #expect(rows.map(\.columnNames) == [["name", "score", "id"], ["name", "score", "id"]])
        try test.writer.write { db in try db.execute(sql: "DROP TABLE t") }
        let error = databaseError {
            _ = try test.writer.read { db in try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db) }
        }
        #expect(error?.resultCode == .SQLITE_ERROR)
        #expect(error?.message?.contains("no such table: t") == true)
        let insertError = databaseError {
            try test.writer.write { db in try db.cachedStatement(sql: "INSERT INTO t (name) VALUES (?)").execute(arguments: ["e"]) }
        }
        #expect(insertError?.message?.contains("no such table: t") == true)
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        #expect(try test.writer.read { db in try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db) } == [])
        #expect(try test.writer.read { db in try db.makeStatement(sql: "SELECT * FROM t").columnNames } == ["x"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRolledBackSchemaChangeIsForgotten(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        #expect(throws: TestError()) {
            try test.writer.write { db in
                try db.execute(sql: "DROP TABLE t; CREATE TABLE t (a, b, c)")
                #expect(try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db) == [])
                #expect(try db.makeStatement(sql: "SELECT * FROM t").columnNames == ["a", "b", "c"])
                throw TestError()
            }
        }
        try test.writer.write { db in
            #expect(try db.cachedStatement(sql: "SELECT * FROM t").columnNames == ["id", "name"])
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (1, 'a')")
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db) == [Row(["id": 1, "name": "a"])])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aStatementIteratedByACursorIsNotHandedOutAgain(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO t (name) VALUES ('a'), ('b')")
            let cursor = try SQLRequest<String>(sql: "SELECT name FROM t ORDER BY id").fetchCursor(db)
            #expect(try cursor.next() == "a")
            // The same SQL, fetched meanwhile, runs on a statement of its own.
            #expect(try SQLRequest<String>(sql: "SELECT name FROM t ORDER BY id").fetchAll(db) == ["a", "b"])
            #expect(try cursor.next() == "b")
            #expect(try cursor.next() == nil)
        }
    }

    @Test func aStatementRecompiledAfterAnotherConnectionChangedTheSchemaReadsTheNewColumns() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("db.sqlite")
        let queue = try DatabaseQueue(path: path)
        let other = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2)") }
        let (before, after) = try queue.writeWithoutTransaction { db in
            let before = try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db)
            // Another connection changes the schema in the middle of this
            // access, unseen by this connection's caches.
            try other.write { db in
                try db.execute(sql: "DROP TABLE t; CREATE TABLE t (x, y, z); INSERT INTO t VALUES (3, 4, 5)")
            }
            let after = try SQLRequest<Row>(sql: "SELECT * FROM t").fetchAll(db)
            return (before, after)
        }
        #expect(before == [Row(["a": 1, "b": 2])])
        #expect(after == [Row(["x": 3, "y": 4, "z": 5])])
        // And in later accesses.
        #expect(try queue.read { db in try db.cachedStatement(sql: "SELECT * FROM t").columnNames } == ["x", "y", "z"])
    }
}
