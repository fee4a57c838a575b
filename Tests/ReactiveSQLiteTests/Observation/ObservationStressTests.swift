import DatabaseTestSupport
import DatabaseRegions
import Dispatch
import Foundation
import ReactiveSQLite
import Synchronization
import Testing
import TestSupport

/// Many observations while several writers commit and roll back random
/// transactions. Each writer knows exactly which rows each of its committed
/// transactions changed (it checks `changesCount` after each statement), and
/// counts, with `DatabaseRegion.isModified(by:)`, the transactions each
/// region observation must hear of.
@Suite(.serialized, .onItsOwnThread) struct ObservationStressTests {
    static let tables = ["t0", "t1", "t2"]
    static let initialRowCount = 20

    static var schemaSQL: String {
        var sql = "CREATE TABLE clock (id INTEGER PRIMARY KEY, version INTEGER NOT NULL);"
        sql += "INSERT INTO clock (id, version) VALUES (1, 0);"
        for table in tables {
            sql += "CREATE TABLE \(table) (id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b INTEGER NOT NULL);"
            for id in 1...initialRowCount {
                sql += "INSERT INTO \(table) (id, a, b) VALUES (\(id), \(id), \(id * 10));"
            }
        }
        return sql
    }

    // MARK: - Transactions

    /// One statement of a transaction.
    enum Operation: Sendable {
        case insert(table: String, a: Int, b: Int)
        case incrementA(table: String, id: Int64)
        case incrementB(table: String, id: Int64)
        case incrementBoth(table: String, id: Int64)
        case delete(table: String, id: Int64)
        /// Writes values no committed state has (negative), in a
        /// transaction or savepoint that is rolled back.
        case poison(table: String, id: Int64)
    }

    struct Plan: Sendable {
        var operations: [Operation]
        /// Run inside a savepoint that is rolled back, in the middle of the
        /// transaction.
        var rolledBackSavepoint: [Operation]?
        var rollsBack: Bool
    }

    static func randomOperation(_ generator: inout SplitMix64, poisoned: Bool) -> Operation {
        let table = tables[Int(generator.next() % UInt64(tables.count))]
        let id = Int64(1 + generator.next() % 30)
        if poisoned && generator.next() % 2 == 0 { return .poison(table: table, id: id) }
        switch generator.next() % 10 {
        case 0, 1: return .insert(table: table, a: Int(generator.next() % 100), b: Int(generator.next() % 100))
        case 2, 3, 4: return .incrementA(table: table, id: id)
        case 5, 6: return .incrementB(table: table, id: id)
        case 7: return .incrementBoth(table: table, id: id)
        default: return .delete(table: table, id: id)
        }
    }

    static func randomPlan(_ generator: inout SplitMix64) -> Plan {
        let rollsBack = generator.next() % 10 == 0
        let count = 1 + Int(generator.next() % 4)
        let operations = (0..<count).map { _ in randomOperation(&generator, poisoned: rollsBack) }
        var savepoint: [Operation]?
        if !rollsBack && generator.next() % 5 == 0 {
            savepoint = (0..<(1 + Int(generator.next() % 3))).map { _ in randomOperation(&generator, poisoned: true) }
        }
        return Plan(operations: operations, rolledBackSavepoint: savepoint, rollsBack: rollsBack)
    }

    /// Runs one statement; returns the row change it made, if any.
    static func run(_ operation: Operation, _ db: Database) throws -> DatabaseEvent? {
        func update(_ table: String, _ assignments: String, _ columns: Set<String>, _ id: Int64) throws -> DatabaseEvent? {
            try db.execute(sql: "UPDATE \(table) SET \(assignments) WHERE id = ?", arguments: [id])
            guard db.changesCount == 1 else { return nil }
            return DatabaseEvent(kind: .update(tableName: table, columnNames: columns), rowID: id)
        }
        switch operation {
        case let .insert(table, a, b):
            try db.execute(sql: "INSERT INTO \(table) (a, b) VALUES (?, ?)", arguments: [a, b])
            return DatabaseEvent(kind: .insert(tableName: table), rowID: db.lastInsertedRowID)
        case let .incrementA(table, id):
            return try update(table, "a = a + 1", ["a"], id)
        case let .incrementB(table, id):
            return try update(table, "b = b + 1", ["b"], id)
        case let .incrementBoth(table, id):
            return try update(table, "a = a + 1, b = b + 1", ["a", "b"], id)
        case let .delete(table, id):
            try db.execute(sql: "DELETE FROM \(table) WHERE id = ?", arguments: [id])
            return db.changesCount == 1 ? DatabaseEvent(kind: .delete(tableName: table), rowID: id) : nil
        case let .poison(table, id):
            try db.execute(sql: "UPDATE \(table) SET a = -1 WHERE id = ?", arguments: [id])
            try db.execute(sql: "INSERT INTO \(table) (a, b) VALUES (-1, -1)")
            return nil
        }
    }

