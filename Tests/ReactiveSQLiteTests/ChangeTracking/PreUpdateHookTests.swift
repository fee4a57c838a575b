import DatabaseTestSupport
import DatabaseRegions
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// What the pre-update hook tells that the update hook cannot: each test
/// runs on both paths, and says what the update-hook path does instead.
@Suite struct PreUpdateHookTests {
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func anUpdateThatLeavesObservedValuesUnchangedIsNoChange(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        let (scores, scoresCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT score FROM player")])
        let (names, namesCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT name FROM player")])
        defer {
            scoresCancellable.cancel()
            namesCancellable.cancel()
        }
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(SQLRequest<Int>(sql: "SELECT score FROM player ORDER BY id"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        let log = EventLog()
        try synchronously {
            try writer.writeWithoutTransaction { db in db.add(transactionObserver: log, extent: .databaseLifetime) }
            try writer.writeSQL("UPDATE player SET score = score")
            try writer.writeSQL("UPDATE player SET score = 100 WHERE id = 1")  // already 100
            try writer.writeSQL("UPDATE player SET score = score + 0, name = name")
        }
        let expectedNoChange = tracking.usesPreUpdateHook ? 0 : 3
        #expect(scores.value == expectedNoChange)
        #expect(names.value == (tracking.usesPreUpdateHook ? 0 : 1))
        #expect(log.events.count == (tracking.usesPreUpdateHook ? 0 : 7))

        // Some columns change, others keep their values.
        try writer.writeSQL("UPDATE player SET score = score + 1, name = name")
        #expect(scores.value == expectedNoChange + 1)
        #expect(names.value == (tracking.usesPreUpdateHook ? 0 : 2))
        let values = try await recorder.wait(forLast: [101, 201, 151])
        if tracking.usesPreUpdateHook {
            #expect(values == [[100, 200, 150], [101, 201, 151]])
        } else if kind == .pool {
            // Potential changes, fetched again; a pool may coalesce them.
            #expect(values.dropLast().allSatisfy { $0 == [100, 200, 150] })
        } else {
            #expect(values == [[100, 200, 150], [100, 200, 150], [100, 200, 150], [100, 200, 150], [101, 201, 151]])
        }
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func withoutRowIDTablesAreObservedPerRowWithThePreUpdateHookAndPerStatementWithoutIt(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE pair (a TEXT, b INTEGER, c TEXT, d TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
            INSERT INTO pair (a, b, c, d) VALUES ('x', 1, 'one', 'uno');
            """)
        let writer = test.writer
        let (cObservations, cCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT c FROM pair")])
        defer { cCancellable.cancel() }
        let recorder = Recorder<[String]>()
        let cancellable = ValueObservation.trackingAll(SQLRequest<String>(sql: "SELECT c FROM pair ORDER BY a, b"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        let log = EventLog()
        let isObserved = tracking.usesPreUpdateHook
        try synchronously {
            try writer.writeWithoutTransaction { db in db.add(transactionObserver: log, extent: .databaseLifetime) }
        }
        try writer.writeSQL("INSERT INTO pair (a, b, c, d) VALUES ('y', 2, 'two', 'dos')")
        if isObserved { try await recorder.wait(for: 2) }
        try writer.writeSQL("UPDATE pair SET c = 'ONE' WHERE a = 'x'")
        if isObserved { try await recorder.wait(for: 3) }
        try writer.writeSQL("UPDATE pair SET d = 'UNO' WHERE a = 'x'")  // not observed by c's observers
        try writer.writeSQL("UPDATE pair SET c = c")  // no change
        try writer.writeSQL("DELETE FROM pair WHERE a = 'y'")
        if isObserved { try await recorder.wait(for: 4) }
        try writer.writeSQL("DELETE FROM pair")
        if isObserved {
            #expect(cObservations.value == 4)
            #expect(log.events == [
                DatabaseEvent(kind: .insert(tableName: "pair"), rowID: nil),
                DatabaseEvent(kind: .update(tableName: "pair", columnNames: ["c"]), rowID: nil),
                DatabaseEvent(kind: .update(tableName: "pair", columnNames: ["d"]), rowID: nil),
                DatabaseEvent(kind: .delete(tableName: "pair"), rowID: nil),
                DatabaseEvent(kind: .delete(tableName: "pair"), rowID: nil),
            ])
            #expect(try await recorder.wait(for: 5) == [["one"], ["one", "two"], ["ONE", "two"], ["ONE"], []])
        } else {
            // Documented: the update hook does not report changes of WITHOUT
            // ROWID tables: each statement that writes the table and changes
            // rows is a potential change of the whole table (the update of
            // column d too), and user observers get no event.
            #expect(cObservations.value == 6)
            #expect(log.events == [])
        }
        #expect(log.entries.filter { $0 == .commit }.count == 6)
        if !isObserved {
            // Values coalesce; the last one is the database's.
            #expect(try await recorder.wait(forLast: []).first == ["one"])
        }
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func anUpdateThatChangesARowIDIsSeenByObserversOfTheOldAndTheNewRowID(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL + """
            INSERT INTO player (id, name, score) VALUES (7, 'Gus', 70);
            """)
        let writer = test.writer
        let oldRecord = Recorder<ObservedPlayer>()
        let deletions = Recorder<Bool>()
        let oldCancellable = RecordObservation<ObservedPlayer>(key: 7).start(in: writer, scheduling: .observationQueue) {
            Issue.record($0)
        } onDeletion: {
            deletions.append(true)
        } onChange: {
            oldRecord.append($0)
        }
        defer { oldCancellable.cancel() }
        let newRow = Recorder<ObservedPlayer?>()
        let newCancellable = ValueObservation.trackingOne(ObservedPlayer.filter(key: 10))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: newRow.append)
        defer { newCancellable.cancel() }
        let (otherRow, otherCancellable) = countChanges(in: writer, of: [ObservedPlayer.filter(key: 2)])
        defer { otherCancellable.cancel() }
        try await oldRecord.wait(for: 1)
        try await newRow.wait(for: 1)

        let log = EventLog()
        try synchronously {
            try writer.write { db in
                db.add(transactionObserver: log)
                try db.execute(sql: "UPDATE player SET id = 10 WHERE id = 7")
            }
        }
        #expect(try await deletions.wait(for: 1) == [true])
        #expect(oldRecord.values == [ObservedPlayer(id: 7, name: "Gus", score: 70)])
        #expect(try await newRow.wait(for: 2) == [nil, ObservedPlayer(id: 10, name: "Gus", score: 70)])
        if tracking.usesPreUpdateHook {
            // A deletion of the old rowid and an insertion of the new one.
            #expect(log.events == [
                DatabaseEvent(kind: .delete(tableName: "player"), rowID: 7),
                DatabaseEvent(kind: .insert(tableName: "player"), rowID: 10),
            ])
            #expect(otherRow.value == 0)
        } else {
            // The update hook tells the new rowid only: observers of any row
            // of the table hear of a statement that may change rowids.
            #expect(log.events == [DatabaseEvent(kind: .update(tableName: "player", columnNames: ["id"]), rowID: 10)])
            #expect(otherRow.value == 1)
        }
        _ = log
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func rowsDeletedByInsertOrReplaceAreSeenWithThePreUpdateHook(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE member (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);
            INSERT INTO member (id, email, name) VALUES (1, 'a@example.com', 'Arthur'), (2, 'b@example.com', 'Barbara');
            """)
        let writer = test.writer
        let (first, firstCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT name FROM member WHERE id = 1")])
        defer { firstCancellable.cancel() }
        let memberOne = Recorder<Row?>()
        let cancellable = ValueObservation.trackingOne(SQLRequest<Row>(sql: "SELECT id, name FROM member WHERE rowid = 1"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: memberOne.append)
        defer { cancellable.cancel() }
        let rowOne = Recorder<Bool>()
        let rowCancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "member", rowIDs: [1]))
            .start(in: writer, onError: { Issue.record($0) }, onChange: { _ in rowOne.append(true) })
        defer { rowCancellable.cancel() }
        try await memberOne.wait(for: 1)

        let log = EventLog()
        try synchronously {
            try writer.write { db in
                db.add(transactionObserver: log)
                // Conflicts on email with member 1, which is deleted.
                try db.execute(sql: "INSERT OR REPLACE INTO member (id, email, name) VALUES (5, 'a@example.com', 'Eve')")
            }
        }
        #expect(first.value == 1)  // table-precise region: the insertion is enough
        if tracking.usesPreUpdateHook {
            #expect(log.events == [
                DatabaseEvent(kind: .delete(tableName: "member"), rowID: 1),
                DatabaseEvent(kind: .insert(tableName: "member"), rowID: 5),
            ])
            #expect(rowOne.values == [true])
            #expect(try await memberOne.wait(for: 2) == [Row(["id": 1, "name": "Arthur"]), nil])
        } else {
            // The update hook does not report rows deleted by REPLACE: user
            // observers get the insertion only, and observations of any row
            // of the table are told of a potential change.
            #expect(log.events == [DatabaseEvent(kind: .insert(tableName: "member"), rowID: 5)])
            #expect(rowOne.values == [true])
            #expect(try await memberOne.wait(for: 2) == [Row(["id": 1, "name": "Arthur"]), nil])
        }
        _ = log
    }

    /// The ways a write may delete a row through a REPLACE conflict on a
    /// unique index: SQL run on a table of members (1 a@, 2 b@), all of
    /// which delete member 1.
    static let hiddenReplaceDeletions: [(name: String, email: String, index: String, sql: String)] = [
        ("UPDATE OR REPLACE", "email TEXT UNIQUE", "",
         "UPDATE OR REPLACE member SET email = 'a@example.com' WHERE id = 2"),
        ("REPLACE INTO", "email TEXT UNIQUE", "", "REPLACE INTO member (id, email) VALUES (5, 'a@example.com')"),
        ("ON CONFLICT REPLACE constraint", "email TEXT UNIQUE ON CONFLICT REPLACE", "",
         "INSERT INTO member (id, email) VALUES (5, 'a@example.com')"),
        ("trigger", "email TEXT UNIQUE", "", "INSERT INTO signup (email) VALUES ('a@example.com')"),
        ("CREATE UNIQUE INDEX", "email TEXT", "CREATE UNIQUE INDEX member_email ON member (email);",
         "INSERT OR REPLACE INTO member (id, email) VALUES (5, 'a@example.com')"),
    ]

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func everyReplaceConflictOnAUniqueIndexReachesTheObserversOfTheDeletedRow(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        for source in Self.hiddenReplaceDeletions {
            let test = try kind.make(changeTracking: tracking, sql: """
                CREATE TABLE member (id INTEGER PRIMARY KEY, \(source.email), name TEXT);
                \(source.index)
                INSERT INTO member (id, email, name) VALUES (1, 'a@example.com', 'Arthur'), (2, 'b@example.com', 'Barbara');
                CREATE TABLE signup (email TEXT);
                CREATE TRIGGER signup_member AFTER INSERT ON signup BEGIN
                    INSERT OR REPLACE INTO member (id, email) VALUES (7, NEW.email);
                END;
                """)
            let writer = test.writer
            let rowOne = Recorder<Bool>()
            let rowCancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "member", rowIDs: [1]))
                .start(in: writer, onError: { Issue.record($0) }, onChange: { _ in rowOne.append(true) })
            defer { rowCancellable.cancel() }
            let memberOne = Recorder<String?>()
            let cancellable = ValueObservation.trackingOne(SQLRequest<String>(sql: "SELECT name FROM member WHERE id = 1"))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: memberOne.append)
            defer { cancellable.cancel() }
            try await memberOne.wait(for: 1)

            try synchronously { try writer.writeSQL(source.sql) }
            let remaining = try synchronously {
                try writer.read { db in try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM member WHERE id = 1").fetchOne(db) }
            }
            #expect(remaining == 0, "\(source.name)")
            #expect(rowOne.values == [true], "\(source.name)")
            #expect(try await memberOne.wait(for: 2) == ["Arthur", nil], "\(source.name)")
        }
    }

    /// On the update-hook path, only writes that may REPLACE on a unique
    /// index other than the rowid reach the observers of every row: other
    /// writes stay row-precise.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func writesThatCannotReplaceOnAUniqueIndexStayRowPrecise(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE member (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);
            INSERT INTO member (id, email, name) VALUES (1, 'a@example.com', 'Arthur'), (2, 'b@example.com', 'Barbara');
            CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT);
            INSERT INTO note (id, text) VALUES (1, 'one'), (2, 'two');
            """)
        let writer = test.writer
        let memberOne = Recorder<Bool>()
        let memberCancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "member", rowIDs: [1]))
            .start(in: writer, onError: { Issue.record($0) }, onChange: { _ in memberOne.append(true) })
        defer { memberCancellable.cancel() }
        let noteOne = Recorder<Bool>()
        let noteCancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "note", rowIDs: [1]))
            .start(in: writer, onError: { Issue.record($0) }, onChange: { _ in noteOne.append(true) })
        defer { noteCancellable.cancel() }

        try synchronously {
            // Unique index, but no REPLACE: a conflict would fail.
            try writer.writeSQL("INSERT INTO member (id, email) VALUES (5, 'e@example.com')")
            try writer.writeSQL("UPDATE member SET email = 'f@example.com' WHERE id = 2")
            // REPLACE, but no unique index besides the rowid: a conflict on
            // the rowid is reported as the write of that rowid.
            try writer.writeSQL("INSERT OR REPLACE INTO note (id, text) VALUES (2, 'deux')")
            // 'replace' in a string literal, a quoted name and a comment is no REPLACE.
            try writer.writeSQL("INSERT INTO member (id, email, \"name\") VALUES (6, 'replace@example.com', 'x') -- REPLACE")
        }
        #expect(memberOne.values == [])
        #expect(noteOne.values == [])

        try synchronously { try writer.writeSQL("INSERT OR REPLACE INTO note (id, text) VALUES (1, 'un')") }
        #expect(noteOne.values == [true])
    }
}
