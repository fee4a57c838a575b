import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import ReactiveSQLiteReplication
import TestSupport
import Testing

/// The source-agnostic applier: one SQLite transaction per source
/// transaction, its position stored with it, exactly once, never silently
/// wrong, and observers that see each source transaction whole.
// On its own thread (see `DedicatedThreadTrait`): its cases compute for
// seconds, and on Swift's cooperative pool (two threads in CI) they starved
// the parallel debug run; in two runs of it, this suite and others of two
// minutes exceeded their limit, while they take 6 to 8 s alone.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct ReplicaApplierTests {
    static let tables = [
        ReplicaTable(
            name: "player",
            columns: [.init(name: "id", type: "INTEGER"), .init(name: "name", type: "TEXT"), .init(name: "score", type: "INTEGER")],
            primaryKey: ["id"]),
        ReplicaTable(
            name: "team", columns: [.init(name: "id", type: "INTEGER"), .init(name: "size", type: "INTEGER")],
            primaryKey: ["id"]),
    ]

    static func value(_ value: some DatabaseValueConvertible) -> DatabaseValue { value.databaseValue }

    static func makeReplica(_ kind: DatabaseKind) throws -> (TestDatabase, ReplicaApplier) {
        let test = try kind.make()
        let applier = try ReplicaApplier(writer: test.writer, source: "test")
        try applier.replaceTables(tables, position: ReplicationPosition(10), sourceState: "s") { table, insert in
            if table.name == "player" {
                try insert([value(1), value("a"), value(10)])
            } else {
                try insert([value(1), value(1)])
            }
        }
        return (test, applier)
    }

    static func state(_ writer: any DatabaseWriter) throws -> [String] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, score FROM player ORDER BY id").map { "\($0)" }
                + Row.fetchAll(db, sql: "SELECT id, size FROM team ORDER BY id").map { "\($0)" }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func transactionsApplyOnceWithTheirPosition(kind: DatabaseKind) throws {
        let (test, applier) = try Self.makeReplica(kind)
        #expect(try applier.position() == ReplicationPosition(10))
        #expect(try applier.sourceState() == "s")
        let transaction = ReplicatedTransaction(position: ReplicationPosition(20), changes: [
            .insert(table: "player", row: ["id": Self.value(2), "name": Self.value("b"), "score": Self.value(5)]),
            .update(table: "player", key: ["id": Self.value(1)], row: ["id": Self.value(3), "score": Self.value(11)]),
            .delete(table: "team", key: ["id": Self.value(1)]),
        ])
        #expect(try applier.apply(transaction, sourceState: .some(nil)))
        let after = try Self.state(test.writer)
        #expect(after == ["[id:2 name:'b' score:5]", "[id:3 name:'a' score:11]"])
        #expect(try applier.position() == ReplicationPosition(20))
        #expect(try applier.sourceState() == nil)
        // The same transaction again (a source that resends after a crash),
        // or an older one: nothing happens.
        #expect(try applier.apply(transaction) == false)
        #expect(try applier.apply(ReplicatedTransaction(position: ReplicationPosition(15), changes: [.truncate(tables: ["player"])])) == false)
        #expect(try Self.state(test.writer) == after)
        try applier.apply(ReplicatedTransaction(position: ReplicationPosition(30), changes: [.truncate(tables: ["player"])]))
        #expect(try Self.state(test.writer) == [])
    }

    /// A change that the replica does not match throws, and rolls back the
    /// whole source transaction, position included.
    @Test(arguments: DatabaseKind.allCases)
    func aChangeTheReplicaDoesNotMatchThrowsAndKeepsNothing(kind: DatabaseKind) throws {
        let (test, applier) = try Self.makeReplica(kind)
        let before = try Self.state(test.writer)
        let failures: [ReplicatedChange] = [
            .update(table: "player", key: ["id": Self.value(99)], row: ["score": Self.value(1)]),
            .delete(table: "player", key: ["id": Self.value(99)]),
            .insert(table: "player", row: ["id": Self.value(1), "name": Self.value("dup")]),
            .insert(table: "missing", row: ["id": Self.value(1)]),
            .update(table: "player", key: ["id": Self.value(1)], row: ["nope": Self.value(1)]),
        ]
        for failure in failures {
            let transaction = ReplicatedTransaction(position: ReplicationPosition(20), changes: [
                .insert(table: "team", row: ["id": Self.value(5), "size": Self.value(0)]), failure,
            ])
            #expect(throws: (any Error).self) { try applier.apply(transaction) }
            #expect(try Self.state(test.writer) == before)
            #expect(try applier.position() == ReplicationPosition(10))
        }
    }

    /// Observers of the replica see each source transaction as one commit:
    /// a transaction that moves score between two tables is never seen
    /// half-applied.
    @Test(arguments: DatabaseKind.allCases)
    func observersSeeEachSourceTransactionWhole(kind: DatabaseKind) async throws {
        let (test, applier) = try Self.makeReplica(kind)
        let total: @Sendable (Database) throws -> Int = { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT SUM(score) FROM player) + (SELECT SUM(size) FROM team)")!
        }
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.tracking(total).start(in: test.writer, scheduling: .observationQueue) { error in
            Issue.record(error)
        } onChange: { recorder.append($0) }
        defer { cancellable.cancel() }
        for step in 1...50 {
            try await applier.apply(ReplicatedTransaction(position: ReplicationPosition(10 + UInt64(step)), changes: [
                .update(table: "player", key: ["id": Self.value(1)], row: ["score": Self.value(10 - step)]),
                .update(table: "team", key: ["id": Self.value(1)], row: ["size": Self.value(1 + step)]),
            ]))
        }
        try await recorder.wait(timeout: .seconds(10)) { values in values.last == 11 && values.count >= 1 }
        #expect(recorder.values.allSatisfy { $0 == 11 })
    }

    /// `waitUntilReplicated` returns once the stored position reaches the
    /// one asked, and not before.
    @Test(arguments: DatabaseKind.allCases)
    func waitUntilReplicatedReturnsAtThePosition(kind: DatabaseKind) async throws {
        let (test, applier) = try Self.makeReplica(kind)
        let writer = test.writer
        let waiter = Task {
            try await ReplicaApplier.waitUntilReplicated(ReplicationPosition(40), source: "test", in: writer)
            return try await applier.position()
        }
        try await applier.advance(to: ReplicationPosition(30))
        try await applier.advance(to: ReplicationPosition(40))
        #expect(try await waiter.value == ReplicationPosition(40))
        // Already there: at once.
        try await ReplicaApplier.waitUntilReplicated(ReplicationPosition(35), source: "test", in: writer)
    }

    /// Rows of a streamed copy: batch `index` of a table, as its columns
    /// take them.
    static func batch(_ table: ReplicaTable, ids: Range<Int>) -> [[DatabaseValue]] {
        ids.map { id in
            table.name == "player" ? [value(id), value("p\(id)"), value(id)] : [value(id), value(0)]
        }
    }

    /// A streamed copy: batches of rows, sent while the writer inserts the
    /// ones before, replace the tables in one commit, with the position
    /// and the source's state. An observer sees the old tables, then the
    /// new ones, never a part of them.
    @Test(arguments: DatabaseKind.allCases)
    func aStreamedCopyReplacesTheTablesInOneCommit(kind: DatabaseKind) async throws {
        let (test, applier) = try Self.makeReplica(kind)
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.tracking { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM player) + (SELECT COUNT(*) FROM team)")!
        }.start(in: test.writer, scheduling: .observationQueue) { Issue.record($0) } onChange: { recorder.append($0) }
        defer { cancellable.cancel() }
        try await recorder.wait(timeout: .seconds(10)) { $0.last == 2 }
        try await applier.replaceTables(Self.tables, position: ReplicationPosition(50), sourceState: "copied") {
            table, write in
            let count = table.name == "player" ? 1_000 : 3
            for start in stride(from: 0, to: count, by: 100) {
                try await write(Self.batch(table, ids: start..<min(start + 100, count)))
            }
        }
        #expect(try await applier.position() == ReplicationPosition(50))
        #expect(try await applier.sourceState() == "copied")
        try await recorder.wait(timeout: .seconds(10)) { $0.last == 1_003 }
        #expect(Set(recorder.values) == [2, 1_003], "\(recorder.values)")
    }

    /// A streamed copy that fails keeps nothing, and throws why: the
    /// source's error; a row the replica refuses (the source's next
    /// `write` throws the replica's error too); a cancelled task, whose
    /// writer stops waiting for the next batch.
    @Test(arguments: DatabaseKind.allCases)
    func aStreamedCopyThatFailsKeepsNothing(kind: DatabaseKind) async throws {
        let (test, applier) = try Self.makeReplica(kind)
        let before = try Self.state(test.writer)
        struct SourceFailure: Error {}
        await #expect(throws: SourceFailure.self) {
            try await applier.replaceTables(Self.tables, position: ReplicationPosition(50), sourceState: nil) {
                table, write in
                try await write(Self.batch(table, ids: 2..<4))
                throw SourceFailure()
            }
        }
        let writeFailed = Locked(false)
        await #expect(throws: ReplicationError.self) {
            try await applier.replaceTables(Self.tables, position: ReplicationPosition(50), sourceState: nil) {
                table, write in
                do {
                    try await write([[Self.value(2)]])
                    try await write(Self.batch(table, ids: 3..<4))
                } catch {
                    writeFailed.value = error is ReplicationError
                    throw error
                }
            }
        }
        #expect(writeFailed.value)
        let copy = Task {
            try await applier.replaceTables(Self.tables, position: ReplicationPosition(50), sourceState: nil) {
                table, write in
                try await write(Self.batch(table, ids: 2..<4))
                try await Task.sleep(for: .seconds(600))
            }
        }
        copy.cancel()
        await #expect(throws: CancellationError.self) { try await copy.value }
        #expect(try Self.state(test.writer) == before)
        #expect(try await applier.position() == ReplicationPosition(10))
        #expect(try await applier.sourceState() == "s")
    }

    @Test func positionsReadAndWriteAsPostgreSQLSpellsThem() {
        #expect(ReplicationPosition(lsn: "16/B374D848") == ReplicationPosition(0x16_B374_D848))
        #expect(ReplicationPosition(0x16_B374_D848).description == "16/B374D848")
        for bad in ["", "/", "1/", "x/1", "123456789/1", "1/2/3"] { #expect(ReplicationPosition(lsn: bad) == nil) }
    }
}
