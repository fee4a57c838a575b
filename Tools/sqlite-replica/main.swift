#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import SignalForwarding
import ReactiveSQLite
import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
#if PostgreSQL
import Logging
#endif

/// `sqlite-replica`: keeps a SQLite replica of PostgreSQL tables, through
/// logical decoding (see `PostgresReplicator`).
@main
struct SQLiteReplica: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlite-replica",
        abstract: "Keeps a SQLite replica of PostgreSQL tables, one SQLite transaction per PostgreSQL transaction.",
        discussion: """
            Creates the publication (--create-publication) and the logical replication slot \
            (--slot, plugin pgoutput) when they do not exist, copies the published tables \
            (types mapped to SQLite's, primary keys kept), then applies every committed \
            PostgreSQL transaction as one SQLite transaction, with its LSN in the same \
            transaction (table _reactivesqlite_replication). Restarted with the same --slot, \
            it resumes exactly where it stopped: nothing lost, nothing applied twice. \
            PostgreSQL needs wal_level = logical. The replica is read-only for apps: writes \
            go to PostgreSQL. Watch it with sqlite-watch.

            The copy reads what the stream sends: the publication's column list and row \
            filter, no generated column, a partitioned table published via its root with its \
            partitions' rows. A replica identity index other than the primary key becomes a \
            UNIQUE constraint of the replica, which updates and deletes find rows by. The copy \
            streams: the tables are read in batches and written as they come, in one SQLite \
            transaction, so its memory does not grow with them.

            STOPS WITH AN ERROR (status 1) on: a login PostgreSQL refuses, a database that \
            does not exist, a privilege the role lacks, a table to publish that does not exist, \
            no free replication slot, a slot PostgreSQL invalidated (PostgreSQL's message, \
            SQLSTATE, DETAIL and HINT); a slot of this name created in another database; a message of the \
            stream that cannot be decoded (a text that is not UTF-8, from a SQL_ASCII database: \
            the slot, the LSN and the reason are named) or a change made while the publication \
            did not exist (drop the slot: a new one is created and the tables copied); a \
            published table without primary key, or with a DEFERRABLE one; a schema change of \
            a replicated table (a column added, dropped, renamed, dropped and added again, or of \
            another type; another primary key; the table created again) or a table of the \
            publication that the replica does not hold (run again with --resync); a partition \
            of a table published via its root truncated, dropped, detached or rewritten (VACUUM \
            FULL), which pgoutput does not send (run again with --resync); a slot that stands \
            after the replica (another replica uses it, or the replica file is older than the \
            slot: run again with --resync); a replica whose position is after the end of \
            PostgreSQL's WAL (made from another server, or before the server was restored to \
            an earlier point: run again with --resync); a replica that does not match a change. A lost \
            connection, or a server not reachable yet, is retried (100 ms, doubling up to 5 s). \
            A dropped slot is recreated and the tables copied again.

            EXIT STATUS:
              0   SIGINT (Ctrl-C), SIGTERM or SIGHUP (the terminal closed)
              1   PostgreSQL refused (the login, the database, a privilege, wal_level, a table \
            without primary key, a missing publication, a slot of another database), the replica \
            stopped (a schema change, a partition truncated alone, a message it cannot decode, a \
            slot past the replica, a replica past the WAL, a change it does not match), or the \
            replica file cannot be written
              64  invalid command line
            """)

    @Argument(help: "PostgreSQL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (an IPv6 HOST in brackets: [::1]).")
    var url: String

    @Argument(help: "The SQLite replica (created if missing, in WAL mode).")
    var replica: String

    @Option(help: "The logical replication slot: lowercase letters, digits, underscores.")
    var slot: String

    @Option(help: "The publication (default: the slot's name).")
    var publication: String?

    @Option(
        name: .customLong("create-publication"),
        help: "Creates the publication for these tables when it does not exist (TABLE[,TABLE...]).")
    var createPublication: String?

    @Flag(help: "Copies the tables again, even when the replica could resume.")
    var resync = false

    @Flag(help: "Prints nothing but errors.")
    var quiet = false

    func run() async throws {
        #if PostgreSQL
        let tables = createPublication.map { $0.split(separator: ",").map(String.init) } ?? []
        let configuration: PostgresReplicationConfiguration
        do {
            configuration = try PostgresReplicationConfiguration(
                url: url, slot: slot, publication: publication, tables: tables)
        } catch {
            throw ValidationError("\(error)")
        }
        var replicationConfiguration = configuration
        replicationConfiguration.resync = resync
        var logger = Logger(label: "sqlite-replica")
        logger.logLevel = quiet ? .error : .info
        do {
            let pool = try DatabasePool(path: replica)
            let applier = try ReplicaApplier(writer: pool, source: "postgresql:\(slot)")
            let replicator = PostgresReplicator(
                configuration: replicationConfiguration, applier: applier, logger: logger)
            let task = Task { try await replicator.run { if !quiet { note("replicating into \(replica)") } } }
            SignalWatcher.start { task.cancel() }
            try await task.value
        } catch {
            note("error: \(PostgresReplicator.describe(error))")
            throw ExitCode(1)
        }
        #else
        note("error: sqlite-replica was built without the PostgreSQL trait: swift run --traits PostgreSQL sqlite-replica")
        throw ExitCode(1)
        #endif
    }
}

/// Writes a line to standard error.
func note(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Calls `onSignal` on the first SIGINT, SIGTERM or SIGHUP, so that the
/// replication ends between two SQLite transactions; a second one ends the
/// process at once, with status 0 (SQLite's own journal keeps the replica
/// whole, and the next run resumes from its last commit).
enum SignalWatcher {
    static func start(_ onSignal: @escaping @Sendable () -> Void) {
        // `SignalForwarding` calls its closure on one thread, one signal at
        // a time: the count needs no lock.
        nonisolated(unsafe) var signals = 0
        SignalForwarding.start(signals: [SIGINT, SIGTERM, SIGHUP]) { _ in
            signals += 1
            if signals == 1 { onSignal() } else { exit(0) }
        }
    }
}
