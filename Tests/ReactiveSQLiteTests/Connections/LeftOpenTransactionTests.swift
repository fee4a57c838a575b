import DatabaseTestSupport
import ReactiveSQLite
import TestSupport
import Testing

/// An access that ends with a transaction open that it did not open itself
/// (a `BEGIN` without `COMMIT` in `writeWithoutTransaction`, or one begun by
/// a commit observer) rolls it back and throws: no later access, read or
/// observation sees its uncommitted changes, and the writer works on.
@Suite struct LeftOpenTransactionTests {
    private func makeDatabase(_ kind: DatabaseKind) throws -> TestDatabase {
        let test = try kind.make()
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)") }
        return test
    }

    /// Checks the error of an access that left a transaction open.
    private func expectLeftOpenError(_ error: DatabaseError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.resultCode == .SQLITE_MISUSE, sourceLocation: sourceLocation)
        #expect(
            error?.message?.contains("the access left a transaction open: it was rolled back") == true,
            "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// Checks that the writer is outside of any transaction and that `t`
    /// holds `ids`, seen from the writer and from a fresh read, and that a
    /// later write commits (a row 1000, deleted afterwards).
    private func expectRows(
        _ ids: [Int], in writer: any DatabaseWriter, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fetchIDs = SQLRequest<Int>(sql: "SELECT id FROM t ORDER BY id")
        try writer.writeWithoutTransaction { db throws in
            #expect(!db.isInsideTransaction, sourceLocation: sourceLocation)
            #expect(try fetchIDs.fetchAll(db) == ids, "writer", sourceLocation: sourceLocation)
        }
        #expect(try writer.read { db in try fetchIDs.fetchAll(db) } == ids, "read", sourceLocation: sourceLocation)
        try writer.write { db in try db.execute(sql: "INSERT INTO t (id) VALUES (1000)") }
        #expect(
            try writer.read { db in try fetchIDs.fetchAll(db) } == ids + [1000], "after a write",
            sourceLocation: sourceLocation)
        try writer.write { db in try db.execute(sql: "DELETE FROM t WHERE id = 1000") }
    }

    @Test(arguments: DatabaseKind.allCases)
    func writeWithoutTransactionThatLeavesATransactionOpenRollsItBackAndThrows(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.writeWithoutTransaction { db in try db.execute(sql: "BEGIN; INSERT INTO t VALUES (1)") }
        }
        expectLeftOpenError(error)
        try expectRows([], in: test.writer)
    }

    @Test(arguments: DatabaseKind.allCases)
    func asyncWriteWithoutTransactionThatLeavesATransactionOpenRollsItBackAndThrows(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let error = await databaseError {
            try await test.writer.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
            }
        }
        expectLeftOpenError(error)
        try synchronously { try expectRows([], in: test.writer) }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aClosureThatThrowsWithATransactionOpenHasItRolledBackAndItsErrorRethrown(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        #expect(throws: TestError(tag: 1)) {
            try test.writer.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN; INSERT INTO t VALUES (1)")
                throw TestError(tag: 1)
            }
        }
        try synchronously { try expectRows([], in: test.writer) }
        await #expect(throws: TestError(tag: 2)) {
            try await test.writer.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN; INSERT INTO t VALUES (2)")
                throw TestError(tag: 2)
            }
        }
        try synchronously { try expectRows([], in: test.writer) }
    }

    @Test(arguments: DatabaseKind.allCases)
    func statementsCommittedBeforeTheLeftOpenTransactionStayCommitted(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let error = databaseError {
            try test.writer.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO t VALUES (1); BEGIN; INSERT INTO t VALUES (2)")
            }
        }
        expectLeftOpenError(error)
        try expectRows([1], in: test.writer)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aValueObservationStartedAfterwardsHasAFirstValueWithoutTheRolledBackRow(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let writer = test.writer
        let error = databaseError {
            try writer.writeWithoutTransaction { db in try db.execute(sql: "BEGIN; INSERT INTO t VALUES (1)") }
        }
        expectLeftOpenError(error)
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.tracking { db in
            try SQLRequest<Int>(sql: "SELECT id FROM t ORDER BY id").fetchAll(db)
        }.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [[]])
        try writer.writeSQL("INSERT INTO t VALUES (2)")
        #expect(try await recorder.wait(for: 2) == [[], [2]])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aClosureThatEndsItsOwnTransactionThrowsNothing(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        try synchronously {
            try test.writer.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN; INSERT INTO t VALUES (1); COMMIT")
                try db.execute(sql: "BEGIN; INSERT INTO t VALUES (2); ROLLBACK")
            }
        }
        try await test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE; INSERT INTO t VALUES (3); COMMIT")
        }
        try synchronously { try expectRows([1, 3], in: test.writer) }
    }

    /// The write's own transaction commits; the one its commit observer
    /// begins is rolled back, and the write says so.
    @Test(arguments: DatabaseKind.allCases)
    func aTransactionBegunByACommitObserverIsRolledBackAndTheWriteThrows(kind: DatabaseKind) throws {
        let test = try makeDatabase(kind)
        let isFirstCommit = Locked(true)
        let cancellable = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM t")).start(
            in: test.writer, onError: { Issue.record($0) }
        ) { db in
            let isFirst = isFirstCommit.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
            guard isFirst else { return }
            do {
                try db.execute(sql: "BEGIN")
            } catch {
                Issue.record(error)
            }
        }
        defer { cancellable.cancel() }
        let error = databaseError {
            try test.writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        }
        expectLeftOpenError(error)
        try expectRows([1], in: test.writer)
    }
}
