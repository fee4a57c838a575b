import DatabaseTestSupport
import DatabaseRegions
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// The factories and operators of `ValueObservation`. Each value is awaited
/// before the next write, so that no value can coalesce, and every kind of
/// database delivers exactly the same values.
@Suite struct ValueObservationTests {
    // MARK: - How the region is known

    static let flagSchemaSQL = """
        CREATE TABLE flag (id INTEGER PRIMARY KEY, useB BOOLEAN NOT NULL);
        INSERT INTO flag (id, useB) VALUES (1, 0);
        CREATE TABLE a (id INTEGER PRIMARY KEY);
        CREATE TABLE b (id INTEGER PRIMARY KEY);
        """

    /// Reads `a` or `b`, as the flag row says.
    @Sendable static func fetchFlaggedCount(_ db: Database) throws -> String {
        if try SQLRequest<Bool>(sql: "SELECT useB FROM flag").fetchOne(db) == true {
            return "b:\(try SQLRequest<Row>(sql: "SELECT * FROM b").fetchCount(db))"
        }
        return "a:\(try SQLRequest<Row>(sql: "SELECT * FROM a").fetchCount(db))"
    }

    /// `trackingOne` of a non-optional value gives nil for a NULL, as
    /// `fetchOne` does, with or without `removeDuplicates` (the best score
    /// of an empty table).
    @Test(arguments: DatabaseKind.allCases, [false, true])
    func trackingOneOfAValueGivesNilForNull(kind: DatabaseKind, removeDuplicates: Bool) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: "CREATE TABLE s (score INTEGER)")
        let recorder = Recorder<Int?>()
        let cancellable = ValueObservation.trackingOne(
            SQLRequest<Int>(sql: "SELECT MAX(score) FROM s"), removeDuplicates: removeDuplicates)
            .start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [nil])
        try test.writer.writeSQL("INSERT INTO s VALUES (7)")
        #expect(try await recorder.wait(for: 2) == [nil, 7])
    }

    @Test(arguments: DatabaseKind.allCases)
    func trackingRecordsTheRegionOfEveryFetch(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.flagSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<String>()
        let cancellable = ValueObservation.tracking(Self.fetchFlaggedCount)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try writer.writeSQL("INSERT INTO b DEFAULT VALUES")  // not read: no value
        try writer.writeSQL("INSERT INTO a DEFAULT VALUES")
        try await recorder.wait(for: 2)
        try writer.writeSQL("UPDATE flag SET useB = 1")  // now reads b
        try await recorder.wait(for: 3)
        try writer.writeSQL("INSERT INTO a DEFAULT VALUES")  // no longer read: no value
        try writer.writeSQL("INSERT INTO b DEFAULT VALUES")
        #expect(try await recorder.wait(for: 4) == ["a:0", "a:1", "b:1", "b:2"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func trackingConstantRegionKeepsTheRegionOfTheFirstFetch(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.flagSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<String>()
        let cancellable = ValueObservation.trackingConstantRegion(Self.fetchFlaggedCount)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try writer.writeSQL("INSERT INTO a DEFAULT VALUES")
        try await recorder.wait(for: 2)
        try writer.writeSQL("UPDATE flag SET useB = 1")
        try await recorder.wait(for: 3)
        try writer.writeSQL("INSERT INTO b DEFAULT VALUES")  // outside the first region: no value
        try writer.writeSQL("INSERT INTO a DEFAULT VALUES")  // inside: fetches, and reads b
        #expect(try await recorder.wait(for: 4) == ["a:0", "a:1", "b:0", "b:1"])
    }

    struct Balances: Equatable, Sendable {
        var checking: Int
        var savings: Int
        var label: String
    }

    /// Explicit regions; the fetch reads two tables of the regions with two
    /// statements, and a third table outside of them, in one transaction.
    @Test(arguments: DatabaseKind.allCases)
    func trackingRegionsFetchesConsistentValuesFromSeveralTables(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE checking (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL);
            CREATE TABLE savings (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL);
            CREATE TABLE label (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
            INSERT INTO checking (id, amount) VALUES (1, 100);
            INSERT INTO savings (id, amount) VALUES (1, 0);
            INSERT INTO label (id, text) VALUES (1, 'before');
            """)
        let writer = test.writer
        let recorder = Recorder<Balances>()
        let observation = ValueObservation.tracking(
            regions: [SQLRequest<Row>(sql: "SELECT amount FROM checking"), DatabaseRegion(table: "savings")]
        ) { db in
            Balances(
                checking: try SQLRequest<Int>(sql: "SELECT amount FROM checking").fetchOne(db)!,
                savings: try SQLRequest<Int>(sql: "SELECT amount FROM savings").fetchOne(db)!,
                label: try SQLRequest<String>(sql: "SELECT text FROM label").fetchOne(db)!)
        }
        let cancellable = observation.start(
            in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // A table read by the fetch, outside the regions: no value.
        try writer.writeSQL("UPDATE label SET text = 'after'")
        // Transfers: each transaction keeps the total at 100.
        let transfers = 50
        for index in 1...transfers {
            try await writer.write { db in
                try db.execute(sql: "UPDATE checking SET amount = amount - 1")
                try db.execute(sql: "UPDATE savings SET amount = amount + 1")
            }
            if index == 1 {
                // The label change shows with the first transfer.
                #expect(try await recorder.wait(for: 2)[1] == Balances(checking: 99, savings: 1, label: "after"))
            }
        }
        let values = try await recorder.wait(forLast: Balances(checking: 50, savings: 50, label: "after"))
        #expect(values.first == Balances(checking: 100, savings: 0, label: "before"))
        #expect(values.allSatisfy { $0.checking + $0.savings == 100 })
        #expect(values.map(\.savings) == values.map(\.savings).sorted())
        if kind != .pool {
            #expect(values.count == transfers + 1)
        }
    }

    // MARK: - Requests

    @Test(arguments: DatabaseKind.allCases)
    func requestObservationsOfSQLRequests(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let allRows = Recorder<[Row]>()
        let allNames = Recorder<[String]>()
        let allPlayers = Recorder<[ObservedPlayer]>()
        let oneRow = Recorder<Row?>()
        let oneName = Recorder<String?>()
        let onePlayer = Recorder<ObservedPlayer?>()
        let count = Recorder<Int>()
        let cancellables = [
            ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELECT id, name FROM player ORDER BY id"))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: allRows.append),
            ValueObservation.trackingAll(SQLRequest<String>(sql: "SELECT name FROM player ORDER BY id"))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: allNames.append),
            ValueObservation.trackingAll(SQLRequest<ObservedPlayer>(sql: "SELECT * FROM player ORDER BY id"))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: allPlayers.append),
            ValueObservation.trackingOne(SQLRequest<Row>(sql: "SELECT id, name FROM player WHERE id = 4"))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: oneRow.append),
            ValueObservation.trackingOne(SQLRequest<String>(sql: "SELECT name FROM player WHERE id = ?", arguments: [4]))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: oneName.append),
            ValueObservation.trackingOne(SQLRequest<ObservedPlayer>(sql: "SELECT * FROM player WHERE id = 4"))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: onePlayer.append),
            ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM player WHERE score > ?", arguments: [120]))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: count.append),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        try writer.writeSQL("INSERT INTO player (id, name, score) VALUES (4, 'David', 300)")

        let david = ObservedPlayer(id: 4, name: "David", score: 300)
        let names = ["Arthur", "Barbara", "Craig"]
        #expect(try await allRows.wait(for: 2) == [
            [Row(["id": 1, "name": "Arthur"]), Row(["id": 2, "name": "Barbara"]), Row(["id": 3, "name": "Craig"])],
            [Row(["id": 1, "name": "Arthur"]), Row(["id": 2, "name": "Barbara"]), Row(["id": 3, "name": "Craig"]),
             Row(["id": 4, "name": "David"])],
        ])
        #expect(try await allNames.wait(for: 2) == [names, names + ["David"]])
        #expect(try await allPlayers.wait(for: 2).map { $0.map(\.name) } == [names, names + ["David"]])
        #expect(try await allPlayers.wait(for: 2)[1].last == david)
        #expect(try await oneRow.wait(for: 2) == [nil, Row(["id": 4, "name": "David"])])
        #expect(try await oneName.wait(for: 2) == [nil, "David"])
        #expect(try await onePlayer.wait(for: 2) == [nil, david])
        #expect(try await count.wait(for: 2) == [2, 3])
    }

    @Test(arguments: DatabaseKind.allCases)
    func requestObservationsOfTableRecordRequests(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let players = Recorder<[ObservedPlayer]>()
        let rows = Recorder<[Row]>()
        let ids = Recorder<[Int64]>()
        let one = Recorder<ObservedPlayer?>()
        let oneID = Recorder<Int64?>()
        let count = Recorder<Int>()
        let cancellables = [
            ValueObservation.trackingAll(ObservedPlayer.orderByPrimaryKey())
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: players.append),
            ValueObservation.trackingAll(ObservedPlayer.filter(keys: [1, 3]).asRequest(of: Row.self))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: rows.append),
            ValueObservation.trackingAll(
                ObservedPlayer.filter(sql: "score > ?", arguments: [120]).orderByPrimaryKey().asRequest(of: Int64.self))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: ids.append),
            ValueObservation.trackingOne(ObservedPlayer.filter(key: 1))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: one.append),
            ValueObservation.trackingOne(ObservedPlayer.order(sql: "score DESC").asRequest(of: Int64.self))
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: oneID.append),
            ValueObservation.trackingCount(ObservedPlayer.all())
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: count.append),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        try writer.writeSQL("UPDATE player SET score = 400 WHERE id = 1")

        let arthur = ObservedPlayer(id: 1, name: "Arthur", score: 100)
        let barbara = ObservedPlayer(id: 2, name: "Barbara", score: 200)
        let craig = ObservedPlayer(id: 3, name: "Craig", score: 150)
        let arthur400 = ObservedPlayer(id: 1, name: "Arthur", score: 400)
        #expect(try await players.wait(for: 2) == [[arthur, barbara, craig], [arthur400, barbara, craig]])
        #expect(try await rows.wait(for: 2) == [
            [Row(["id": 1, "name": "Arthur", "score": 100]), Row(["id": 3, "name": "Craig", "score": 150])],
            [Row(["id": 1, "name": "Arthur", "score": 400]), Row(["id": 3, "name": "Craig", "score": 150])],
        ])
        #expect(try await ids.wait(for: 2) == [[2, 3], [1, 2, 3]])
        #expect(try await one.wait(for: 2) == [arthur, arthur400])
        #expect(try await oneID.wait(for: 2) == [2, 1])
        // Counting: the update is a potential change of the count.
        #expect(try await count.wait(for: 2) == [3, 3])
    }

    /// Dispatch goes through the region index: a row-precise region hears
    /// of its row only.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aRowPreciseObservationIgnoresOtherRows(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<ObservedPlayer?>()
        let cancellable = ValueObservation.trackingOne(ObservedPlayer.filter(key: 2))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try writer.writeSQL("UPDATE player SET score = 0 WHERE id <> 2")
        try writer.writeSQL("DELETE FROM player WHERE id = 1")
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        try writer.writeSQL("UPDATE player SET score = 1 WHERE id = 2")
        #expect(try await recorder.wait(for: 2) == [
            ObservedPlayer(id: 2, name: "Barbara", score: 200), ObservedPlayer(id: 2, name: "Barbara", score: 1),
        ])
    }

    // MARK: - Operators

    @Test(arguments: DatabaseKind.allCases)
    func removeDuplicatesSkipsValuesEqualToThePreviousOne(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let all = Recorder<Int>()
        let distinct = Recorder<Int>()
        let observation = ValueObservation.trackingCount(ObservedPlayer.all())
        let cancellables = [
            observation.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: all.append),
            observation.removeDuplicates()
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: distinct.append),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        try await distinct.wait(for: 1)

        try writer.writeSQL("UPDATE player SET name = 'Arthur II' WHERE id = 1")
        try await all.wait(for: 2)
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        #expect(try await all.wait(for: 3) == [3, 3, 4])
        #expect(try await distinct.wait(for: 2) == [3, 4])
    }

    @Test(arguments: DatabaseKind.allCases)
    func removeDuplicatesByUsesTheGivenComparison(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<[ObservedPlayer]>()
        let cancellable = ValueObservation.trackingAll(ObservedPlayer.orderByPrimaryKey())
            .removeDuplicates { $0.map(\.name) == $1.map(\.name) }
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try writer.writeSQL("UPDATE player SET score = 0")  // same names: skipped
        try writer.writeSQL("UPDATE player SET name = 'Arthur II' WHERE id = 1")
        let values = try await recorder.wait(for: 2)
        #expect(values.map { $0.map(\.name) } == [["Arthur", "Barbara", "Craig"], ["Arthur II", "Barbara", "Craig"]])
        #expect(values[1].map(\.score) == [0, 0, 0])
    }

    @Test(arguments: DatabaseKind.allCases)
    func mapTransformsEachValueOffTheWriter(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let writerLabel = try await writer.write { _ in currentDispatchQueueLabel() }
        let mapLabels = Locked<[String?]>([])
        let recorder = Recorder<String>()
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .map { count in
                mapLabels.withLock { $0.append(currentDispatchQueueLabel()) }
                return "\(count) players"
            }
            .removeDuplicates()
            .map { $0.uppercased() }
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try writer.writeSQL("UPDATE player SET score = 0")
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        #expect(try await recorder.wait(for: 2) == ["3 PLAYERS", "4 PLAYERS"])
        #expect(mapLabels.value.count == 3)
        #expect(!mapLabels.value.contains(writerLabel))
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func removeDuplicatesTrueComparesRawRowsOfRecordsThatAreNotEquatable(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        let all = Recorder<[UnequatablePlayer]>()
        let distinct = Recorder<[UnequatablePlayer]>()
        let distinctOne = Recorder<UnequatablePlayer?>()
        let request = UnequatablePlayer.orderByPrimaryKey()
        let cancellables = [
            ValueObservation.trackingAll(request)
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: all.append),
            ValueObservation.trackingAll(request, removeDuplicates: true)
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: distinct.append),
            ValueObservation.trackingOne(UnequatablePlayer.filter(key: 1), removeDuplicates: true)
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: distinctOne.append),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        try await distinct.wait(for: 1)
        try await distinctOne.wait(for: 1)

        // A transaction that changes rows and puts them back: a change for
        // the observations, and the same raw rows.
        try writer.writeSQL("""
            UPDATE player SET score = 0 WHERE id = 1; INSERT INTO player (id, name) VALUES (4, 'David');
            DELETE FROM player WHERE id = 4; UPDATE player SET score = 100 WHERE id = 1
            """)
        try await all.wait(for: 2)
        try writer.writeSQL("UPDATE player SET name = 'Arthur II' WHERE id = 1")
        #expect(try await all.wait(for: 3).map { $0.map(\.name) } == [
            ["Arthur", "Barbara", "Craig"], ["Arthur", "Barbara", "Craig"], ["Arthur II", "Barbara", "Craig"],
        ])
        #expect(try await distinct.wait(for: 2).map { $0.map(\.name) } == [
            ["Arthur", "Barbara", "Craig"], ["Arthur II", "Barbara", "Craig"],
        ])
        #expect(try await distinctOne.wait(for: 2).map { $0?.name } == ["Arthur", "Arthur II"])
    }
}
