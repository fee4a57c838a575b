import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `Database.trace` reports every statement the connection starts, the
/// library's own included, until it is removed, without disturbing the
/// other hooks.
@Suite struct TraceTests {
    @Test(arguments: DatabaseKind.allCases)
    func everyStatementIsReportedOnceWhenItStarts(kind: DatabaseKind) throws {
        let test = try kind.make()
        let log = Locked<[String]>([])
        try test.writer.writeWithoutTransaction { db in
            db.trace { event in log.withLock { $0.append(event.sql) } }
        }
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)")
            _ = try SQLRequest<Int>(sql: "SELECT a FROM t").fetchAll(db)
        }
        // The library's own statements: the transaction of `write`, and the
        // reads of the schema that record the SELECT's region.
        let (library, user) = log.value.partitioned { $0.hasPrefix("PRAGMA") || $0.contains("sqlite_master") }
        #expect(library.contains("PRAGMA schema_version"))
        #expect(user == [
            "BEGIN IMMEDIATE TRANSACTION", "CREATE TABLE t (a);", "INSERT INTO t VALUES (1), (2)", "SELECT a FROM t",
            "COMMIT TRANSACTION",
        ])
        // A trigger's statements are part of the statement that fires it.
        log.withLock { $0 = [] }
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE audit (a);
                CREATE TRIGGER t_insert AFTER INSERT ON t BEGIN INSERT INTO audit VALUES (new.a); END;
                """)
            try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [3])
        }
        let inserts = log.value.filter { $0.contains("INSERT") }
        #expect(inserts == [
            "CREATE TRIGGER t_insert AFTER INSERT ON t BEGIN INSERT INTO audit VALUES (new.a); END;",
            "INSERT INTO t VALUES (?)",
        ])
        // Nil stops the trace.
        try test.writer.writeWithoutTransaction { db in db.trace(nil) }
        log.withLock { $0 = [] }
        try test.writer.write { db in try db.execute(sql: "DELETE FROM t") }
        #expect(log.value.isEmpty)
    }

    @Test(arguments: DatabaseKind.allCases)
    func expandedStatementsShowTheBoundValues(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (a, b)")
            var events: [Database.TraceEvent] = []
            db.trace(options: .expandedStatements) { events.append($0) }
            try db.execute(sql: "INSERT INTO t VALUES (:a, :b)", arguments: ["a": "x", "b": 2])
            db.trace { events.append($0) }
            try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [nil, 1.5])
            db.trace(nil)
            #expect(events.map(\.sql) == ["INSERT INTO t VALUES (:a, :b)", "INSERT INTO t VALUES (?, ?)"])
            #expect(events.map(\.expandedSQL) == ["INSERT INTO t VALUES ('x', 2)", nil])
            #expect(events.map(\.description) == ["INSERT INTO t VALUES ('x', 2)", "INSERT INTO t VALUES (?, ?)"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTraceDoesNotDisturbObservations(kind: DatabaseKind) async throws {
        let test = try kind.make()
        try await test.writer.write { db in try db.execute(sql: "CREATE TABLE t (a)") }
        let log = Locked<[String]>([])
        try await test.writer.writeWithoutTransaction { db in
            db.trace { event in log.withLock { $0.append(event.sql) } }
        }
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM t"))
            .start(in: test.writer, scheduling: .observationQueue) { Issue.record($0) } onChange: { recorder.append($0) }
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try await test.writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(try await recorder.wait(for: 2) == [0, 1])
        #expect(log.value.contains("INSERT INTO t VALUES (1)"))
    }

    @Test(arguments: DatabaseKind.allCases)
    func theTraceShowsWhatRecordsRun(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var events: [Database.TraceEvent] = []
            db.trace(options: [.statements, .expandedStatements]) { events.append($0) }
            var player = RecordWriteFixtures.Player(name: "Arthur", score: 100)
            try player.insert(db)
            db.trace(nil)
            // The first write of a table reads its schema.
            let schemaReads = events.map(\.sql).filter { $0.hasPrefix("PRAGMA") }
            #expect(!schemaReads.isEmpty)
            #expect(events.last?.expandedSQL == #"INSERT INTO "player" ("id", "name", "score") VALUES (NULL, 'Arthur', 100)"#)
        }
    }
}

extension Array {
    /// The elements that satisfy `belongsInFirst`, and the others, in order.
    func partitioned(_ belongsInFirst: (Element) -> Bool) -> ([Element], [Element]) {
        var first: [Element] = []
        var second: [Element] = []
        for element in self {
            if belongsInFirst(element) { first.append(element) } else { second.append(element) }
        }
        return (first, second)
    }
}
