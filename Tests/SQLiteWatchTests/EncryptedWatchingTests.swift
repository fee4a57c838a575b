import Foundation
import Testing

/// `sqlite-watch DATABASE SQL --passphrase-file PATH` on a database that the
/// `sqlcipher` shell encrypts and changes (with the `SQLCipher` trait), and
/// the clear error without the trait.
@Suite(.timeLimit(.minutes(3)))
struct EncryptedWatchingTests {
    /// A temporary directory with a passphrase file (its first line is the
    /// passphrase) and a database file.
    final class Files: Sendable {
        let directory: URL
        let path: String
        let passphraseFile: String

        init(passphrase: String) throws {
            directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("EncryptedWatchingTests-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("db.sqlite").path
            passphraseFile = directory.appendingPathComponent("passphrase").path
            try Data("\(passphrase)\n".utf8).write(to: URL(fileURLWithPath: passphraseFile))
        }

        deinit {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static let playersSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER);
        INSERT INTO player (id, name, score) VALUES (1, 'Arthur', 100);
        """

    #if SQLCipher
    /// Runs `sql` in the `sqlcipher` shell, in a child process, after
    /// `PRAGMA key` (the test's shell may show the passphrase in its
    /// arguments; sqlite-watch never does).
    static func sqlcipher(_ path: String, passphrase: String, _ sql: String) async throws {
        let shell = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/sqlcipher"),
            ["-bail", "-cmd", "PRAGMA key = '\(passphrase)'", "-cmd", ".timeout 10000", path, sql])
        let termination = try await shell.waitForExit()
        guard termination == .exit(0), shell.errorText.isEmpty else {
            throw ChildProcessFailure(description: "sqlcipher failed (\(termination)): \(shell.errorText)\nSQL: \(sql)")
        }
    }

    @Test(arguments: ["delete", "wal"])
    func aChangeMadeByTheSQLCipherShellShows(journalMode: String) async throws {
        let files = try Files(passphrase: "s3cret passphrase")
        try await Self.sqlcipher(
            files.path, passphrase: "s3cret passphrase", "PRAGMA journal_mode = \(journalMode);\n" + Self.playersSQL)
        let watch = try ChildProcess(
            try Executables.sqliteWatch(),
            [files.path, "SELECT * FROM player", "--format", "json", "--count", "1",
             "--passphrase-file", files.passphraseFile])
        #expect(!watch.commandLine.contains("s3cret"))
        try await watch.waitForOutput(containing: "{\"rows\":")
        try await Self.sqlcipher(
            files.path, passphrase: "s3cret passphrase",
            // One transaction: one change (two commits may show as two).
            "BEGIN; INSERT INTO player (id, name, score) VALUES (2, 'Barbara', 80); "
                + "UPDATE player SET score = 120 WHERE id = 1; COMMIT;")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.lines == [
            #"{"rows":[{"id":1,"name":"Arthur","score":100}]}"#,
            #"{"inserted":[{"id":2,"name":"Barbara","score":80}],"updated":[{"id":1,"name":"Arthur","score":120}],"previous":[{"score":100}],"deleted":[]}"#,
        ])
    }

    @Test func aWrongPassphraseFailsAtOnce() async throws {
        let files = try Files(passphrase: "wrong")
        try await Self.sqlcipher(files.path, passphrase: "right", Self.playersSQL)
        let watch = try ChildProcess(
            try Executables.sqliteWatch(), [files.path, "SELECT * FROM player", "--passphrase-file", files.passphraseFile])
        #expect(try await watch.waitForExit() == .exit(1))
        #expect(watch.errorText.contains("cannot be read with this passphrase"), "\(watch.errorText)")
        #expect(watch.errorText.contains("SQLITE_NOTADB"))
        #expect(watch.outputText.isEmpty)
    }

    @Test func anEncryptedFileWithoutPassphraseIsNotADatabase() async throws {
        let files = try Files(passphrase: "right")
        try await Self.sqlcipher(files.path, passphrase: "right", Self.playersSQL)
        let watch = try ChildProcess(try Executables.sqliteWatch(), [files.path, "SELECT * FROM player"])
        #expect(try await watch.waitForExit() == .exit(1))
        #expect(watch.errorText.contains("is not a database"), "\(watch.errorText)")
    }
    #else
    @Test func aPassphraseNeedsTheSQLCipherTrait() async throws {
        let files = try Files(passphrase: "secret")
        let database = try await WatchedDatabase.players()
        let watch = try ChildProcess(
            try Executables.sqliteWatch(),
            [database.path, "SELECT * FROM player", "--passphrase-file", files.passphraseFile])
        #expect(try await watch.waitForExit() == .exit(1))
        #expect(watch.errorText.contains("needs SQLCipher"), "\(watch.errorText)")
        #expect(watch.outputText.isEmpty)
    }
    #endif

    @Test func anUnreadablePassphraseFileIsAUsageError() async throws {
        let files = try Files(passphrase: "")
        let database = try await WatchedDatabase.players()
        for (file, reason) in [(files.passphraseFile, "its first line is empty"), (files.path, "")] {
            let watch = try ChildProcess(
                try Executables.sqliteWatch(), [database.path, "SELECT * FROM player", "--passphrase-file", file])
            #expect(try await watch.waitForExit() == .exit(64))
            #expect(watch.errorText.contains("cannot read the passphrase file \(file): \(reason)"), "\(watch.errorText)")
        }
        let demo = try ChildProcess(try Executables.sqliteWatch(), ["--passphrase-file", files.passphraseFile])
        #expect(try await demo.waitForExit() == .exit(64))
        #expect(demo.errorText.contains("--passphrase-file needs a DATABASE"), "\(demo.errorText)")
    }
}
