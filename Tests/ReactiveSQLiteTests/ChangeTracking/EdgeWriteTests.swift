import DatabaseTestSupport
import DatabaseRegions
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// Writes at the edges of what SQLite's hooks report (issue 15; see the
/// SQLite facts of the engine's design notes, §8): virtual tables, RETURNING
/// and OR FAIL outside a transaction, generated columns, statements that
/// fail inside a transaction, VACUUM, views redefined, savepoints begun
/// before an observer arrived, and `cancel()` after `close()`. Each test
/// runs on the three kinds of database and both change-tracking paths,
/// unless it concerns one path only.
///
/// Value observations are checked against a fresh fetch after each commit
/// (`FreshValueProbe`); region observations count their calls, which
/// happen before the committing access returns.
@Suite(.serialized, .timeLimit(.minutes(10)), .onItsOwnThread) struct EdgeWriteTests {
    // MARK: - 1. Virtual tables

    /// A virtual table, the query its observers run, and writes of it.
    struct VirtualTable: Sendable, CustomTestStringConvertible {
        var name: String
        var schema: String
        /// Rows matching a condition (a full-text match, a range).
        var query: String
        var insert: String
        var update: String
        var delete: String
        /// A write of the table that changes no row.
        var writesNothing: String
        /// Several statements writing the table, for one transaction.
        var severalStatements: String
        var testDescription: String { name }

        static let all: [VirtualTable] = [
            VirtualTable(
                name: "FTS5",
                schema: "CREATE VIRTUAL TABLE document USING fts5(body)",
                query: "SELECT rowid, body FROM document WHERE document MATCH 'x' ORDER BY rowid",
                insert: "INSERT INTO document (rowid, body) VALUES (1, 'x y')",
                update: "UPDATE document SET body = 'x z' WHERE rowid = 1",
                delete: "DELETE FROM document WHERE rowid = 1",
                writesNothing: "DELETE FROM document WHERE rowid = 999",
                severalStatements: """
                    INSERT INTO document (rowid, body) VALUES (2, 'x a');
                    INSERT INTO document (rowid, body) VALUES (3, 'b');
                    UPDATE document SET body = 'x b' WHERE rowid = 3;
                    """),
            VirtualTable(
                name: "FTS4",
                schema: "CREATE VIRTUAL TABLE document USING fts4(body)",
                query: "SELECT rowid, body FROM document WHERE document MATCH 'x' ORDER BY rowid",
                insert: "INSERT INTO document (rowid, body) VALUES (1, 'x y')",
                update: "UPDATE document SET body = 'x z' WHERE rowid = 1",
                delete: "DELETE FROM document WHERE rowid = 1",
                writesNothing: "DELETE FROM document WHERE rowid = 999",
                severalStatements: """
                    INSERT INTO document (rowid, body) VALUES (2, 'x a');
                    INSERT INTO document (rowid, body) VALUES (3, 'b');
                    UPDATE document SET body = 'x b' WHERE rowid = 3;
                    """),
            VirtualTable(
                name: "R*Tree",
                schema: "CREATE VIRTUAL TABLE box USING rtree(id, minX, maxX)",
                query: "SELECT id, minX, maxX FROM box WHERE minX <= 10 ORDER BY id",
                insert: "INSERT INTO box (id, minX, maxX) VALUES (1, 0, 5)",
                update: "UPDATE box SET maxX = 6 WHERE id = 1",
                delete: "DELETE FROM box WHERE id = 1",
                writesNothing: "DELETE FROM box WHERE id = 999",
                severalStatements: """
                    INSERT INTO box (id, minX, maxX) VALUES (2, 1, 2);
                    INSERT INTO box (id, minX, maxX) VALUES (3, 20, 30);
                    UPDATE box SET minX = 2 WHERE id = 3;
                    """),
        ]
    }

    @Test(arguments: EdgeCase.all(VirtualTable.all))
    func aVirtualTableNotifiesItsObserversOncePerTransactionThatWritesIt(_ test: EdgeCase<VirtualTable>) async throws {
        let table = test.variant
        let database = try test.kind.make(changeTracking: test.tracking, sql: table.schema)
        let writer = database.writer
        let (counter, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: table.query)])
        defer { regionCancellable.cancel() }
        let fetch: @Sendable (Database) throws -> [Row] = { try SQLRequest<Row>(sql: table.query).fetchAll($0) }
        let probes = [
            FreshValueProbe("tracking", ValueObservation.tracking(fetch), in: writer, fetch: fetch),
            FreshValueProbe("trackingAll", ValueObservation.trackingAll(SQLRequest<Row>(sql: table.query)), in: writer, fetch: fetch),
        ]
        defer { probes.forEach { $0.cancel() } }
        for probe in probes { try await probe.expectFreshValue(in: writer, after: "start") }

        let steps: [(sql: String, notifications: Int)] = [
            (table.insert, 1), (table.update, 1), (table.delete, 1), (table.writesNothing, 0),
            (table.severalStatements, 1),
        ]
        for step in steps {
            #expect(try counter.calls { try writer.writeSQL(step.sql) } == step.notifications, "\(step.sql)")
            for probe in probes { try await probe.expectFreshValue(in: writer, after: step.sql) }
        }
        #expect(try await writer.read { try fetch($0) }.count == 2)

        // Rolled back: nothing.
        let calls = try counter.calls {
            try writer.writeSQLWithoutTransaction("BEGIN; \(table.delete); \(table.insert); ROLLBACK")
            try writer.writeSQLWithoutTransaction("BEGIN; SAVEPOINT s; \(table.insert); ROLLBACK TO s; RELEASE s; COMMIT")
        }
        #expect(calls == 0, "rolled back")
    }

    /// A trigger of a normal table writes an FTS5 table: the observers of
    /// the FTS5 table are told, as are those of the normal table.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aTriggerThatWritesAnFTS5TableNotifiesItsObservers(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let database = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
            CREATE VIRTUAL TABLE noteIndex USING fts5(text);
            CREATE TRIGGER note_ai AFTER INSERT ON note BEGIN
                INSERT INTO noteIndex (rowid, text) VALUES (NEW.id, NEW.text);
            END;
            CREATE TRIGGER note_ad AFTER DELETE ON note BEGIN
                DELETE FROM noteIndex WHERE rowid = OLD.id;
            END;
            """)
        let writer = database.writer
        let query = "SELECT rowid, text FROM noteIndex WHERE noteIndex MATCH 'x' ORDER BY rowid"
        let (indexCounter, indexCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: query)])
        let (noteCounter, noteCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM note")])
        defer {
            indexCancellable.cancel()
            noteCancellable.cancel()
        }
        let fetch: @Sendable (Database) throws -> [Row] = { try SQLRequest<Row>(sql: query).fetchAll($0) }
        let probe = FreshValueProbe("noteIndex", ValueObservation.tracking(fetch), in: writer, fetch: fetch)
        defer { probe.cancel() }
        try await probe.expectFreshValue(in: writer, after: "start")

        let steps = [
            "INSERT INTO note (text) VALUES ('x one')",
            "INSERT INTO note (text) VALUES ('x two'); INSERT INTO note (text) VALUES ('y')",
            "DELETE FROM note WHERE id = 1",
        ]
        for sql in steps {
            let (noteBefore, indexBefore) = (noteCounter.value, indexCounter.value)
            try writer.writeSQL(sql)
            #expect(noteCounter.value - noteBefore == 1, "\(sql): the observers of the normal table")
            #expect(indexCounter.value - indexBefore == 1, "\(sql): the observers of the FTS5 table")
            try await probe.expectFreshValue(in: writer, after: sql)
        }
        #expect(try await writer.read { try fetch($0) }.count == 1)
    }

    // MARK: - 2. RETURNING outside a transaction

    /// `player` refers to `team` with a deferred foreign key: an insertion
    /// with a missing team fails at commit.
    static let returningSchema = """
        CREATE TABLE team (id INTEGER PRIMARY KEY);
        CREATE TABLE player (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            teamId INTEGER REFERENCES team(id) DEFERRABLE INITIALLY DEFERRED);
        """

    static let playerNames: @Sendable (Database) throws -> [String] = {
        try SQLRequest<String>(sql: "SELECT name FROM player ORDER BY id").fetchAll($0)
    }

    /// Outside a transaction, an `INSERT ... RETURNING` commits when its
    /// statement halts: at its last step, or when it is reset after the
    /// rows the caller read. Observers are told before the access returns,
    /// and nothing is left for a later statement to notify.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aReturningStatementOutsideATransactionNotifiesBeforeItsAccessReturns(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let database = try kind.make(changeTracking: tracking, sql: Self.returningSchema)
        let writer = database.writer
        let (players, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM player")])
        defer { regionCancellable.cancel() }
        let names = FreshValueProbe("names", ValueObservation.tracking(Self.playerNames), in: writer, fetch: Self.playerNames)
        defer { names.cancel() }
        try await names.expectFreshValue(in: writer, after: "start")

        // fetchOne reads one row; the statement commits when it is reset.
        var id: Int64?
        let fetchOneCalls = try players.calls {
            id = try writer.writeWithoutTransaction { db in
                try SQLRequest<Int64>(sql: "INSERT INTO player (name) VALUES ('a') RETURNING id").fetchOne(db)
            }
        }
        #expect(id == 1)
        #expect(fetchOneCalls == 1, "fetchOne: notifications when writeWithoutTransaction returned")
        try await names.expectFreshValue(in: writer, after: "fetchOne")

        // A cursor read to its end: the commit happens at its last step.
        var ids: [Int64] = []
        let cursorCalls = try players.calls {
            ids = try writer.writeWithoutTransaction { db in
                let cursor = try SQLRequest<Int64>(sql: "INSERT INTO player (name) VALUES ('b'), ('c') RETURNING id")
                    .fetchCursor(db)
                var ids: [Int64] = []
                while let id = try cursor.next() { ids.append(id) }
                return ids
            }
        }
        #expect(ids == [2, 3])
        #expect(cursorCalls == 1, "a cursor read to its end: notifications when writeWithoutTransaction returned")
        try await names.expectFreshValue(in: writer, after: "a cursor read to its end")

        // A cursor dropped after one row: the commit happens when it is reset.
        var first: Int64?
        let droppedCursorCalls = try players.calls {
            first = try writer.writeWithoutTransaction { db -> Int64? in
                let cursor = try SQLRequest<Int64>(sql: "INSERT INTO player (name) VALUES ('d'), ('e') RETURNING id")
                    .fetchCursor(db)
                return try cursor.next()
            }
        }
        #expect(first == 4)
        #expect(droppedCursorCalls == 1, "a cursor dropped after one row: notifications when writeWithoutTransaction returned")
        try await names.expectFreshValue(in: writer, after: "a cursor dropped after one row")

        // An unrelated statement notifies nothing that was left pending.
        let unrelatedCalls = try players.calls { try writer.writeSQLWithoutTransaction("INSERT INTO team (id) VALUES (1)") }
        #expect(unrelatedCalls == 0, "an unrelated statement notified the observers of player")
        #expect(try writer.count("player") == 5)
    }

    enum CommitFailure: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// A missing team, behind a deferred foreign key.
        case deferredForeignKey
        /// A transaction observer whose `databaseWillCommit()` throws.
        case observerVeto
        var testDescription: String { rawValue }
    }

    enum ReturningRead: String, CaseIterable {
        case fetchOne
        case cursorReadToItsEnd
        case cursorDroppedAfterOneRow
    }

    /// The commit of an `INSERT ... RETURNING` outside a transaction fails:
    /// the fetch throws (the observer's error for a veto), no row is
    /// there, and no observation is told. A cursor dropped after one row
    /// has nobody to throw to: the row is not there either.
    @Test(arguments: EdgeCase.all(CommitFailure.allCases))
    func aReturningStatementWhoseCommitFailsThrowsAndNotifiesNothing(_ test: EdgeCase<CommitFailure>) async throws {
        for read in ReturningRead.allCases {
            let database = try test.kind.make(changeTracking: test.tracking, sql: Self.returningSchema)
            let writer = database.writer
            let (players, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM player")])
            defer { regionCancellable.cancel() }
            let names = FreshValueProbe(
                "names (\(read))", ValueObservation.tracking(Self.playerNames), in: writer, fetch: Self.playerNames)
            defer { names.cancel() }
            try await names.expectFreshValue(in: writer, after: "start")

            let veto = EventLog()
            veto.willCommitError = TestError(tag: 15)
            let team = test.variant == .deferredForeignKey ? "42" : "NULL"
            let sql = "INSERT INTO player (name, teamId) VALUES ('a', \(team)), ('b', \(team)) RETURNING id"
            let result = Result {
                try synchronously {
                    try writer.writeWithoutTransaction { db in
                        if test.variant == .observerVeto {
                            db.add(transactionObserver: veto, extent: .nextTransaction)
                        }
                        let request = SQLRequest<Int64>(sql: sql)
                        switch read {
                        case .fetchOne:
                            _ = try request.fetchOne(db)
                        case .cursorReadToItsEnd:
                            let cursor = try request.fetchCursor(db)
                            while try cursor.next() != nil {}
                        case .cursorDroppedAfterOneRow:
                            let cursor = try request.fetchCursor(db)
                            _ = try cursor.next()
                        }
                    }
                }
            }
            if read != .cursorDroppedAfterOneRow {
                switch (test.variant, result) {
                case (_, .success):
                    Issue.record("\(read): the failed commit threw nothing")
                case (.deferredForeignKey, .failure(let error)):
                    #expect((error as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT, "\(read): \(error)")
                case (.observerVeto, .failure(let error)):
                    #expect(error as? TestError == TestError(tag: 15), "\(read): \(error)")
                }
            }
            #expect(try writer.count("player") == 0, "\(read)")
            #expect(players.value == 0, "\(read): notified of a commit that failed")

            // A later commit: the observations see it, and never saw the rows
            // of the failed one.
            let laterCalls = players.calls {
                do {
                    try writer.writeSQL("INSERT INTO player (name) VALUES ('later')")
                } catch {
                    Issue.record("\(read): a later commit failed: \(error)")
                }
            }
            #expect(laterCalls == 1, "\(read): later commit")
            try await names.expectFreshValue(in: writer, after: "a later commit")
            #expect(names.recorder.values.allSatisfy { !$0.contains("a") && !$0.contains("b") }, "\(read): \(names.recorder.values)")
        }
    }

    // MARK: - 3. OR FAIL outside a transaction

    /// A statement that fails with the FAIL resolution, after it changed
    /// rows.
    struct PartialFailure: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        var testDescription: String { name }

        static let all = [
            PartialFailure(name: "INSERT OR FAIL", sql: "INSERT OR FAIL INTO t (name) VALUES ('a'), ('b'), ('a')"),
            PartialFailure(name: "RAISE(FAIL)", sql: "INSERT INTO t (name) VALUES ('a'), ('b'), ('fail')"),
        ]
    }

    /// A row of `t`.
    struct NamedRow: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "t"
        var id: Int64
        var name: String

        init(row: Row) throws {
            id = try row["id"]
            name = try row["name"]
        }

        /// The rows that set differences lead to, from no row.
        static func state(after differences: [SetDifference<NamedRow>]) -> [Int64: String] {
            var state: [Int64: String] = [:]
            for difference in differences {
                for row in difference.deleted { state[row.id] = nil }
                for row in difference.inserted + difference.updated { state[row.id] = row.name }
            }
            return state
        }

        static let fetchState: @Sendable (Database) throws -> [Int64: String] = { db in
            var state: [Int64: String] = [:]
            for row in try SQLRequest<Row>(sql: "SELECT id, name FROM t").fetchAll(db) { state[try row[0]] = try row[1] }
            return state
        }
    }

    /// Outside a transaction, the rows changed before the failing one are
    /// committed: observers are told once, when the statement throws, and
    /// the incremental set differences reach the state of a fresh fetch,
    /// then and after later commits.
    @Test(arguments: EdgeCase.all(PartialFailure.all))
    func aStatementThatFailsOutsideATransactionNotifiesTheRowsItCommitted(_ test: EdgeCase<PartialFailure>) async throws {
        let database = try test.kind.make(changeTracking: test.tracking, sql: """
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
            CREATE TRIGGER t_fail BEFORE INSERT ON t WHEN NEW.name = 'fail' BEGIN
                SELECT RAISE(FAIL, 'failed on purpose');
            END;
            """)
        let writer = database.writer
        let (counter, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT name FROM t")])
        defer { regionCancellable.cancel() }
        let fetchNames: @Sendable (Database) throws -> [String] = {
            try SQLRequest<String>(sql: "SELECT name FROM t ORDER BY id").fetchAll($0)
        }
        let names = FreshValueProbe(
            "names", ValueObservation.trackingAll(SQLRequest<String>(sql: "SELECT name FROM t ORDER BY id")),
            in: writer, fetch: fetchNames)
        let differences = FreshValueProbe(
            "set differences", ValueObservation.trackingSetDifferences(NamedRow.orderByPrimaryKey()),
            in: writer, fetch: NamedRow.fetchState, state: NamedRow.state(after:))
        defer {
            names.cancel()
            differences.cancel()
        }
        try await names.expectFreshValue(in: writer, after: "start")

        var error: DatabaseError?
        let calls = counter.calls {
            error = databaseError { try writer.writeWithoutTransaction { db in try db.execute(sql: test.variant.sql) } }
        }
        #expect(error?.resultCode == .SQLITE_CONSTRAINT)
        #expect(try await writer.read(fetchNames) == ["a", "b"])
        #expect(calls == 1, "notifications of the rows that the failed statement committed")
        try await names.expectFreshValue(in: writer, after: test.variant.name)
        try await differences.expectFreshValue(in: writer, after: test.variant.name)

        let later = [
            "INSERT INTO t (name) VALUES ('c')", "UPDATE t SET name = 'B' WHERE name = 'b'", "DELETE FROM t WHERE name = 'a'",
        ]
        for sql in later {
            #expect(try counter.calls { try writer.writeSQL(sql) } == 1, "\(sql)")
            try await names.expectFreshValue(in: writer, after: sql)
            try await differences.expectFreshValue(in: writer, after: sql)
        }
    }

    // MARK: - 4. Generated columns

    /// A VIRTUAL column declared before other columns, and a STORED one.
    static let generatedSchema = """
        CREATE TABLE g (id INTEGER PRIMARY KEY, a, v AS (a * 2) VIRTUAL, c, s AS (c || 'x') STORED, d);
        INSERT INTO g (id, a, c, d) VALUES (1, 1, 'c', 'd');
        """

    /// The observers of a column are told of the updates of that column and
    /// of the columns it is generated from, and only of those; the
    /// observers of a generated column may also be told of other updates
    /// (a potential change, when its old value is not known).
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func generatedColumnsNotifyTheObserversOfTheirColumnsAndOfTheColumnsTheyComeFrom(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let database = try kind.make(changeTracking: tracking, sql: Self.generatedSchema)
        let writer = database.writer
        let columns = ["a", "v", "c", "s", "d"]
        let generated: Set<String> = ["v", "s"]
        let counters = columns.map { column in countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT \(column) FROM g")]) }
        let probes = columns.map { column in
            let fetch: @Sendable (Database) throws -> [Row] = { try SQLRequest<Row>(sql: "SELECT \(column) FROM g").fetchAll($0) }
            return FreshValueProbe("SELECT \(column) FROM g", ValueObservation.tracking(fetch), in: writer, fetch: fetch)
        }
        defer {
            counters.forEach { $0.1.cancel() }
            probes.forEach { $0.cancel() }
        }
        for probe in probes { try await probe.expectFreshValue(in: writer, after: "start") }

        let steps: [(sql: String, notified: Set<String>)] = [
            ("UPDATE g SET c = 'c2'", ["c", "s"]),
            ("UPDATE g SET d = 'd2'", ["d"]),
            ("UPDATE g SET a = 2", ["a", "v"]),
            ("UPDATE g SET c = 'c3', d = 'd3'", ["c", "s", "d"]),
            ("UPDATE g SET a = 3, d = 'd4'", ["a", "v", "d"]),
            ("INSERT INTO g (a, c, d) VALUES (5, 'n', 'n')", Set(columns)),
            ("DELETE FROM g WHERE id = 2", Set(columns)),
        ]
        for step in steps {
            let before = counters.map(\.0.value)
            try writer.writeSQL(step.sql)
            let notified = Set(zip(columns, zip(before, counters)).compactMap { column, counts in
                counts.1.0.value != counts.0 ? column : nil
            })
            let missed = step.notified.subtracting(notified)
            let extra = notified.subtracting(step.notified).subtracting(generated)
            #expect(missed.isEmpty, "\(step.sql): the observers of \(missed.sorted()) were not told")
            #expect(extra.isEmpty, "\(step.sql): the observers of \(extra.sorted()) were told")
            for probe in probes { try await probe.expectFreshValue(in: writer, after: step.sql) }
        }
    }

    /// With the pre-update hook, a VIRTUAL column's observers are told of
    /// the updates of the columns it is computed from, through other
    /// generated columns, and of those only: names quoted or in another
    /// case, a function named like a column, a `CAST(... AS ...)` elsewhere
    /// in the definition. (With the update hook alone, every update of the
    /// table tells them: no column is known.)
    @Test(arguments: DatabaseKind.allCases)
    func virtualColumnsNotifyOnlyForTheColumnsTheyAreComputedFrom(kind: DatabaseKind) async throws {
        let database = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE "Gen" (
                id INTEGER PRIMARY KEY,
                "A" INTEGER DEFAULT (CAST('1' AS INTEGER)),
                [b c] TEXT,
                "v" AS (a * 2) VIRTUAL,
                w GENERATED ALWAYS AS ("V" + length([b c])) VIRTUAL,
                s AS (upper(d)) STORED,
                x AS (coalesce(s, 'none')),
                d TEXT, upper TEXT, e -- upper: a column named like a function
            );
            INSERT INTO "Gen" (id, a, "b c", d, upper, e) VALUES (1, 1, 'b', 'd', 'u', 'e');
            """)
        let writer = database.writer
        let columns = ["a", "\"b c\"", "v", "w", "s", "x", "d", "upper", "e"]
        let counters = columns.map { column in
            countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT \(column) FROM \"Gen\"")])
        }
        defer { counters.forEach { $0.1.cancel() } }
        let steps: [(sql: String, notified: Set<String>)] = [
            ("UPDATE \"Gen\" SET e = 'e2'", ["e"]),
            ("UPDATE \"Gen\" SET a = 2", ["a", "v", "w"]),
            ("UPDATE \"Gen\" SET \"b c\" = 'bb'", ["\"b c\"", "w"]),
            ("UPDATE \"Gen\" SET d = 'd2'", ["d", "s", "x"]),
            // `upper`, a column, is named in `s`'s expression: `x`, computed
            // from `s`, may change (`s` is stored: its value tells it did not).
            ("UPDATE \"Gen\" SET upper = 'u2'", ["upper", "x"]),
            ("UPDATE \"Gen\" SET e = 'e3', a = a", ["e"]),
        ]
        for step in steps {
            let before = counters.map(\.0.value)
            try writer.writeSQL(step.sql)
            // Region observers are told in the commit: the counts are final.
            let notified = Set(zip(columns, zip(before, counters)).compactMap { column, counts in
                counts.1.0.value != counts.0 ? column : nil
            })
            #expect(notified == step.notified, "\(step.sql)")
        }
    }

    // MARK: - 5. A statement that fails inside a transaction

    /// A statement that fails with ABORT after it changed rows of `u`: SQLite
    /// undoes it, and the transaction goes on.
    struct AbortedStatement: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        /// Whether it runs inside a savepoint, released afterwards.
        var inSavepoint = false
        var testDescription: String { inSavepoint ? "\(name), in a savepoint" : name }

        static let statements = [
            AbortedStatement(name: "NOT NULL", sql: "INSERT INTO u (name) VALUES ('ok'), (NULL)"),
            AbortedStatement(name: "CHECK", sql: "INSERT INTO u (name, n) VALUES ('ok', 1), ('ok2', 20)"),
            AbortedStatement(name: "UNIQUE", sql: "INSERT INTO u (name) VALUES ('ok'), ('existing')"),
            AbortedStatement(name: "RAISE(ABORT)", sql: "INSERT INTO u (name) VALUES ('ok'), ('abort')"),
            AbortedStatement(name: "UPDATE failing a CHECK", sql: "UPDATE u SET n = n + 5"),
            AbortedStatement(name: "DELETE failing a foreign key", sql: "DELETE FROM u"),
        ]
        static let all = statements + statements.map { statement in
            var statement = statement
            statement.inSavepoint = true
            return statement
        }
    }

    /// The writes of a statement that failed and was undone reach no
    /// observer: neither the observations of its table, nor the events of
    /// a transaction observer; the other writes of the transaction do.
    @Test(arguments: EdgeCase.all(AbortedStatement.all))
    func aStatementThatFailsInsideATransactionNotifiesNothing(_ test: EdgeCase<AbortedStatement>) async throws {
        let database = try test.kind.make(changeTracking: test.tracking, sql: """
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE u (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                n INTEGER NOT NULL DEFAULT 0 CHECK (n < 10));
            CREATE TRIGGER u_abort BEFORE INSERT ON u WHEN NEW.name = 'abort' BEGIN
                SELECT RAISE(ABORT, 'aborted on purpose');
            END;
            CREATE TABLE uChild (id INTEGER PRIMARY KEY, uId INTEGER REFERENCES u(id));
            INSERT INTO u (id, name, n) VALUES (1, 'existing', 0), (2, 'other', 6);
            INSERT INTO uChild (uId) VALUES (2);
            """)
        let writer = database.writer
        let (tCounter, tCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM t")])
        let (uCounter, uCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM u")])
        defer {
            tCancellable.cancel()
            uCancellable.cancel()
        }
        let fetchU: @Sendable (Database) throws -> [Row] = { try SQLRequest<Row>(sql: "SELECT * FROM u ORDER BY id").fetchAll($0) }
        let fetchT: @Sendable (Database) throws -> [Row] = { try SQLRequest<Row>(sql: "SELECT * FROM t ORDER BY id").fetchAll($0) }
        let uValues = FreshValueProbe("u", ValueObservation.tracking(fetchU), in: writer, fetch: fetchU)
        let tValues = FreshValueProbe("t", ValueObservation.tracking(fetchT), in: writer, fetch: fetchT)
        defer {
            uValues.cancel()
            tValues.cancel()
        }
        try await uValues.expectFreshValue(in: writer, after: "start")
        try await tValues.expectFreshValue(in: writer, after: "start")
        let log = CommittedEventLog()
        try synchronously {
            try writer.writeWithoutTransaction { db in db.add(transactionObserver: log, extent: .databaseLifetime) }
        }
        let uBefore = try await writer.read(fetchU)

        let statement = test.variant
        try synchronously {
            try writer.write { db in
                try db.execute(sql: "INSERT INTO t (name) VALUES ('x')")
                if statement.inSavepoint { try db.execute(sql: "SAVEPOINT s") }
                do {
                    try db.execute(sql: statement.sql)
                    Issue.record("\(statement.sql) did not fail")
                } catch let error as DatabaseError {
                    #expect(error.resultCode == .SQLITE_CONSTRAINT, "\(error)")
                }
                if statement.inSavepoint { try db.execute(sql: "RELEASE s") }
            }
        }
        #expect(try await writer.read(fetchU) == uBefore, "SQLite undid the failed statement")
        #expect(tCounter.value == 1)
        #expect(uCounter.value == 0, "the observers of u were told of a statement that SQLite undid")
        let (committed, pending) = log.take()
        let events = committed.joined()
        let uEvents = events.filter { $0.kind.tableName.lowercased() == "u" }
        #expect(uEvents.isEmpty, "events of the undone statement: \(uEvents.map(describeEvent))")
        #expect(events.filter { $0.kind.tableName.lowercased() == "t" } == [DatabaseEvent(kind: .insert(tableName: "t"), rowID: 1)])
        #expect(pending.isEmpty, "events after the last commit: \(pending.map(describeEvent))")
        try await tValues.expectFreshValue(in: writer, after: "the transaction")

        // A commit that changes u, as a barrier: u's observation was not
        // told before, and delivers the state after the barrier next.
        #expect(try uCounter.calls { try writer.writeSQL("INSERT INTO u (name) VALUES ('barrier')") } == 1)
        let fresh = try await uValues.expectFreshValue(in: writer, after: "the barrier")
        if fresh {
            let uAfter = try await writer.read(fetchU)
            #expect(uValues.recorder.values == [uBefore, uAfter], "u's values")
        }
    }

    // MARK: - 6. cancel() after close()

    /// A writer closed while observations run, whose observations are
    /// cancelled afterwards: the writer, and what the observations'
    /// closures captured, are released. No access can run after `close()`
    /// for the observers to leave the broker in.
    @Test(arguments: DatabaseKind.allCases, [false, true])
    func observationsCancelledAfterCloseReleaseEverything(kind: DatabaseKind, dropsCancellables: Bool) async throws {
        let directory = try TemporaryDirectory()
        let isReleased: [@Sendable () -> Bool]
        do {
            let writer: any DatabaseWriter
            let writerIsReleased: @Sendable () -> Bool
            switch kind {
            case .inMemoryQueue:
                let queue = try DatabaseQueue()
                let reference = WeakReference(queue)
                writer = queue
                writerIsReleased = { reference.isReleased }
            case .fileQueue:
                let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
                let reference = WeakReference(queue)
                writer = queue
                writerIsReleased = { reference.isReleased }
            case .pool:
                let pool = try DatabasePool(path: directory.path("db.sqlite"))
                let reference = WeakReference(pool)
                writer = pool
                writerIsReleased = { reference.isReleased }
            }
            try writer.writeSQL(playerSchemaSQL)
            let valueToken = LifetimeToken()
            let regionToken = LifetimeToken()
            let valueReference = WeakReference(valueToken)
            let regionReference = WeakReference(regionToken)
            isReleased = [writerIsReleased, { valueReference.isReleased }, { regionReference.isReleased }]
            let values = Recorder<Int>()
            let regionCalls = ChangeCounter()
            // An error after close() is not what this test is about.
            var cancellables: [AnyDatabaseCancellable] = [
                ValueObservation.trackingCount(ObservedPlayer.all()).start(in: writer, scheduling: .observationQueue) { _ in
                } onChange: { count in
                    withExtendedLifetime(valueToken) { values.append(count) }
                },
                DatabaseRegionObservation(tracking: ObservedPlayer.all()).start(in: writer) { _ in
                } onChange: { _ in
                    withExtendedLifetime(regionToken) { regionCalls.increment() }
                },
            ]
            try await values.wait(for: 1)
            try writer.writeSQL("INSERT INTO player (name) VALUES ('Dan')")
            try await values.wait(for: 2)
            #expect(regionCalls.value == 1)
            writer.close()
            if dropsCancellables {
                cancellables.removeAll()
            } else {
                for cancellable in cancellables { cancellable.cancel() }
            }
            withExtendedLifetime(cancellables) {}
        }
        do {
            try await waitUntil { isReleased.allSatisfy { $0() } }
        } catch {
            let names = ["the writer", "the value observation's token", "the region observation's token"]
            let kept = zip(names, isReleased).filter { !$0.1() }.map(\.0)
            Issue.record("still alive after cancel() and close(): \(kept)")
        }
    }

    // MARK: - 7. VACUUM

    /// A row of `r`, a table without INTEGER PRIMARY KEY: identified by its rowid.
    struct RenumberedRow: FetchableRecord, TableRecord, Equatable, Sendable {
        static let databaseTableName = "r"
        var name: String

        init(row: Row) throws {
            name = try row["name"]
        }
    }

    /// VACUUM renumbers the rowids of a table without INTEGER PRIMARY KEY,
    /// and no hook tells: the observations of its rows see the new state.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func vacuumNotifiesTheObserversOfRenumberedRows(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let database = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE r (name TEXT);
            INSERT INTO r (name) VALUES ('n1'), ('n2'), ('n3'), ('n4'), ('n5');
            DELETE FROM r WHERE rowid <= 3;
            """)
        let writer = database.writer
        let rowFour = "SELECT name FROM r WHERE rowid = 4"
        let fetchRowFour: @Sendable (Database) throws -> String? = { try SQLRequest<String>(sql: rowFour).fetchOne($0) }
        let fetchAll: @Sendable (Database) throws -> [Row] = {
            try SQLRequest<Row>(sql: "SELECT rowid, name FROM r ORDER BY rowid").fetchAll($0)
        }
        let fetchRecord: @Sendable (Database) throws -> RenumberedRow? = { try RenumberedRow.filter(key: 4).fetchOne($0) }
        let recorded = FreshValueProbe("tracking rowid 4", ValueObservation.tracking(fetchRowFour), in: writer, fetch: fetchRowFour)
        let explicit = FreshValueProbe(
            "trackingOne rowid 4", ValueObservation.trackingOne(SQLRequest<String>(sql: rowFour)), in: writer, fetch: fetchRowFour)
        let byKey = FreshValueProbe(
            "trackingOne filter(key: 4)", ValueObservation.trackingOne(RenumberedRow.filter(key: 4)), in: writer,
            fetch: fetchRecord)
        let all = FreshValueProbe(
            "rowids and names", ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELECT rowid, name FROM r ORDER BY rowid")),
            in: writer, fetch: fetchAll)
        defer {
            recorded.cancel()
            explicit.cancel()
            byKey.cancel()
            all.cancel()
        }
        let (tableCounter, tableCancellable) = countChanges(in: writer, of: [DatabaseRegion(table: "r")])
        let (rowCounter, rowCancellable) = countChanges(in: writer, of: [DatabaseRegion(table: "r", rowIDs: [4])])
        defer {
            tableCancellable.cancel()
            rowCancellable.cancel()
        }
        let records = Recorder<RenumberedRow>()
        let deletions = Recorder<Bool>()
        let recordCancellable = RecordObservation<RenumberedRow>(key: 4).start(in: writer, scheduling: .observationQueue) {
            Issue.record($0)
        } onDeletion: {
            deletions.append(true)
        } onChange: {
            records.append($0)
        }
        defer { recordCancellable.cancel() }
        try await recorded.expectFreshValue(in: writer, after: "start")
        try await explicit.expectFreshValue(in: writer, after: "start")
        try await byKey.expectFreshValue(in: writer, after: "start")
        try await all.expectFreshValue(in: writer, after: "start")
        #expect(try await records.wait(for: 1) == [try RenumberedRow(row: Row(["name": "n4"]))])

        try synchronously { try writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") } }
        let rowIDs = try await writer.read { db in try SQLRequest<Int64>(sql: "SELECT rowid FROM r ORDER BY rowid").fetchAll(db) }
        try #require(rowIDs != [4, 5], "VACUUM did not renumber the rowids: the test proves nothing")
        #expect(try await writer.read(fetchRowFour) != "n4")
        #expect(tableCounter.value == 1, "VACUUM: the observers of r")
        #expect(rowCounter.value == 1, "VACUUM: the observers of rowid 4")
        try await recorded.expectFreshValue(in: writer, after: "VACUUM")
        try await explicit.expectFreshValue(in: writer, after: "VACUUM")
        try await byKey.expectFreshValue(in: writer, after: "VACUUM")
        try await all.expectFreshValue(in: writer, after: "VACUUM")
        do {
            try await deletions.wait(for: 1, timeout: freshValuePatience)
        } catch {
            Issue.record("RecordObservation(key: 4): row 4 is gone, and no deletion came; records: \(records.values)")
        }
    }

    // MARK: - 8. Views redefined

    /// A view dropped and created again with another definition, in one
    /// transaction: its observers see its new rows, then the changes of
    /// its new table, and no more those of the old one.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aRedefinedViewIsObservedThroughItsNewDefinition(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let database = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE a (name TEXT);
            CREATE TABLE b (name TEXT);
            INSERT INTO a (name) VALUES ('a1');
            INSERT INTO b (name) VALUES ('b1');
            CREATE VIEW v AS SELECT name FROM a;
            """)
        let writer = database.writer
        let fetchNames: @Sendable (Database) throws -> [String] = {
            try SQLRequest<String>(sql: "SELECT * FROM v ORDER BY name").fetchAll($0)
        }
        let fetchRows: @Sendable (Database) throws -> [Row] = { try SQLRequest<Row>(sql: "SELECT * FROM v").fetchAll($0) }
        let recorded = FreshValueProbe("tracking", ValueObservation.tracking(fetchNames), in: writer, fetch: fetchNames)
        let explicit = FreshValueProbe(
            "trackingAll", ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELECT * FROM v")), in: writer, fetch: fetchRows)
        defer {
            recorded.cancel()
            explicit.cancel()
        }
        let (counter, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM v")])
        defer { regionCancellable.cancel() }
        try await recorded.expectFreshValue(in: writer, after: "start")
        try await explicit.expectFreshValue(in: writer, after: "start")

        let redefinitionCalls = try counter.calls { try writer.writeSQL("DROP VIEW v; CREATE VIEW v AS SELECT name FROM b") }
        #expect(try await writer.read(fetchNames) == ["b1"])
        #expect(redefinitionCalls == 1, "the redefinition changed the view's rows")
        try await recorded.expectFreshValue(in: writer, after: "the redefinition")
        try await explicit.expectFreshValue(in: writer, after: "the redefinition")

        #expect(try counter.calls { try writer.writeSQL("INSERT INTO b (name) VALUES ('b2')") } == 1, "an insertion into the new table")
        try await recorded.expectFreshValue(in: writer, after: "an insertion into b")
        try await explicit.expectFreshValue(in: writer, after: "an insertion into b")

        #expect(try counter.calls { try writer.writeSQL("INSERT INTO a (name) VALUES ('a2')") } == 0, "an insertion into the old table")
        #expect(try counter.calls { try writer.writeSQL("INSERT INTO b (name) VALUES ('b3')") } == 1, "another insertion into the new table")
        try await recorded.expectFreshValue(in: writer, after: "another insertion into b")
        try await explicit.expectFreshValue(in: writer, after: "another insertion into b")
    }

    // MARK: - 9. A savepoint begun before an observer arrived

    /// Savepoint statements run before the first observer of the
    /// connection (the hooks were not installed yet), the observer added
    /// inside them with `Database.add(transactionObserver:)`.
    struct EarlySavepoint: Sendable, CustomTestStringConvertible {
        var name: String
        /// SQL run before the observer is added, inside `write`.
        var before: String
        /// SQL run after.
        var after: String
        /// The rowids of the insertion events the observer must get.
        var insertedRowIDs: [Int64]
        var testDescription: String { name }

        static let all = [
            EarlySavepoint(
                name: "rolled back",
                before: "SAVEPOINT s",
                after: "INSERT INTO t (name) VALUES ('undone'); ROLLBACK TO s; RELEASE s; INSERT INTO t (name) VALUES ('kept')",
                insertedRowIDs: [1]),
            EarlySavepoint(
                name: "nested, the outer one rolled back",
                before: "SAVEPOINT outer1; SAVEPOINT inner1",
                after: "INSERT INTO t (name) VALUES ('undone'); RELEASE inner1; ROLLBACK TO outer1; RELEASE outer1",
                insertedRowIDs: []),
            EarlySavepoint(
                name: "the inner one begun after the observer, the outer one rolled back",
                before: "SAVEPOINT outer1",
                after: "SAVEPOINT inner1; INSERT INTO t (name) VALUES ('undone'); RELEASE inner1; ROLLBACK TO outer1; RELEASE outer1",
                insertedRowIDs: []),
            EarlySavepoint(
                name: "released",
                before: "SAVEPOINT s",
                after: "INSERT INTO t (name) VALUES ('kept'); RELEASE s",
                insertedRowIDs: [1]),
        ]
    }

    /// A transaction observer added inside a savepoint that began before
    /// any observer: the events that a `ROLLBACK TO` undoes never reach it.
    ///
    /// The observations (`ValueObservation`, `DatabaseRegionObservation`)
    /// cannot start inside an access (their `start` is documented not to be
    /// called from one, and registers in a writer access of its own): the
    /// public API gives them no way to arrive in the middle of a savepoint.
    @Test(arguments: EdgeCase.all(EarlySavepoint.all))
    func aSavepointBegunBeforeTheFirstObserverDropsTheEventsItRollsBack(_ test: EdgeCase<EarlySavepoint>) throws {
        let database = try test.kind.make(changeTracking: test.tracking, sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        let writer = database.writer
        let log = EventLog()
        try writer.write { db in
            try db.execute(sql: test.variant.before)
            db.add(transactionObserver: log)
            try db.execute(sql: test.variant.after)
        }
        #expect(log.events == test.variant.insertedRowIDs.map { DatabaseEvent(kind: .insert(tableName: "t"), rowID: $0) })
        #expect(log.entries.filter { $0 == .commit }.count == 1)
        #expect(try writer.count("t") == test.variant.insertedRowIDs.count)
        _ = log

        // The same, outside of `write`: the savepoint is the transaction.
        let other = try test.kind.make(changeTracking: test.tracking, sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        let otherLog = EventLog()
        try other.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN; " + test.variant.before)
            db.add(transactionObserver: otherLog)
            try db.execute(sql: test.variant.after + "; COMMIT")
        }
        #expect(otherLog.events == test.variant.insertedRowIDs.map { DatabaseEvent(kind: .insert(tableName: "t"), rowID: $0) })
        _ = otherLog
    }
}

// MARK: - Support

/// How long a test waits for a value that must come before it says it
/// did not: each wait is for one value, which takes milliseconds.
let freshValuePatience: Duration = isRunningUnderThreadSanitizer ? observationPatience : .seconds(10)

extension ChangeCounter {
    /// The number of calls counted while `body` runs (a region observation
    /// is called before the access that commits returns).
    func calls(during body: () throws -> Void) rethrows -> Int {
        let before = value
        try body()
        return value - before
    }
}

/// A database kind and a change-tracking path, with a third parameter.
struct EdgeCase<Variant: Sendable & CustomTestStringConvertible>: Sendable, CustomTestStringConvertible {
    var kind: DatabaseKind
    var tracking: Configuration.ChangeTracking
    var variant: Variant

    var testDescription: String { "\(kind.rawValue), \(tracking), \(variant.testDescription)" }

    /// Every kind of database, on both change-tracking paths, with each variant.
    static func all(_ variants: [Variant]) -> [EdgeCase] {
        DatabaseKind.allCases.flatMap { kind in
            changeTrackings.flatMap { tracking in
                variants.map { EdgeCase(kind: kind, tracking: tracking, variant: $0) }
            }
        }
    }
}

/// A value observation of a test, delivering with the `.observationQueue` scheduler,
/// and the fetch whose result the state of its values must reach after
/// each commit: its last value, or what its differences lead to.
final class FreshValueProbe<Value: Sendable, State: Equatable & Sendable>: Sendable {
    let name: String
    let recorder = Recorder<Value>()
    private let fetch: @Sendable (Database) throws -> State
    private let state: @Sendable ([Value]) -> State?
    private let cancellable: AnyDatabaseCancellable
    private let isStuck = Locked(false)

    init(
        _ name: String, _ observation: ValueObservation<Value>, in writer: any DatabaseWriter,
        fetch: @escaping @Sendable (Database) throws -> State, state: @escaping @Sendable ([Value]) -> State?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.name = name
        self.fetch = fetch
        self.state = state
        let recorder = self.recorder
        cancellable = observation.start(in: writer, scheduling: .observationQueue) { error in
            Issue.record(error, "\(name)", sourceLocation: sourceLocation)
        } onChange: { value in
            recorder.append(value)
        }
    }

    /// Whether the state of the values reaches the result of a fresh fetch
    /// (read through `writer`) within `freshValuePatience`. When it does
    /// not, records an issue, and from then on says false at once: the
    /// observation is stuck, and a test does not wait for it again.
    @discardableResult
    func expectFreshValue(
        in writer: any DatabaseWriter, after step: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Bool {
        guard !isStuck.value else { return false }
        let fetch = self.fetch
        let fresh = try await writer.read { db in try fetch(db) }
        let state = self.state
        do {
            try await recorder.wait(timeout: freshValuePatience) { state($0) == fresh }
            return true
        } catch is ObservationTimeout {
            isStuck.value = true
            let values = recorder.values
            Issue.record(
                """
                \(name): after \(step), the fresh fetch is \(fresh), and the observation is at \
                \(state(values).map { "\($0)" } ?? "no value") after \(values.count) values
                """,
                sourceLocation: sourceLocation)
            return false
        }
    }

    func cancel() { cancellable.cancel() }
}

extension FreshValueProbe where Value == State {
    /// A probe of an observation whose last value must be a fresh fetch.
    convenience init(
        _ name: String, _ observation: ValueObservation<Value>, in writer: any DatabaseWriter,
        fetch: @escaping @Sendable (Database) throws -> State, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.init(name, observation, in: writer, fetch: fetch, state: { $0.last }, sourceLocation: sourceLocation)
    }
}

/// A transaction observer of every event, which keeps the events of each
/// committed transaction apart.
final class CommittedEventLog: TransactionObserver, Sendable {
    private struct State {
        var pending: [DatabaseEvent] = []
        var committed: [[DatabaseEvent]] = []
    }
    private let state = Locked(State())

    init() {}

    func observes(eventsOfKind kind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) { state.withLock { $0.pending.append(event) } }
    func databaseDidCommit(_ db: Database) {
        state.withLock { state in
            state.committed.append(state.pending)
            state.pending = []
        }
    }
    func databaseDidRollback(_ db: Database) { state.withLock { $0.pending = [] } }

    /// Takes the events of each transaction committed since the last
    /// call, and the events received since the last commit or rollback
    /// (a later commit will not report these).
    func take() -> (committed: [[DatabaseEvent]], pending: [DatabaseEvent]) {
        state.withLock { state in
            defer {
                state.committed = []
                state.pending = []
            }
            return (state.committed, state.pending)
        }
    }
}

/// `insert(t)@1`.
func describeEvent(_ event: DatabaseEvent) -> String {
    let kind: String
    switch event.kind {
    case .insert(let table): kind = "insert(\(table))"
    case .delete(let table): kind = "delete(\(table))"
    case .update(let table, let columns): kind = "update(\(table), \(columns.sorted()))"
    }
    return "\(kind)@\(event.rowID.map(String.init) ?? "nil")"
}
