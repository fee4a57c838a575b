import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

@Suite struct ErrorTests {
    @Test(arguments: DatabaseKind.allCases)
    func invalidSQLThrowsSQLiteMessageAndTheSQL(kind: DatabaseKind) throws {
        var configuration = Configuration()
        configuration.label = "ErrorTestsDB"
        let test = try kind.make(configuration: configuration)
        let sql = "SELEC * FROM nowhere"
        let error = databaseError { try test.writer.write { db in try db.execute(sql: sql) } }
        #expect(error?.resultCode == .SQLITE_ERROR)
        #expect(error?.extendedResultCode == .SQLITE_ERROR)
        #expect(error?.message == "near \"SELEC\": syntax error")
        #expect(error?.sql == sql)
        #expect(error?.connectionLabel?.hasPrefix("ErrorTestsDB") == true)
        let description = error?.description ?? ""
        #expect(description.contains(sql))
        #expect(description.contains("syntax error"))
        #expect(description.contains("ErrorTestsDB"))

        let readError = databaseError {
            _ = try test.writer.read { db in try SQLRequest<Row>(sql: "SELECT nope FROM sqlite_master").fetchAll(db) }
        }
        #expect(readError?.message == "no such column: nope")
        #expect(readError?.sql == "SELECT nope FROM sqlite_master")
    }

    @Test(arguments: DatabaseKind.allCases)
    func constraintViolationsCarryTheirExtendedCode(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE t (
                    code TEXT PRIMARY KEY,
                    email TEXT UNIQUE,
                    name TEXT NOT NULL,
                    score INTEGER CHECK (score >= 0),
                    parentID INTEGER REFERENCES parent(id));
                INSERT INTO t (code, email, name) VALUES ('a', 'a@x', 'A');
                """)
        }
        let cases: [(sql: String, code: Int32)] = [
            ("INSERT INTO t (code, name) VALUES ('a', 'B')", 1555),  // SQLITE_CONSTRAINT_PRIMARYKEY
            ("INSERT INTO t (code, email, name) VALUES ('b', 'a@x', 'B')", 2067),  // SQLITE_CONSTRAINT_UNIQUE
            ("INSERT INTO t (code) VALUES ('c')", 1299),  // SQLITE_CONSTRAINT_NOTNULL
            ("INSERT INTO t (code, name, score) VALUES ('d', 'D', -1)", 275),  // SQLITE_CONSTRAINT_CHECK
            ("INSERT INTO t (code, name, parentID) VALUES ('e', 'E', 42)", 787),  // SQLITE_CONSTRAINT_FOREIGNKEY
        ]
        for (sql, code) in cases {
            let error = databaseError { try test.writer.write { db in try db.execute(sql: sql) } }
            #expect(error?.extendedResultCode.rawValue == code, "\(sql)")
            #expect(error?.extendedResultCode.primaryResultCode == .SQLITE_CONSTRAINT)
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.sql == sql)
            #expect(error?.description.contains("constraint failed") == true)
        }
        let error = databaseError {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t (code, name) VALUES (?, ?)", arguments: ["a", "Arthur"])
            }
        }
        #expect(error?.message == "UNIQUE constraint failed: t.code")
        #expect(error?.arguments == "['a', 'Arthur']")
        #expect(error?.description.contains("['a', 'Arthur']") == true)
        #expect(try test.writer.count("t") == 1)
    }

    @Test func aFileThatIsNotADatabaseThrowsNotADB() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("garbage.sqlite")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: URL(fileURLWithPath: path))
        let queueError = databaseError { _ = try DatabaseQueue(path: path) }
        #expect(queueError?.resultCode == .SQLITE_NOTADB)
        #expect(queueError?.message?.contains("not a database") == true)
        let poolError = databaseError { _ = try DatabasePool(path: path) }
        #expect(poolError?.resultCode == .SQLITE_NOTADB)
        var configuration = Configuration()
        configuration.readonly = true
        let readonlyError = databaseError { _ = try DatabaseQueue(path: path, configuration: configuration) }
        #expect(readonlyError?.resultCode == .SQLITE_NOTADB)
        // The file is left as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 4096)
    }

    @Test func aMissingDirectoryThrowsCantOpen() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path("missing/db.sqlite")
        let queueError = databaseError { _ = try DatabaseQueue(path: path) }
        #expect(queueError?.resultCode == .SQLITE_CANTOPEN)
        #expect(queueError?.message?.contains(path) == true)
        let poolError = databaseError { _ = try DatabasePool(path: path) }
        #expect(poolError?.resultCode == .SQLITE_CANTOPEN)
    }

    @Test(arguments: DatabaseKind.allCases)
    func everyAccessToAClosedDatabaseThrowsMisuse(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.label = "ClosedDB"
        let test = try kind.make(configuration: configuration)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        _ = try await writer.read { db in try db.count("t") }  // opens a reader in a pool
        writer.close()
        writer.close()  // closing again does nothing

        func check(_ error: DatabaseError?, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(error?.resultCode == .SQLITE_MISUSE, sourceLocation: sourceLocation)
            #expect(error?.message == "the connection is closed", sourceLocation: sourceLocation)
            #expect(error?.description.contains("ClosedDB") == true, sourceLocation: sourceLocation)
        }
        check(databaseError { _ = try writer.read { db in try db.count("t") } })
        check(databaseError { try writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } })
        check(databaseError { try writer.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } })
        check(await databaseError { _ = try await writer.read { db in try db.count("t") } })
        check(await databaseError { try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } })
        check(await databaseError {
            try await writer.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        })
        // Nothing was written.
        if let path = test.path {
            #expect(try DatabaseQueue(path: path).count("t") == 0)
        }
    }

    @Test func resultCodesDescribeThemselves() {
        #expect(ResultCode.SQLITE_BUSY.description == "5 (database is locked)")
        #expect(ResultCode(rawValue: 1555).primaryResultCode == .SQLITE_CONSTRAINT)
        let error = DatabaseError(resultCode: .SQLITE_RANGE, message: "m", sql: "SELECT ?", arguments: [1], connectionLabel: "L")
        #expect(error.description == "SQLite error 25 (column index out of range): m - while executing `SELECT ?` with arguments [1] (connection L)")
    }
}
