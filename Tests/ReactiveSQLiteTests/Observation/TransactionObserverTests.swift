import DatabaseTestSupport
import DatabaseRegions
import Foundation
import ReactiveSQLite
import Testing

/// `Database.add(transactionObserver:extent:)`: the events users' own
/// observers receive, savepoint buffering, vetoed commits, and extents.
@Suite struct TransactionObserverTests {
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func observesEventsOfKindSelectsTheEvents(kind: DatabaseKind, tracking: Configuration.ChangeTracking) throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL + """
            CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT);
            """)
        let log = EventLog { kind in
            if case .insert(let table) = kind { return table == "player" }
            return false
        }
        let askedKinds = KindLog()
        let asking = EventLog { askedKinds.kinds.append($0); return false }
        try test.writer.write { db in
            db.add(transactionObserver: log)
            db.add(transactionObserver: asking)
            try db.execute(sql: """
                INSERT INTO player (id, name) VALUES (4, 'David');
                INSERT INTO team (id, name) VALUES (1, 'Red');
                UPDATE player SET score = 1;
                DELETE FROM player WHERE id = 1;
                """)
        }
        #expect(log.events == [DatabaseEvent(kind: .insert(tableName: "player"), rowID: 4)])
        #expect(log.entries.filter { $0 == .commit }.count == 1)
        // Asked once per statement for each kind of change it may make.
        #expect(askedKinds.kinds.contains(.insert(tableName: "player")))
        #expect(askedKinds.kinds.contains(.insert(tableName: "team")))
        #expect(askedKinds.kinds.contains(.update(tableName: "player", columnNames: ["score"])))
        #expect(askedKinds.kinds.contains(.delete(tableName: "player")))
        #expect(asking.events.isEmpty)
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func eventsTellKindRowIDAndChangedColumns(kind: DatabaseKind, tracking: Configuration.ChangeTracking) throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let log = EventLog()
        try test.writer.write { db in
            db.add(transactionObserver: log)
            try db.execute(sql: "INSERT INTO player (id, name) VALUES (4, 'David')")
            try db.execute(sql: "UPDATE player SET name = 'Art', score = score WHERE id = 1")
            try db.execute(sql: "UPDATE player SET score = 7 WHERE id IN (2, 3)")
            try db.execute(sql: "DELETE FROM player WHERE id = 4")
        }
        let updatedColumns: Set<String> = tracking.usesPreUpdateHook ? ["name"] : ["name", "score"]
        #expect(log.entries == [
            .event(DatabaseEvent(kind: .insert(tableName: "player"), rowID: 4)),
            .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: updatedColumns), rowID: 1)),
            .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 2)),
            .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 3)),
            .event(DatabaseEvent(kind: .delete(tableName: "player"), rowID: 4)),
            .willCommit,
            .commit,
        ])
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func eventsInsideSavepointsWaitForTheOutermostRelease(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let log = EventLog()
        func insert(_ id: Int) -> DatabaseEvent { DatabaseEvent(kind: .insert(tableName: "player"), rowID: Int64(id)) }
        try test.writer.write { db in
            db.add(transactionObserver: log)
            // Outside of savepoints: at once.
            try db.execute(sql: "INSERT INTO player (id, name) VALUES (10, 'a')")
            #expect(log.events == [insert(10)])

            try db.execute(sql: "SAVEPOINT outer1; INSERT INTO player (id, name) VALUES (11, 'b')")
            try db.execute(sql: "SAVEPOINT inner1; INSERT INTO player (id, name) VALUES (12, 'c')")
            #expect(log.events == [insert(10)])
            // Released into the outer savepoint: still buffered.
            try db.execute(sql: "RELEASE inner1")
            #expect(log.events == [insert(10)])
            try db.execute(sql: "SAVEPOINT dropped; INSERT INTO player (id, name) VALUES (13, 'd'); ROLLBACK TO dropped")
            try db.execute(sql: "INSERT INTO player (id, name) VALUES (14, 'e'); RELEASE dropped")
            #expect(log.events == [insert(10)])
            // The outermost release delivers them, in order, without the
            // rolled-back one.
            try db.execute(sql: "RELEASE outer1")
            #expect(log.events == [insert(10), insert(11), insert(12), insert(14)])

            try db.execute(sql: "SAVEPOINT s; INSERT INTO player (id, name) VALUES (15, 'f'); ROLLBACK TO s; RELEASE s")
            #expect(log.events == [insert(10), insert(11), insert(12), insert(14)])
        }
        #expect(log.entries.suffix(2) == [.willCommit, .commit])

        // Buffered events of a transaction that commits with its savepoint open.
        log.clear()
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN; SAVEPOINT s; INSERT INTO player (id, name) VALUES (20, 'g')")
            #expect(log.events.isEmpty)
            try db.execute(sql: "COMMIT")
        }
        #expect(log.entries == [.event(insert(20)), .willCommit, .commit])

        // Buffered events of a transaction that rolls back: never delivered.
        log.clear()
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN; SAVEPOINT s; INSERT INTO player (id, name) VALUES (21, 'h'); ROLLBACK")
        }
        #expect(log.entries == [.rollback])
        _ = log
    }

    @Test(arguments: DatabaseKind.allCases)
    func databaseWillCommitThrowingRollsBackAndItsErrorReachesTheWriter(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let log = EventLog()
        log.willCommitError = TestError(tag: 42)
        let (counter, cancellable) = countChanges(in: writer, of: [ObservedPlayer.all()])
        defer { cancellable.cancel() }

        // In a transaction.
        let error = #expect(throws: TestError.self) {
            try writer.write { db in
                db.add(transactionObserver: log)
                try db.execute(sql: "INSERT INTO player (id, name) VALUES (4, 'David')")
            }
        }
        #expect(error == TestError(tag: 42))
        #expect(log.entries == [
            .event(DatabaseEvent(kind: .insert(tableName: "player"), rowID: 4)), .willCommit, .rollback,
        ])
        #expect(try writer.count("player") == 3)
        #expect(counter.value == 0)

        // A statement that commits on its own.
        log.clear()
        let autocommitError = #expect(throws: TestError.self) {
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "DELETE FROM player WHERE id = 1")
            }
        }
        #expect(autocommitError == TestError(tag: 42))
        #expect(log.entries == [
            .event(DatabaseEvent(kind: .delete(tableName: "player"), rowID: 1)), .willCommit, .rollback,
        ])

        // The veto lifted, commits go through again.
        log.willCommitError = nil
        try writer.writeSQL("UPDATE player SET score = 0")
        #expect(log.entries.suffix(2) == [.willCommit, .commit])
        #expect(counter.value == 1)
        _ = log
    }

    @Test(arguments: DatabaseKind.allCases)
    func databaseWillCommitThrowingFailsAnAsyncWrite(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        try await writer.writeWithoutTransaction { db in
            let vetoer = EventLog()
            vetoer.willCommitError = TestError(tag: 7)
            db.add(transactionObserver: vetoer, extent: .databaseLifetime)
        }
        await #expect(throws: TestError(tag: 7)) {
            try await writer.write { db in try db.execute(sql: "UPDATE player SET score = 0") }
        }
        let scores = try await writer.read { db in try SQLRequest<Int>(sql: "SELECT score FROM player ORDER BY id").fetchAll(db) }
        #expect(scores == [100, 200, 150])
    }

    @Test(arguments: DatabaseKind.allCases)
    func didCommitAndDidRollbackFollowEveryTransaction(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let log = EventLog { _ in false }
        try writer.writeWithoutTransaction { db in db.add(transactionObserver: log) }
        try writer.writeSQL("UPDATE player SET score = 1")
        #expect(log.entries == [.willCommit, .commit])
        log.clear()
        try? writer.write { db in
            try db.execute(sql: "UPDATE player SET score = 2")
            throw TestError()
        }
        #expect(log.entries == [.rollback])
        log.clear()
        // Reads commit nothing.
        _ = try writer.read { db in try db.count("player") }
        #expect(log.entries == [])
        _ = log
    }

    @Test(arguments: DatabaseKind.allCases)
    func anObserverOfObserverLifetimeIsHeldWeakly(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        var log: EventLog? = EventLog()
        weak let weakLog = log
        try writer.write { db in
            db.add(transactionObserver: log!, extent: .observerLifetime)
            try db.execute(sql: "UPDATE player SET score = 1 WHERE id = 1")
        }
        #expect(log?.events.count == 1)
        #expect(log?.entries.last == .commit)
        log = nil
        #expect(weakLog == nil)
        // The database goes on without it.
        try writer.writeSQL("UPDATE player SET score = 2 WHERE id = 1")
    }

    @Test(arguments: DatabaseKind.allCases)
    func anObserverOfNextTransactionIsRemovedAfterOneTransaction(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        // Added inside a transaction: that transaction.
        let inside = EventLog()
        try writer.write { db in
            db.add(transactionObserver: inside, extent: .nextTransaction)
            try db.execute(sql: "UPDATE player SET score = 1 WHERE id = 1")
        }
        try writer.writeSQL("UPDATE player SET score = 2 WHERE id = 1")
        #expect(inside.entries == [
            .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 1)),
            .willCommit, .commit,
        ])
        // Added outside of a transaction: the next one, rolled back here.
        let outside = EventLog()
        try writer.writeWithoutTransaction { db in db.add(transactionObserver: outside, extent: .nextTransaction) }
        try? writer.write { db in
            try db.execute(sql: "UPDATE player SET score = 3 WHERE id = 1")
            throw TestError()
        }
        try writer.writeSQL("UPDATE player SET score = 4 WHERE id = 1")
        #expect(outside.entries == [
            .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 1)),
            .rollback,
        ])
        // Held strongly until then.
        weak var weakLog: EventLog?
        try writer.writeWithoutTransaction { db in
            let log = EventLog()
            weakLog = log
            db.add(transactionObserver: log, extent: .nextTransaction)
        }
        #expect(weakLog != nil)
        try writer.write { db in
            try db.execute(sql: "UPDATE player SET score = 5 WHERE id = 1")
            #expect(weakLog?.events.count == 1)
        }
        #expect(weakLog == nil)
    }

    @Test(arguments: DatabaseKind.allCases)
    func anObserverOfDatabaseLifetimeIsHeldStrongly(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        weak var weakLog: EventLog?
        try writer.writeWithoutTransaction { db in
            let log = EventLog()
            weakLog = log
            db.add(transactionObserver: log, extent: .databaseLifetime)
        }
        try writer.writeSQL("UPDATE player SET score = 1 WHERE id = 1")
        try writer.writeSQL("UPDATE player SET score = 2 WHERE id = 1")
        let log = try #require(weakLog)
        #expect(log.entries.filter { $0 == .commit }.count == 2)
        #expect(log.events.count == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRemovedObserverIsNoLongerCalled(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let log = EventLog()
        let strongLog = EventLog()
        try writer.writeWithoutTransaction { db in
            db.add(transactionObserver: log)
            db.add(transactionObserver: strongLog, extent: .databaseLifetime)
        }
        try writer.writeSQL("UPDATE player SET score = 1 WHERE id = 1")
        try writer.write { db in
            // Removed in the middle of a transaction, with events buffered in
            // a savepoint: it hears nothing more.
            try db.execute(sql: "SAVEPOINT s; UPDATE player SET score = 2 WHERE id = 1")
            db.remove(transactionObserver: log)
            db.remove(transactionObserver: strongLog)
            try db.execute(sql: "RELEASE s; UPDATE player SET score = 3 WHERE id = 1")
        }
        let expected: [EventLog.Entry] = [
            .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 1)),
            .willCommit, .commit,
        ]
        #expect(log.entries == expected)
        #expect(strongLog.entries == expected)
    }

    /// The hooks stay installed after the last observer leaves: commits made
    /// then must not reach an observer added later.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func commitsMadeWhileNobodyObservesReachNoLaterObserver(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        let (counter, cancellable) = countChanges(in: writer, of: [ObservedPlayer.all()])
        cancellable.cancel()
        try writer.writeSQLWithoutTransaction("BEGIN; UPDATE player SET score = 2 WHERE id = 1; ROLLBACK")
        try writer.writeSQL("UPDATE player SET score = 1 WHERE id = 1")
        #expect(counter.value == 0)

        let log = EventLog()
        try writer.write { db in
            db.add(transactionObserver: log, extent: .nextTransaction)
            try db.execute(sql: "UPDATE player SET score = 3 WHERE id = 2")
            #expect(log.entries == [
                .event(DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 2)),
            ])
        }
        #expect(log.entries.suffix(2) == [.willCommit, .commit])
        let (later, laterCancellable) = countChanges(in: writer, of: [ObservedPlayer.all()])
        defer { laterCancellable.cancel() }
        try writer.writeSQL("UPDATE player SET score = 4 WHERE id = 2")
        #expect(later.value == 1)
    }
}

/// The kinds a transaction observer was asked about.
final class KindLog {
    var kinds: [DatabaseEventKind] = []
}
