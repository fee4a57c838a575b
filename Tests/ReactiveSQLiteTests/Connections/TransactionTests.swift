import DatabaseTestSupport
import ReactiveSQLite
import Testing

@Suite struct TransactionTests {
    private func makeDatabase(_ kind: DatabaseKind) throws -> TestDatabase {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
        }
        return test
    }

    @Test(arguments: DatabaseKind.allCases)
    func writeCommitsWhenTheBlockReturns(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let result = try test.writer.write { db in
            #expect(db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO t (name) VALUES ('a'), ('b')")
            return "done"
        }
        #expect(result == "done")
        #expect(try test.writer.count("t") == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func writeRollsBackAndRethrowsTheErrorUnchangedWhenTheBlockThrows(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        #expect(throws: TestError(tag: 42)) {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
                throw TestError(tag: 42)
            }
        }
        #expect(try test.writer.count("t") == 0)
        // The connection is usable again, outside of any transaction.
        try test.writer.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
    }

    @Test(arguments: DatabaseKind.allCases)
    func writeRollsBackWhenAStatementFails(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            }
        }
        #expect(error?.resultCode == .SQLITE_CONSTRAINT)
        #expect(try test.writer.count("t") == 0)
    }

    @Test(arguments: DatabaseKind.allCases)
    func asyncWriteCommitsAndRollsBack(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let id = try await test.writer.write { db in
            try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            return db.lastInsertedRowID
        }
        #expect(id == 1)
        await #expect(throws: TestError(tag: 7)) {
            try await test.writer.write { db in
                try db.execute(sql: "INSERT INTO t (name) VALUES ('b')")
                throw TestError(tag: 7)
            }
        }
        #expect(try await test.writer.read { db in try db.count("t") } == 1)
        try await test.writer.writeWithoutTransaction { db in
            #expect(!db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO t (name) VALUES ('c')")
        }
        #expect(try await test.writer.read { db in try db.count("t") } == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func writeWithoutTransactionCommitsEachStatementOnItsOwn(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.writeWithoutTransaction { db in
                #expect(!db.isInsideTransaction)
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
                #expect(!db.isInsideTransaction)
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            }
        }
        #expect(error?.extendedResultCode.rawValue == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(try test.writer.count("t") == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func writeWithoutTransactionLetsTheUserManageTransactions(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN")
            #expect(db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            try db.execute(sql: "ROLLBACK")
            #expect(!db.isInsideTransaction)
            try db.execute(sql: "BEGIN IMMEDIATE")
            try db.execute(sql: "INSERT INTO t (name) VALUES ('b')")
            try db.execute(sql: "COMMIT")
            #expect(!db.isInsideTransaction)
        }
        #expect(try test.writer.read { db in try SQLRequest<String>(sql: "SELECT name FROM t").fetchAll(db) } == ["b"])
    }

    /// `PRAGMA query_only = 0` inside a read does not open the way to writes.
    @Test(arguments: DatabaseKind.allCases)
    func readCannotWriteEvenAfterTurningQueryOnlyOff(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.read { db in
                try db.execute(sql: "PRAGMA query_only = 0")
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            }
        }
        #expect(error?.resultCode == .SQLITE_READONLY)
        #expect(error?.sql == "PRAGMA query_only = 0")
        #expect(try test.writer.count("t") == 0)
        // Reading the pragma, or any other, is a read.
        #expect(try await test.writer.read { db in try SQLRequest<Int>(sql: "PRAGMA query_only").fetchOne(db) } == 1)
        #expect(try await test.writer.read { db in try SQLRequest<Int>(sql: "PRAGMA user_version").fetchOne(db) } == 0)
        // The statement compiled in a write access, from the cache, is refused too.
        try await test.writer.writeWithoutTransaction { db in try db.cachedStatement(sql: "PRAGMA query_only = 0").execute() }
        let cached = databaseError {
            try test.writer.read { db in try db.cachedStatement(sql: "PRAGMA query_only = 0").execute() }
        }
        #expect(cached?.resultCode == .SQLITE_READONLY)
        // The next read starts read-only again, and writes work after it.
        let again = databaseError {
            try test.writer.read { db in try db.execute(sql: "DELETE FROM t") }
        }
        #expect(again?.resultCode == .SQLITE_READONLY)
        try await test.writer.write { db in try db.execute(sql: "INSERT INTO t (name) VALUES ('b')") }
        #expect(try test.writer.count("t") == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func readRunsInATransactionAndCannotWrite(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.read { db in
                #expect(db.isInsideTransaction)
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            }
        }
        #expect(error?.resultCode == .SQLITE_READONLY)
        let asyncError = await databaseError {
            try await test.writer.read { db in try db.execute(sql: "DELETE FROM t") }
        }
        #expect(asyncError?.resultCode == .SQLITE_READONLY)
        // Writes work again after a read.
        try synchronously { try test.writer.write { db in try db.execute(sql: "INSERT INTO t (name) VALUES ('b')") } }
        try await test.writer.write { db in try db.execute(sql: "INSERT INTO t (name) VALUES ('c')") }
        try synchronously { try test.writer.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO t (name) VALUES ('d')") } }
        #expect(try test.writer.count("t") == 3)
    }

    @Test(arguments: DatabaseKind.allCases)
    func inTransactionCommitsOrRollsBackInsideWriteWithoutTransaction(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.writeWithoutTransaction { db in
            try db.inTransaction {
                #expect(db.isInsideTransaction)
                try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
            }
            #expect(!db.isInsideTransaction)
            #expect(throws: TestError()) {
                try db.inTransaction(.exclusive) {
                    try db.execute(sql: "INSERT INTO t (name) VALUES ('b')")
                    throw TestError()
                }
            }
            #expect(!db.isInsideTransaction)
            #expect(try db.count("t") == 1)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func inTransactionInsideWriteThrowsBecauseATransactionIsOpen(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            let error = databaseError { try db.inTransaction { } }
            #expect(error?.resultCode == .SQLITE_ERROR)
            #expect(db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO t (name) VALUES ('a')")
        }
        #expect(try test.writer.count("t") == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func deferredForeignKeyViolationAtCommitRollsBackAndThrows(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (
                    id INTEGER PRIMARY KEY,
                    parentID INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                CREATE TABLE other (id INTEGER PRIMARY KEY);
                """)
        }
        let error = databaseError {
            try test.writer.write { db in
                try db.execute(sql: "INSERT INTO other DEFAULT VALUES")
                try db.execute(sql: "INSERT INTO child (parentID) VALUES (1)")  // deferred: no error yet
            }
        }
        #expect(error?.resultCode == .SQLITE_CONSTRAINT)
        #expect(error?.extendedResultCode.rawValue == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
        #expect(try test.writer.count("other") == 0)
        #expect(try test.writer.count("child") == 0)
        // No transaction was left open.
        try test.writer.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO child (parentID) VALUES (1)")
            try db.execute(sql: "INSERT INTO parent (id) VALUES (1)")  // satisfied before commit
        }
        #expect(try test.writer.count("child") == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func lastInsertedRowIDAndChangesCountDescribeTheLastStatement(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO t (id, name) VALUES (10, 'a')")
            #expect(db.lastInsertedRowID == 10)
            #expect(db.changesCount == 1)
            try db.execute(sql: "INSERT INTO t (name) VALUES ('b'), ('c')")
            #expect(db.lastInsertedRowID == 12)
            #expect(db.changesCount == 2)
            let total = db.totalChangesCount
            try db.execute(sql: "UPDATE t SET name = name || '!' WHERE id >= 11")
            #expect(db.changesCount == 2)
            #expect(db.totalChangesCount == total + 2)
            try db.execute(sql: "DELETE FROM t")
            #expect(db.changesCount == 3)
            #expect(db.lastInsertedRowID == 12)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func isInsideTransactionFollowsTheTransaction(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        try synchronously {
            try test.writer.read { db in #expect(db.isInsideTransaction) }
            try test.writer.write { db in #expect(db.isInsideTransaction) }
            try test.writer.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
        }
        #expect(try await test.writer.read { db in db.isInsideTransaction })
        #expect(try await test.writer.write { db in db.isInsideTransaction })
        #expect(try await test.writer.writeWithoutTransaction { db in db.isInsideTransaction } == false)
    }
}