    /// Runs a plan in the transaction of `write`; returns the row changes
    /// it commits, or throws `TestError` when it rolls back.
    static func run(_ plan: Plan, _ db: Database) throws -> [DatabaseEvent] {
        var events: [DatabaseEvent] = []
        for (index, operation) in plan.operations.enumerated() {
            if let event = try run(operation, db) { events.append(event) }
            if index == 0, let savepoint = plan.rolledBackSavepoint {
                try db.execute(sql: "SAVEPOINT stress")
                for operation in savepoint { _ = try run(operation, db) }
                try db.execute(sql: "ROLLBACK TO stress; RELEASE stress")
            }
        }
        try db.execute(sql: "UPDATE clock SET version = version + 1")
        if plan.rollsBack { throw TestError() }
        return events
    }

    // MARK: - Observations

    struct Snapshot: Equatable, Sendable {
        var version: Int
        var rows: [Row]
    }

    /// A random region for a region observation.
    static func randomRegion(_ generator: inout SplitMix64) -> DatabaseRegion {
        var region = DatabaseRegion()
        for _ in 0..<(1 + Int(generator.next() % 2)) {
            let table = tables[Int(generator.next() % UInt64(tables.count))]
            let rowIDs = Set((0..<(1 + generator.next() % 3)).map { _ in Int64(1 + generator.next() % 30) })
            switch generator.next() % 5 {
            case 0: region.formUnion(DatabaseRegion(table: table))
            case 1: region.formUnion(DatabaseRegion(table: table, columns: ["a"]))
            case 2: region.formUnion(DatabaseRegion(table: table, columns: ["b"]))
            case 3: region.formUnion(DatabaseRegion(table: table, rowIDs: rowIDs))
            default: region.formUnion(DatabaseRegion(table: table, columns: ["b"], rowIDs: rowIDs))
            }
        }
        return region
    }

    struct StressTable: TableRecord {
        static let databaseTableName = "t1"
    }

    /// A random value observation: what it fetches, and how its region is
    /// known. Returns the fetch too, to compare the last value with the
    /// database.
    static func randomObservation(
        _ generator: inout SplitMix64, index: Int
    ) -> (ValueObservation<Snapshot>, @Sendable (Database) throws -> Snapshot) {
        let table = tables[Int(generator.next() % UInt64(tables.count))]
        let other = tables[Int(generator.next() % UInt64(tables.count))]
        let keys = Array(Set((0..<3).map { _ in Int64(1 + generator.next() % 30) })).sorted()
        let keyList = keys.map(String.init).joined(separator: ", ")
        let requests: [SQLRequest<Row>] = [
            SQLRequest(sql: "SELECT id, a FROM \(table) ORDER BY id"),
            SQLRequest(sql: "SELECT COUNT(*), SUM(b) FROM \(table)"),
            SQLRequest(sql: "SELECT * FROM \(table) WHERE id IN (\(keyList)) ORDER BY id"),
            SQLRequest(sql: "SELECT x.id, x.a, y.b FROM \(table) x JOIN \(other) y ON y.id = x.id ORDER BY x.id"),
            SQLRequest(sql: "SELECT b FROM \(table) WHERE a % 2 = 0 ORDER BY id"),
        ]
        let request = requests[Int(generator.next() % UInt64(requests.count))]
        let version = SQLRequest<Int>(sql: "SELECT version FROM clock")
        switch index % 5 {
        case 0:
            // The region is recorded at each fetch (and includes the clock).
            let fetch: @Sendable (Database) throws -> Snapshot = { db in
                Snapshot(version: try version.fetchOne(db)!, rows: try request.fetchAll(db))
            }
            return (ValueObservation.tracking(fetch), fetch)
        case 1:
            // A row-precise region.
            let rows = StressTable.filter(keys: keys).orderByPrimaryKey().asRequest(of: Row.self)
            let fetch: @Sendable (Database) throws -> Snapshot = { db in
                Snapshot(version: try version.fetchOne(db)!, rows: try rows.fetchAll(db))
            }
            return (ValueObservation.tracking(regions: [rows], fetch: fetch), fetch)
        default:
            let fetch: @Sendable (Database) throws -> Snapshot = { db in
                Snapshot(version: try version.fetchOne(db)!, rows: try request.fetchAll(db))
            }
            return (ValueObservation.tracking(regions: [request], fetch: fetch), fetch)
        }
    }

