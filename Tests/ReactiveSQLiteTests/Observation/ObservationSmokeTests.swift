import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Synchronization
import TestSupport
import Testing

@Suite struct ObservationSmokeTests {
    @Test(arguments: DatabaseKind.allCases, [Configuration.ChangeTracking.automatic, .updateHookOnly])
    func trackingCountScenario(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        var configuration = Configuration()
        configuration.changeTracking = tracking
        let test = try kind.make(configuration: configuration)
        let writer = test.writer
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO person (name) VALUES ('a'), ('b')")
        }
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM person"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        try await recorder.wait(for: 1)
        try await writer.write { db in try db.execute(sql: "UPDATE person SET name = name") }
        try await writer.write { db in try db.execute(sql: "DELETE FROM person") }
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO person (name) VALUES ('a'), ('b'), ('c')")
        }
        let expected = tracking.usesPreUpdateHook ? [2, 0, 3] : [2, 2, 0, 3]
        if kind == .pool {
            // A pool may coalesce: an ordered subsequence that ends with 3.
            try await waitUntil { recorder.values.last == 3 }
            var remaining = expected[...]
            for value in recorder.values {
                guard let index = remaining.firstIndex(of: value) else {
                    Issue.record("unexpected \(recorder.values)"); break
                }
                remaining = remaining[(index + 1)...]
            }
        } else {
            try await recorder.wait(for: expected.count)
            #expect(recorder.values == expected)
        }
        cancellable.cancel()
    }

    @Test(arguments: DatabaseKind.allCases)
    func regionObservationScenario(kind: DatabaseKind) throws {
        let test = try kind.make()
        let writer = test.writer
        try writer.write { db in
            try db.execute(sql: """
                CREATE TABLE t1 (id INTEGER PRIMARY KEY, a, b);
                CREATE TABLE t2 (id INTEGER PRIMARY KEY, a, b);
                """)
        }
        let count = Mutex(0)
        let observation = DatabaseRegionObservation(tracking:
            SQLRequest<Row>(sql: "SELECT a FROM t1"), SQLRequest<Row>(sql: "SELECT t1.a, t2.b FROM t1, t2"))
        let cancellable = observation.start(in: writer, onError: { Issue.record($0) }) { _ in
            count.withLock { $0 += 1 }
        }
        try writer.write { db in
            try db.execute(sql: "INSERT INTO t1 (a, b) VALUES (1, 1); INSERT INTO t2 (a, b) VALUES (1, 1)")
        }
        #expect(count.withLock { $0 } == 1)
        try writer.write { db in try db.execute(sql: "UPDATE t1 SET b = 2") }
        try writer.write { db in try db.execute(sql: "UPDATE t2 SET a = 2") }
        #expect(count.withLock { $0 } == 1)
        try writer.write { db in try db.execute(sql: "INSERT INTO t2 (a, b) VALUES (1, 1)") }
        #expect(count.withLock { $0 } == 2)
        try writer.write { db in try db.execute(sql: "INSERT INTO t1 (a, b) VALUES (1, 1)") }
        #expect(count.withLock { $0 } == 3)
        try writer.write { db in try db.execute(sql: "UPDATE t1 SET a = 5") }
        #expect(count.withLock { $0 } == 4)
        cancellable.cancel()
        try writer.write { db in try db.execute(sql: "INSERT INTO t1 (a, b) VALUES (1, 1)") }
        #expect(count.withLock { $0 } == 4)
    }
}
