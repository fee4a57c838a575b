import DatabaseTestSupport
import ReactiveSQLite
import Testing

@Suite struct SavepointTests {
    private func makeDatabase(_ kind: DatabaseKind) throws -> TestDatabase {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (name TEXT)")
        }
        return test
    }

    private func names(_ db: Database) throws -> [String] {
        try SQLRequest<String>(sql: "SELECT name FROM t ORDER BY name").fetchAll(db)
    }

    private func insert(_ db: Database, _ name: String) throws {
        try db.execute(sql: "INSERT INTO t (name) VALUES (?)", arguments: [name])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aReleasedSavepointKeepsItsChanges(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try insert(db, "a")
            let value = try db.inSavepoint {
                try insert(db, "b")
                return 1
            }
            #expect(value == 1)
            #expect(try names(db) == ["a", "b"])
        }
        #expect(try test.writer.read(names) == ["a", "b"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func anInnerRollbackKeepsTheOuterChanges(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try insert(db, "a")
            try db.inSavepoint {
                try insert(db, "b")
                #expect(throws: TestError()) {
                    try db.inSavepoint {
                        try insert(db, "c")
                        throw TestError()
                    }
                }
                #expect(db.isInsideTransaction)
                try insert(db, "d")
            }
            #expect(try names(db) == ["a", "b", "d"])
        }
        #expect(try test.writer.read(names) == ["a", "b", "d"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func anOuterRollbackDropsTheReleasedInnerChanges(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try insert(db, "a")
            #expect(throws: TestError()) {
                try db.inSavepoint {
                    try insert(db, "b")
                    try db.inSavepoint { try insert(db, "c") }
                    throw TestError()
                }
            }
            #expect(try names(db) == ["a"])
        }
        #expect(try test.writer.read(names) == ["a"])

        // And a throwing write drops everything its savepoints released.
        #expect(throws: TestError()) {
            try test.writer.write { db in
                try db.inSavepoint { try insert(db, "x") }
                throw TestError()
            }
        }
        #expect(try test.writer.read(names) == ["a"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func threeLevelsRollBackOnlyTheFailingOneAndWhatItContains(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in
            try db.inSavepoint {
                try insert(db, "1")
                try? db.inSavepoint {
                    try insert(db, "2")
                    try db.inSavepoint { try insert(db, "3") }
                    throw TestError()
                }
                try db.inSavepoint { try insert(db, "4") }
            }
        }
        #expect(try test.writer.read(names) == ["1", "4"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSavepointOutsideOfATransactionActsAsATransaction(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.writeWithoutTransaction { db in
            try db.inSavepoint {
                #expect(db.isInsideTransaction)
                try insert(db, "a")
            }
            #expect(!db.isInsideTransaction)
            #expect(throws: TestError()) {
                try db.inSavepoint {
                    try insert(db, "b")
                    throw TestError()
                }
            }
            #expect(!db.isInsideTransaction)
        }
        #expect(try test.writer.read(names) == ["a"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aDeferredForeignKeyViolationAtTheOutermostReleaseRollsBackAndThrows(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (parentID INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                """)
        }
        try test.writer.writeWithoutTransaction { db in
            let error = databaseError {
                try db.inSavepoint { try db.execute(sql: "INSERT INTO child (parentID) VALUES (1)") }
            }
            #expect(error?.extendedResultCode.rawValue == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
            #expect(!db.isInsideTransaction)
            let count = try db.count("child")
            #expect(count == 0)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func savepointsWorkInsideReads(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        try test.writer.write { db in try insert(db, "a") }
        let result = try test.writer.read { db in
            try db.inSavepoint { try names(db) }
        }
        #expect(result == ["a"])
    }
}