    // The limit catches a hang; under ThreadSanitizer, on two cores shared
    // with the rest of the suite, a run takes up to about 100 s.
    @Test(.timeLimit(.minutes(3)), arguments: [DatabaseKind.pool, .fileQueue])
    func manyObservationsFollowManyWriters(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL)
        let writer = test.writer
        // The test is about observation, not durability: no fsync at each
        // of the 3 000 commits.
        try await writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        var generator = SplitMix64(seed: 0x5EED_0B5E)

        // 20 region observations.
        let regions = (0..<20).map { _ in Self.randomRegion(&generator) }
        let expectedCounts = Mutex([Int](repeating: 0, count: regions.count))
        let counters = regions.map { _ in ChangeCounter() }
        var cancellables: [AnyDatabaseCancellable] = []
        for (region, counter) in zip(regions, counters) {
            cancellables.append(DatabaseRegionObservation(tracking: region).start(in: writer) { error in
                Issue.record(error)
            } onChange: { _ in
                counter.increment()
            })
        }

        // 50 value observations.
        let observations = (0..<50).map { Self.randomObservation(&generator, index: $0) }
        let recorders = observations.map { _ in Recorder<Snapshot>() }
        for ((observation, _), recorder) in zip(observations, recorders) {
            cancellables.append(observation.start(
                in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append))
        }
        defer { cancellables.forEach { $0.cancel() } }

        /// Counts the transactions each region observation must hear of.
        @Sendable func didCommit(_ events: [DatabaseEvent]) {
            let concerned = regions.map { region in events.contains { region.isModified(by: $0) } }
            expectedCounts.withLock { counts in
                for (index, isConcerned) in concerned.enumerated() where isConcerned { counts[index] += 1 }
            }
        }

        // Two writer threads and one async writer: 3 000 transactions (600
        // under ThreadSanitizer, which is ten times slower).
        let transactionsPerWriter = isRunningUnderThreadSanitizer ? 200 : 1000
        let plans = (0..<3).map { writerIndex in
            var generator = SplitMix64(seed: 1000 + UInt64(writerIndex))
            return (0..<transactionsPerWriter).map { _ in Self.randomPlan(&generator) }
        }
        let rolledBack = plans.joined().filter(\.rollsBack).count
        let withRolledBackSavepoint = plans.joined().filter { $0.rolledBackSavepoint != nil }.count
        let threads = plans.prefix(2).map { plans in
            BackgroundThread {
                for plan in plans {
                    do {
                        didCommit(try writer.write { db in try Self.run(plan, db) })
                    } catch is TestError {}
                }
            }
        }
        for plan in plans[2] {
            do {
                didCommit(try await writer.write { db in try Self.run(plan, db) })
            } catch is TestError {}
        }
        for thread in threads {
            try await thread.value(timeout: .seconds(55))
        }
        // About 10% rolled back, and as many with a rolled-back savepoint.
        #expect(rolledBack > transactionsPerWriter * 3 / 20 && rolledBack < transactionsPerWriter * 3 / 5)
        #expect(withRolledBackSavepoint > transactionsPerWriter * 3 / 20)

        // Each region observation heard exactly of its transactions.
        let expected = expectedCounts.withLock { $0 }
        #expect(counters.map(\.value) == expected)
        #expect(expected.allSatisfy { $0 > 0 })

        // Values never go back in time, never show a rolled-back change,
        // and end with the state of the database.
        for ((_, fetch), recorder) in zip(observations, recorders) {
            let fresh = try await writer.read(fetch)
            let values = try await recorder.wait { $0.last?.rows == fresh.rows }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.version < $1.version })
            let poisoned = values.contains { snapshot in
                snapshot.rows.contains { row in
                    row.databaseValues.contains { value in (Int.fromDatabaseValue(value) ?? 0) < 0 }
                }
            }
            #expect(!poisoned)
        }
    }
}
