import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TestSupport
import Testing

/// Bad input gets a clear message on standard error and a documented exit
/// status (1: the database, 2: the query, 64: the command line), never a
/// crash.
@Suite(.timeLimit(.minutes(3)))
struct BadInputTests {
    /// Runs `sqlite-watch` and expects it to fail.
    private func expectFailure(
        _ arguments: [String], status: Int32, messages: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let watch = try ChildProcess(try Executables.sqliteWatch(), arguments)
        #expect(try await watch.waitForExit() == .exit(status), sourceLocation: sourceLocation)
        for message in messages {
            #expect(watch.errorText.contains(message), "\(watch.errorText)", sourceLocation: sourceLocation)
        }
        #expect(watch.outputText.isEmpty, sourceLocation: sourceLocation)
        #expect(!watch.errorText.contains("Fatal error"), sourceLocation: sourceLocation)
    }

    @Test func aMissingFileIsNotCreated() async throws {
        let database = try await WatchedDatabase.players()
        let missing = database.directory.appendingPathComponent("missing.sqlite").path
        try await expectFailure(
            [missing, "SELECT 1"], status: 1, messages: ["sqlite-watch: error: no such file: \(missing)"])
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aFileThatIsNotADatabase() async throws {
        let database = try await WatchedDatabase.players()
        let text = database.directory.appendingPathComponent("notes.txt")
        try Data(String(repeating: "Not a database. ", count: 100).utf8).write(to: text)
        try await expectFailure([text.path, "SELECT 1"], status: 1, messages: ["\(text.path) is not a database"])
    }

    @Test func aDirectory() async throws {
        let database = try await WatchedDatabase.players()
        try await expectFailure(
            [database.directory.path, "SELECT 1"], status: 1, messages: ["is a directory, not a database file"])
    }

    @Test func invalidSQLShowsSQLiteMessageAndTheSQL() async throws {
        let database = try await WatchedDatabase.players()
        try await expectFailure(
            [database.path, "SELEC * FROM player"], status: 2,
            messages: [#"invalid SQL: near "SELEC": syntax error"#, "SQL: SELEC * FROM player"])
        try await expectFailure(
            [database.path, "SELECT * FROM missing_table"], status: 2,
            messages: ["invalid SQL: no such table: missing_table", "SQL: SELECT * FROM missing_table"])
        try await expectFailure(
            [database.path, "SELECT 1; SELECT 2"], status: 2, messages: ["more than one statement"])
    }

    @Test(arguments: ["DELETE FROM player", "INSERT INTO player (name) VALUES ('Dan')", "BEGIN", "CREATE TABLE t (a)"])
    func aStatementThatIsNotARead(_ sql: String) async throws {
        let database = try await WatchedDatabase.players()
        try await expectFailure([database.path, sql], status: 2, messages: ["not a read", "SQL: \(sql)"])
        // Nothing ran.
        let watch = try database.watch("SELECT * FROM player", "--format", "json")
        try await watch.waitForOutput(containing: "{\"rows\":")
        watch.signal(SIGINT)
        try await watch.waitForExit()
        #expect(watch.outputText.occurrences(of: "\"id\"") == 3)
    }

    @Test func aKeyThatIsNotAResultColumn() async throws {
        let database = try await WatchedDatabase.players()
        try await expectFailure(
            [database.path, "SELECT id, name FROM player", "--key", "score"], status: 2,
            messages: ["--key score: no such column in the query's result (columns: id, name)"])
    }

    @Test func anInvalidCommandLine() async throws {
        let database = try await WatchedDatabase.players()
        try await expectFailure([database.path], status: 64, messages: ["missing SQL"])
        try await expectFailure(
            [database.path, "SELECT 1", "--count", "0"], status: 64, messages: ["--count must be at least 1"])
        try await expectFailure(
            [database.path, "SELECT 1", "--format", "xml"], status: 64, messages: ["--format"])
    }

    @Test func aFileDeletedWhileWatched() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT * FROM player")
        try await watch.waitForOutput(containing: "(3 rows)")
        try FileManager.default.removeItem(atPath: database.path)
        #expect(try await watch.waitForExit() == .exit(1))
        #expect(watch.errorText.contains("sqlite-watch: error: \(database.path) was deleted while watched"))
    }

    @Test func aFileReplacedWhileWatched() async throws {
        let database = try await WatchedDatabase.players()
        let other = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT * FROM player")
        try await watch.waitForOutput(containing: "(3 rows)")
        #expect(rename(other.path, database.path) == 0)
        #expect(try await watch.waitForExit() == .exit(1))
        #expect(watch.errorText.contains("\(database.path) was replaced by another file while watched"))
    }

    @Test func aQueryThatASchemaChangeBroke() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT * FROM player")
        try await watch.waitForOutput(containing: "(3 rows)")
        try await database.execute("DROP TABLE player")
        #expect(try await watch.waitForExit() == .exit(2))
        #expect(watch.errorText.contains("sqlite-watch: error: the query failed: no such table: player"))
        #expect(watch.errorText.contains("SQL: SELECT * FROM player"))
        #expect(!watch.errorText.contains("Fatal error"))
    }

    @Test func aLockedDatabaseIsWaitedFor() async throws {
        let database = try await WatchedDatabase.players()
        // A writer in another process holds the lock until the test says so.
        let writer = try ChildProcess(try Executables.sqlite3(), [database.path], feedsInput: true)
        writer.send("BEGIN EXCLUSIVE;\nUPDATE player SET score = 1000 WHERE id = 1;\nSELECT 'locked';\n")
        try await writer.waitForOutput(containing: "locked")

        let watch = try database.watch("SELECT * FROM player", "--busy-timeout", "0.1", "--count", "1")
        try await watch.waitForError(containing: "the database is locked by another connection or process")
        #expect(watch.outputText.isEmpty)

        writer.send("COMMIT;\n.quit\n")
        writer.closeInput()
        #expect(try await writer.waitForExit() == .exit(0))
        try await watch.waitForOutput(containing: "(3 rows)")
        #expect(watch.outputText.contains("|  1 | Arthur  | red  |  1000 |"))
        try await database.execute("UPDATE player SET score = 1001 WHERE id = 1")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.errorText.contains("the database is no longer locked"))
    }

