#if PostgreSQL
import Foundation
import Logging
import PostgresNIO
import ReactiveSQLite
import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import TestSupport
import Testing

/// The PostgreSQL server of the replication tests: the one of
/// `REACTIVESQLITE_POSTGRES_URL` (CI's), or a throw-away cluster that
/// `.ci/postgres` starts for the test process when PostgreSQL 15 is
/// installed. Each test gets a database of its own.
///
/// Without both, the tests are skipped with a message; with
/// `REACTIVESQLITE_POSTGRES_REQUIRED=1` (CI), they fail instead.
enum PostgresTestCluster {
    /// The server's URL (without database), or why there is none.
    static let server: Result<(url: URL, folder: String?), TestSkip> = {
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["REACTIVESQLITE_POSTGRES_URL"], let url = URL(string: text) {
            return .success((url, nil))
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/15/bin/initdb") else {
            return .failure(TestSkip(
                "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin) and REACTIVESQLITE_POSTGRES_URL is not set"))
        }
        let folder = "/tmp/reactivesqlite-pg-tests-\(getpid())"
        // A spawned process, not Foundation's `Process`, whose end on Linux
        // would wait for the server that the script leaves running (see
        // `SpawnedProcess`).
        guard runScript(["start", folder]) == .exit(0),
            let port = try? String(contentsOfFile: folder + "/port", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines),
            let url = URL(string: "postgres://postgres@127.0.0.1:\(port)/postgres")
        else {
            return .failure(TestSkip("could not start PostgreSQL with .ci/postgres in \(folder)"))
        }
        atexit {
            let folder = "/tmp/reactivesqlite-pg-tests-\(getpid())"
            _ = PostgresTestCluster.runScript(["stop", folder])
            try? FileManager.default.removeItem(atPath: folder)
        }
        return .success((url, folder))
    }()

    /// Runs `.ci/postgres` with `arguments`; how it ended (nil after a minute).
    static func runScript(_ arguments: [String]) -> SpawnedProcess.Termination? {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".ci/postgres").path
        let ended = DispatchSemaphore(value: 0)
        let termination = Locked<SpawnedProcess.Termination?>(nil)
        guard (try? SpawnedProcess(
            "/bin/bash", [script] + arguments, standardError: .descriptor(2),
            onExit: { ending in
                termination.value = ending
                ended.signal()
            })) != nil
        else { return nil }
        _ = ended.wait(timeout: .now() + 60)
        return termination.value
    }

    struct TestSkip: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The server, or a recorded skip (an issue when PostgreSQL is required).
    static func require() throws -> URL {
        switch server {
        case .success(let server):
            return server.url
        case .failure(let skip):
            if ProcessInfo.processInfo.environment["REACTIVESQLITE_POSTGRES_REQUIRED"] == "1" {
                Issue.record("PostgreSQL is required: \(skip)")
            }
            throw skip
        }
    }

    /// Whether the tests can run (for `.enabled(if:)`).
    static var isAvailable: Bool {
        if case .success = server { return true }
        return ProcessInfo.processInfo.environment["REACTIVESQLITE_POSTGRES_REQUIRED"] == "1"
    }

    static let logger = Logger(label: "tests")

    /// A fresh database on the server: its URL and a connection to it.
    ///
    /// - Parameter options: What `CREATE DATABASE` adds after the name
    ///   (`ENCODING 'SQL_ASCII' ...`); none by default.
    static func makeDatabase(options: String = "") async throws -> (url: String, connection: PostgresConnection) {
        let server = try require()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try await connect(server, database: "postgres")
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) \(options)"), logger: logger)
        try await admin.close()
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        components.path = "/" + name
        let url = components.url!
        return (url.absoluteString, try await connect(url, database: name))
    }

    static func connect(_ url: URL, database: String) async throws -> PostgresConnection {
        let configuration = PostgresConnection.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres", password: nil,
            database: database, tls: .disable)
        return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
    }
}

/// A statement of a test that PostgreSQL refused, with its message.
struct StatementFailure: Error, CustomStringConvertible {
    var description: String
}

extension PostgresConnection {
    /// Runs SQL (one statement, no parameters).
    func run(_ sql: String) async throws {
        do {
            try await query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestCluster.logger)
        } catch {
            throw StatementFailure(description: "\(PostgresReplicator.describe(error)): \(sql)")
        }
    }

    /// The rows of a query, every column as text (cast in the SQL).
    func texts(_ sql: String) async throws -> [[String?]] {
        var result: [[String?]] = []
        for try await row in try await query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestCluster.logger) {
            result.append(try row.map { try $0.decode(String?.self) })
        }
        return result
    }
}
#endif
