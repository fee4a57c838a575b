#if PostgreSQL
import Foundation
import Logging
import PostgresNIO
import ReactiveSQLite
import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import TestSupport
import Testing

/// Exactly once across failures that a test in one process cannot fake:
/// `kill -9` of the `sqlite-replica` process in the middle of its work,
/// and a restart of PostgreSQL under a running replicator. Each ends with
/// the replica equal to PostgreSQL: a transaction applied twice stops the
/// replicator (a duplicate key, an update of a row that moved), one lost
/// leaves the replica different.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(10)))
struct ReplicaCrashTests {
    /// The `sqlite-replica` of this build, as a child process.
    final class ReplicaProcess: Sendable {
        let process: SpawnedProcess

        init(url: String, path: String, slot: String) throws {
            guard let tool = BuiltExecutable.url(named: "sqlite-replica", override: "SQLITE_REPLICA_EXECUTABLE") else {
                throw ReplicationError(
                    "sqlite-replica not found next to the tests in \(BuiltExecutable.directories.map(\.path)): "
                        + "build it (swift build --traits PostgreSQL), or set SQLITE_REPLICA_EXECUTABLE")
            }
            process = try SpawnedProcess(
                tool.path, [url, path, "--slot", slot, "--create-publication", "player,team", "--quiet"],
                standardError: .descriptor(2))
        }

        /// Kills it with SIGKILL, and waits for its end.
        func kill() async {
            process.signal(SIGKILL)
            #expect(await process.waitForExit(timeout: .seconds(30)) == .signal(SIGKILL))
        }
    }

    /// Waits until the replica file at `path` holds every transaction
    /// PostgreSQL committed so far; fails after a minute, or when the
    /// replicator process ended.
    static func catchUp(
        _ reader: DatabasePool, slot: String, with connection: PostgresConnection, process: ReplicaProcess
    ) async throws {
        let lsn = try await connection.texts("SELECT pg_current_wal_lsn()::text")[0][0]!
        let position = try #require(ReplicationPosition(lsn: lsn))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ReplicaApplier.waitUntilReplicated(position, source: "postgresql:\(slot)", in: reader) }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    if let ending = process.process.ending {
                        throw ReplicationError("sqlite-replica ended (\(ending)) before it reached \(position)")
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
                throw ReplicationError("the replica did not reach \(position) in 60 s")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// 600 random transactions while `sqlite-replica` is killed with
    /// SIGKILL six times and started again at once with the same slot:
    /// each run resumes where the last SQLite commit left it.
    @Test func killingTheReplicatorLosesAndRepeatsNothing() async throws {
        try await PostgresReplicationTests.withDatabase { url, connection in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("killed-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("replica.db").path
            var process = try ReplicaProcess(url: url, path: path, slot: "killed")
            var configuration = Configuration()
            configuration.observesExternalChanges = true
            // Created by the first run, before the reader opens it.
            try await Self.catchUpFirstCopy(path: path, process: process)
            let reader = try DatabasePool(path: path, configuration: configuration)
            var random = SplitMix64(seed: 36)
            var ids: Set<Int> = []
            var nextID = 1
            var kills = 0
            for index in 0..<600 {
                var statements = PostgresReplicationTests.randomTransaction(&random, ids: &ids, nextID: &nextID)
                if index % 10 == 9 { statements[statements.count - 1] = "ROLLBACK" }
                for statement in statements { try await connection.run(statement) }
                if index % 10 == 9 {
                    ids = Set(try await connection.texts("SELECT id::text FROM player").compactMap { $0[0].flatMap(Int.init) })
                }
                if index % 100 == 50 {
                    // While it applies what came since the last kill.
                    await process.kill()
                    kills += 1
                    process = try ReplicaProcess(url: url, path: path, slot: "killed")
                }
            }
            try await Self.catchUp(reader, slot: "killed", with: connection, process: process)
            let expected = PostgresReplicationTests.normalized(try await connection.texts(PostgresReplicationTests.postgresState))
            let state = try await PostgresReplicationTests.replicaState(reader)
            #expect(kills == 6)
            #expect(expected.count > 20)
            #expect(state == expected, "first difference: \(PostgresReplicationTests.firstDifference(state, expected))")
            // SIGTERM ends it between two transactions, with status 0.
            process.process.signal(SIGTERM)
            let ending = await process.process.waitForExit(timeout: .seconds(30))
            #expect(ending == .exit(0), "\(String(describing: ending))")
        }
    }

    /// Waits until the replica file exists and holds its first copy.
    static func catchUpFirstCopy(path: String, process: ReplicaProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let ending = process.process.ending { throw ReplicationError("sqlite-replica ended (\(ending))") }
            if FileManager.default.fileExists(atPath: path),
                let queue = try? DatabaseQueue(path: path),
                (try? await queue.read({ try Bool.fetchOne($0, sql: "SELECT EXISTS (SELECT 1 FROM team)") })) == true
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ReplicationError("sqlite-replica made no copy in 60 s")
    }

    /// PostgreSQL restarted three times (a fast shutdown ends every
    /// session) under a running replicator and writers: it connects again
    /// and the replica ends equal, each transaction applied once. On a
    /// cluster of its own, not to stop the other tests' server.
    @Test func aRestartOfPostgreSQLLosesAndRepeatsNothing() async throws {
        _ = try PostgresTestCluster.require()
        let folder = "/tmp/reactivesqlite-pg-restart-\(getpid())"
        try #require(PostgresTestCluster.runScript(["start", folder]) == .exit(0))
        defer {
            _ = PostgresTestCluster.runScript(["stop", folder])
            try? FileManager.default.removeItem(atPath: folder)
        }
        let port = try String(contentsOfFile: folder + "/port", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try #require(URL(string: "postgres://postgres@127.0.0.1:\(port)/postgres"))
        var connection = try await PostgresTestCluster.connect(server, database: "postgres")
        for sql in PostgresReplicationTests.schema { try await connection.run(sql) }
        let replica = try PostgresReplicationTests.Replica(url: server.absoluteString, slot: "restarted")
        var random = SplitMix64(seed: 37)
        var ids: Set<Int> = []
        var nextID = 1
        do {
            for round in 0..<4 {
                for _ in 0..<50 {
                    for statement in PostgresReplicationTests.randomTransaction(&random, ids: &ids, nextID: &nextID) {
                        try await connection.run(statement)
                    }
                }
                guard round < 3 else { break }
                try await connection.close()
                #expect(PostgresTestCluster.runScript(["restart", folder]) == .exit(0), "round \(round)")
                connection = try await PostgresTestCluster.connect(server, database: "postgres")
            }
            try await replica.catchUp(with: connection)
            let expected = PostgresReplicationTests.normalized(try await connection.texts(PostgresReplicationTests.postgresState))
            let state = try await PostgresReplicationTests.replicaState(replica.pool)
            #expect(state == expected, "first difference: \(PostgresReplicationTests.firstDifference(state, expected))")
        } catch {
            try? await connection.close()
            throw error
        }
        replica.task.cancel()
        try await connection.close()
    }
}
#endif
