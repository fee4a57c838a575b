import Foundation
import TestSupport

/// A database file for one test, in a temporary directory removed on
/// release, created and changed by the `sqlite3` shell in child processes.
final class WatchedDatabase: Sendable {
    let directory: URL
    let path: String
    /// The shell that writes (`sqlite3`, or `sqlcipher` with the key), and
    /// its first arguments.
    let shell: [String]
    /// What every watch of the database is given after the query: the
    /// passphrase file of an encrypted database.
    let watchArguments: [String]

    /// Creates the file by running `schema` in the `sqlite3` shell, or, with
    /// an encryption key (SQLCipher's passphrase or raw `x'…'` key), in the
    /// `sqlcipher` shell, which encrypts it.
    init(_ schema: String, encryptionKey: String? = nil) async throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("SQLiteWatchTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("db.sqlite").path
        if let encryptionKey {
            let passphraseFile = directory.appendingPathComponent("passphrase").path
            try Data("\(encryptionKey)\n".utf8).write(to: URL(fileURLWithPath: passphraseFile))
            shell = ["/usr/bin/sqlcipher", "-cmd", "PRAGMA key = \"\(encryptionKey)\""]
            watchArguments = ["--passphrase-file", passphraseFile]
        } else {
            shell = [try Executables.sqlite3().path]
            watchArguments = []
        }
        try await execute(schema)
    }

    /// A `player` table with three players: Arthur (id 1, 100 points, red
    /// team), Barbara (id 2, 80, blue), Craig (id 3, 60, red).
    static func players(journalMode: String = "delete") async throws -> WatchedDatabase {
        try await WatchedDatabase("""
            PRAGMA journal_mode = \(journalMode);
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, team TEXT, score INTEGER);
            INSERT INTO player (id, name, team, score) VALUES (1, 'Arthur', 'red', 100);
            INSERT INTO player (id, name, team, score) VALUES (2, 'Barbara', 'blue', 80);
            INSERT INTO player (id, name, team, score) VALUES (3, 'Craig', 'red', 60);
            """)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `sql` in the `sqlite3` shell, in a child process, and waits for
    /// it to exit: another process writes, as a user would.
    func execute(_ sql: String) async throws {
        let shell = try ChildProcess(
            URL(fileURLWithPath: self.shell[0]), self.shell.dropFirst() + ["-bail", "-cmd", ".timeout 10000", path, sql])
        let termination = try await shell.waitForExit()
        guard termination == .exit(0) else {
            throw ChildProcessFailure(description: "\(self.shell[0]) failed (\(termination)): \(shell.errorText)\nSQL: \(sql)")
        }
    }

    /// Starts `sqlite-watch` with the database path, then `arguments` (and
    /// the passphrase file of an encrypted database).
    func watch(_ arguments: [String], environment: [String: String]? = nil) throws -> ChildProcess {
        try ChildProcess(try Executables.sqliteWatch(), [path] + arguments + watchArguments, environment: environment)
    }

    /// Starts `sqlite-watch` with the database path, then `arguments`.
    func watch(_ arguments: String...) throws -> ChildProcess {
        try watch(arguments)
    }
}

extension WatchedDatabase {
    /// The current rows of `sql`, as the tool's JSON renders them (its
    /// first line with `--format json`): the state every client must reach.
    func currentRows(_ sql: String, ordered: Bool, keys: [String]) async throws -> JSONRowReplica {
        let watch = try self.watch([sql, "--format", "json"] + (ordered ? ["--ordered"] : []))
        try await watch.waitForOutputLine()
        let line = String(watch.outputText.prefix { $0 != "\n" })
        watch.signal(SIGTERM)
        try await watch.waitForExit()
        var replica = JSONRowReplica(keys: keys, isOrdered: ordered)
        replica.apply(event: "rows", data: line)
        return replica
    }

    /// Runs `statements` in one `sqlite3` process, each statement its own
    /// transaction (its own commit).
    func commit(_ statements: [String]) async throws {
        try await execute(statements.joined(separator: ";\n") + ";")
    }
}