    /// The lock outlasts the busy timeout while the tool watches: the
    /// library's external change detection waits for it; the change shows
    /// once it is released.
    @Test func aLockTakenWhileWatchingDelaysChangesWithoutLosingThem() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT id, score FROM player WHERE id = 1", "--busy-timeout", "0.1", "--count", "2")
        try await watch.waitForOutput(containing: "(1 row)")
        let writer = try ChildProcess(try Executables.sqlite3(), [database.path], feedsInput: true)
        // The shell waits for the watcher's reads to end before it takes
        // the lock (without a timeout, BEGIN could fail while the tool
        // reads, and the UPDATE commit on its own at once).
        writer.send(".timeout 5000\nBEGIN EXCLUSIVE;\nUPDATE player SET score = 101 WHERE id = 1;\nSELECT 'locked';\n")
        try await writer.waitForOutput(containing: "locked")
        // Longer than the busy timeout, so that reads meet the lock. The
        // outcome is the same whatever this lasts: no change is lost.
        try await Task.sleep(for: .milliseconds(500))
        #expect(!watch.outputText.contains("change 1"))
        writer.send("COMMIT;\n.quit\n")
        writer.closeInput()
        #expect(try await writer.waitForExit() == .exit(0))
        try await watch.waitForOutput(containing: "100 → 101")
        try await database.execute("UPDATE player SET score = 102 WHERE id = 1")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.contains("101 → 102"))
    }

    /// Copies an executable with `cp`, in a process of its own.
    ///
    /// `FileManager.copyItem` opens the copy without `O_CLOEXEC`: a child
    /// that another test spawns meanwhile inherits the descriptor open for
    /// writing, and the kernel refuses to run the copy while any process
    /// holds one (`ETXTBSY`, "Text file busy", seen on a fresh-clone run of
    /// the release tests). `O_CLOEXEC` was not enough: a child forked while
    /// the 100 MB copy was written holds the descriptor until it execs its
    /// program, which a loaded machine delays (seen once more in the
    /// parallel debug run). Written by `cp`, the copy's descriptor never
    /// exists in this process, and `cp` has exited before the copy runs.
    static func copyExecutable(atPath source: String, toPath destination: String) async throws {
        let outcome = try await SpawnedProcess.run("/bin/cp", [source, destination])
        guard outcome.termination == .exit(0) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: outcome.error])
        }
    }

    /// A WAL database in a folder the user cannot write: without its
    /// `-shm` and `-wal` files SQLite cannot read it (`SQLITE_READONLY`),
    /// and the message says why and what to do, watching or serving; while
    /// a writer has it open (the files exist), it is watched. The tool runs
    /// as `nobody` (`setpriv`, which runs it in its own process), from a
    /// copy that user may run (root writes anywhere).
    @Test(.enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
        "needs root, to run the tool as another user"))
    func aWALDatabaseInAFolderTheUserCannotWrite() async throws {
        let database = try await WatchedDatabase.players(journalMode: "wal")
        let tool = database.directory.appendingPathComponent("sqlite-watch").path
        try await Self.copyExecutable(atPath: try Executables.sqliteWatch().path, toPath: tool)
        func watchAsNobody(_ arguments: [String]) throws -> ChildProcess {
            try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/setpriv"),
                ["--reuid=65534", "--regid=65534", "--clear-groups", "--", tool, database.path, "SELECT * FROM player",
                 "--format", "json"] + arguments)
        }
        #expect(!FileManager.default.fileExists(atPath: database.path + "-shm"))
        var modes: [[String]] = [[]]
        #if Server
        modes.append(["--serve", "127.0.0.1:0"])
        #endif
        for arguments in modes {
            let watch = try watchAsNobody(arguments)
            #expect(try await watch.waitForExit() == .exit(1))
            #expect(watch.errorText.contains("in WAL mode, in a folder this user cannot write"), "\(watch.errorText)")
            #expect(watch.errorText.contains("attempt to write a readonly database"))
        }

        // A writer keeps the database open: its -shm and -wal exist.
        let writer = try ChildProcess(
            URL(fileURLWithPath: database.shell[0]), database.shell.dropFirst() + [database.path], feedsInput: true)
        writer.send("PRAGMA journal_mode;\nSELECT 'open';\n")
        try await writer.waitForOutput(containing: "open")
        #expect(FileManager.default.fileExists(atPath: database.path + "-shm"))
        let watch = try watchAsNobody([])
        try await watch.waitForOutput(containing: "Arthur")
        writer.send("UPDATE player SET score = 101 WHERE id = 1;\n")
        try await watch.waitForOutput(containing: "\"score\":101")
        watch.signal(SIGTERM)
        #expect(try await watch.waitForExit() == .exit(0))
        writer.send(".quit\n")
        _ = try await writer.waitForExit()
    }
}
