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

    /// Waits until the replica holds every transaction PostgreSQL
    /// committed so far; fails after a minute, or when the replicator
    /// process ended.
    static func catchUp(
        _ reader: DatabasePool, slot: String, with connection: PostgresConnection, process: ReplicaProcess
    ) async throws {
        try await TestReplica.catchUp(reader, source: "postgresql:\(slot)", with: connection) {
            if let ending = process.process.ending { throw ReplicationError("sqlite-replica ended (\(ending))") }
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
                try await PostgresReplicationTests.runRandomTransaction(
                    rolledBack: index % 10 == 9, &random, ids: &ids, nextID: &nextID, on: connection)
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
        let replica = try TestReplica(url: server.absoluteString, slot: "restarted", tables: PostgresReplicationTests.tables)
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

/// `sqlite-replica`'s command line: its help, and its exit statuses (0 on
/// a signal, 1 when PostgreSQL or the replica refuses, 64 for a bad
/// command line), as `sqlite-watch`'s.
@Suite(.enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(3)))
struct ReplicaCommandLineTests {
    @Test func itDocumentsItselfAndExitsWithItsStatuses() async throws {
        let tool = try #require(
            BuiltExecutable.url(named: "sqlite-replica", override: "SQLITE_REPLICA_EXECUTABLE"), "sqlite-replica is built")
        let help = try await SpawnedProcess.run(tool.path, ["--help"])
        #expect(help.termination == .exit(0))
        for text in ["--slot", "--create-publication", "--resync", "EXIT STATUS", "wal_level = logical"] {
            #expect(help.output.contains(text), "--help says \(text)")
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).db").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let usage: [([String], String)] = [
            (["postgres://postgres@127.0.0.1/db", path], "--slot"),
            (["http://example.com/db", path, "--slot", "a"], "not a URL"),
            (["postgres://postgres@127.0.0.1/db", path, "--slot", "Not-A-Slot"], "lowercase letters"),
        ]
        for (arguments, message) in usage {
            let outcome = try await SpawnedProcess.run(tool.path, arguments)
            #expect(outcome.termination == .exit(64), "\(arguments): \(outcome.error)")
            #expect(outcome.error.contains(message), "\(arguments): \(outcome.error)")
        }
        try await PostgresReplicationTests.withDatabase { url, connection in
            try await connection.run("CREATE TABLE loose (a integer, b text)")
            let refused = try await SpawnedProcess.run(tool.path, [url, path, "--slot", "loose_cli", "--create-publication", "loose"])
            #expect(refused.termination == .exit(1), "\(refused.error)")
            #expect(refused.error.contains("loose has no primary key"), "\(refused.error)")
            // What no reconnection cures ends the run with PostgreSQL's
            // message and SQLSTATE, rather than retrying for ever.
            var components = try #require(URLComponents(string: url))
            components.path = "/no_such_database"
            let noDatabase = try #require(components.string)
            components = try #require(URLComponents(string: url))
            components.user = "no_such_role"
            let noRole = try #require(components.string)
            // PostgreSQL's DETAIL too, which says why.
            let (noConnect, role) = try await ReplicaPermanentErrorTests.roleWithoutConnect(url, connection)
            let refusals: [([String], String)] = [
                ([noDatabase, path, "--slot", "refused"], "3D000"),
                ([noRole, path, "--slot", "refused"], "SQLSTATE 28"),
                ([url, path, "--slot", "refused", "--create-publication", "no_such_table"], "42P01"),
                ([noConnect, path, "--slot", "refused"], "(SQLSTATE 42501). DETAIL: User does not have CONNECT privilege."),
            ]
            for (arguments, state) in refusals {
                let outcome = try await SpawnedProcess.run(tool.path, arguments, timeout: .seconds(30))
                #expect(outcome.termination == .exit(1), "\(arguments): \(outcome.error)")
                #expect(outcome.error.contains("PostgreSQL refused") && outcome.error.contains(state),
                        "\(arguments): \(outcome.error)")
            }
            try await ReplicaPermanentErrorTests.dropRole(role, connection)
        }
    }
}
#endif

#if PostgreSQL && Server
/// What the README shows, run as a user runs it: two app servers, each with
/// its `sqlite-replica` (its own slot) and `sqlite-watch --serve` on its
/// replica, and a `psql` UPDATE that shows on the live stream of both.
@Suite(.enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(5)))
struct ReplicaCommandsTests {
    /// The first line of `descriptor` (a child's output) that contains
    /// `text`; throws after a minute or at the end of the output.
    static func line(containing text: String, in descriptor: Int32) throws -> String {
        var output = ""
        let deadline = ContinuousClock.now + .seconds(60)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output += String(decoding: buffer[0..<count], as: UTF8.self)
            if let line = output.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
        }
        throw ReplicationError("no line with \(text) in: \(output)")
    }

    @Test func aPsqlUpdateShowsOnTheLiveStreamOfEveryReplica() async throws {
        let psql = "/usr/lib/postgresql/15/bin/psql"
        try #require(FileManager.default.isExecutableFile(atPath: psql), "psql is installed with PostgreSQL 15")
        let watch = try #require(
            BuiltExecutable.url(named: "sqlite-watch", override: "SQLITE_WATCH_EXECUTABLE"), "sqlite-watch is built")
        try await PostgresReplicationTests.withDatabase { url, connection in
            try await connection.run("INSERT INTO player (id, name, score) SELECT i, 'p' || i, i FROM generate_series(1, 30) i")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("servers-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var replicas: [ReplicaCrashTests.ReplicaProcess] = []
            var watchers: [SpawnedProcess] = []
            var clients: [SSEClient] = []
            defer {
                clients.forEach { $0.disconnect() }
                for process in watchers + replicas.map(\.process) { process.signal(SIGKILL) }
            }
            for server in ["server_a", "server_b"] {
                let path = folder.appendingPathComponent("\(server).db").path
                let replica = try ReplicaCrashTests.ReplicaProcess(url: url, path: path, slot: server)
                replicas.append(replica)
                try await ReplicaCrashTests.catchUpFirstCopy(path: path, process: replica)
                let watcher = try SpawnedProcess(
                    watch.path, [path, "SELECT * FROM player ORDER BY score DESC LIMIT 10", "--ordered", "--serve", "127.0.0.1:0"],
                    standardOutput: .pipe, standardError: .descriptor(2))
                watchers.append(watcher)
                let output = try #require(watcher.outputReader)
                let serving = try Self.line(containing: "serving http", in: output)
                // The rest of its output is read, so that it never blocks on
                // a full pipe.
                SpawnedProcess.readToEnd(output, onChunk: { _ in })
                let port = try #require(serving.components(separatedBy: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) })
                let client = try SSEClient(port: port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
                clients.append(client)
                #expect(await client.wait(until: { $0.replica.rows.count == 10 }) != nil, "\(server): the first rows")
            }
            let outcome = try await SpawnedProcess.run(psql, [url, "-c", "UPDATE player SET score = 1000 WHERE id = 1"])
            #expect(outcome.termination == .exit(0), "psql: \(outcome.error)")
            for (index, client) in clients.enumerated() {
                let stream = await client.wait(until: { $0.replica.rows.first?.contains("\"score\":1000") == true })
                #expect(stream != nil, "replica \(index): \(client.state.value.replica.rows.first ?? "no rows")")
            }
            for process in watchers + replicas.map(\.process) {
                process.signal(SIGTERM)
                #expect(await process.waitForExit(timeout: .seconds(30)) == .exit(0))
            }
        }
    }
}
#endif
