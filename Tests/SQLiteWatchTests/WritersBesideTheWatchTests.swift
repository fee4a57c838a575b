import Foundation
import TestSupport
import Testing

/// A watch does not make the writes of other processes fail: 1 000 updates,
/// each by its own `sqlite3` shell without a busy timeout (like many
/// scripts), one after the other, on a rollback-journal database in each
/// journal mode, while `sqlite-watch` watches the table; then the watch
/// shows the last state.
///
/// A writer without a busy handler fails when, as it commits, a reader
/// holds a shared lock. The watch's reads hold none that a writer could
/// meet (see `Configuration.observesExternalChanges`): they wait for a
/// writer's RESERVED lock to go before they begin, and then read without
/// a lock, validated afterwards (a read that met a commit runs again).
/// Measured on two cores: 35 of 400 updates failed before the watch
/// yielded; 0 to 2 of 1 000 when it took its locks after checking for a
/// writer (a read checked, then descheduled, still held its lock); then
/// about 1 in 21 000, from the reads that still took a real lock: the
/// tool's probe after a writer's commit, the schema read again after a
/// read that met a writer, and the reads of opening. None takes one now
/// (`ExternalChangeTests.observingARollbackJournalFileTakesNoRealSharedLock`
/// counts them). The test runs alone (`.isolated`), one journal mode after
/// the other (`.serialized`), as the measurements did.
@Suite(.isolated, .serialized, .timeLimit(.minutes(5)))
struct WritersBesideTheWatchTests {
    static let updateCount = 1000

    /// Runs the updates in a shell loop: `sh -c LOOP sh COUNT DATABASE
    /// SHELL [ARGUMENT...]`; prints `failures: N`.
    static let loop = """
        count="$1"; db="$2"; shift 2; failures=0; i=1
        while [ "$i" -le "$count" ]; do
            "$@" "$db" "UPDATE item SET n = $i WHERE id = $(( i % 100 + 1 ))" 2>/dev/null || failures=$((failures + 1))
            i=$((i + 1))
        done
        echo "failures: $failures"
        """

    static let schema = """
        CREATE TABLE item (id INTEGER PRIMARY KEY, n INTEGER);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100)
        INSERT INTO item SELECT x, 0 FROM c;
        """

    @Test(arguments: ["delete", "truncate", "persist"])
    func writersWithoutABusyTimeoutCommitWhileWatched(journalMode: String) async throws {
        try await Self.checkWriters(
            beside: try await WatchedDatabase("PRAGMA journal_mode = \(journalMode);\n" + Self.schema))
    }

    #if SQLCipher
    /// The same on a database that SQLCipher encrypts (where every commit
    /// rewrites the first page), written by the `sqlcipher` shell. A raw
    /// key (`x'…'`), which SQLCipher uses as it is: a passphrase would cost
    /// each of the thousands of shells its key derivation.
    @Test(arguments: ["delete", "truncate", "persist"])
    func writersWithoutABusyTimeoutCommitWhileAnEncryptedDatabaseIsWatched(journalMode: String) async throws {
        try await Self.checkWriters(
            beside: try await WatchedDatabase(
                "PRAGMA journal_mode = \(journalMode);\n" + Self.schema,
                encryptionKey: "x'2DD29CA851E7B56E4697B0E1F08507293D761A05CE4D1B628663F411A8086D99'"))
    }
    #endif

    /// Watches the items of `database`, runs the updates with its shell
    /// beside the watch, counts the failures, and checks that the watch
    /// shows the last state.
    static func checkWriters(beside database: WatchedDatabase) async throws {
        let watch = try database.watch("SELECT * FROM item", "--format", "json")
        try await watch.waitForOutput(containing: "{\"rows\":")
        let writers = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", Self.loop, "sh", String(Self.updateCount), database.path] + database.shell)
        #expect(try await writers.waitForExit(timeout: .seconds(240)) == .exit(0))
        let failures = try #require(
            writers.outputText.split(separator: "\n").last.flatMap { Int($0.dropFirst("failures: ".count)) },
            "the loop printed: \(writers.outputText)")
        #expect(failures == 0, "\(failures) of \(Self.updateCount) updates failed while watched")
        // The last state is shown: the first rows with every change printed
        // since applied are the rows a fresh query returns.
        let expected = try await database.currentRows("SELECT * FROM item", ordered: false, keys: ["id"])
        try await watch.waitForOutput { text in
            var replica = JSONRowReplica(keys: ["id"], isOrdered: false)
            for (index, line) in text.split(separator: "\n").enumerated() {
                replica.apply(event: index == 0 ? "rows" : "diff", data: String(line))
            }
            return replica == expected
        }
        watch.signal(SIGTERM)
        #expect(try await watch.waitForExit() == .exit(0))
    }
}
