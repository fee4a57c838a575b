#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
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

            STOPS WITH AN ERROR (status 1) on: a login PostgreSQL refuses, a database that \
            does not exist, a privilege the role lacks, a table to publish that does not exist, \
            no free replication slot (PostgreSQL's message and SQLSTATE); a published table \
            without primary key; a column added or dropped in PostgreSQL (run again with \
            --resync); a replica that does not match a change. A lost connection, or a server \
            not reachable yet, is retried (100 ms, doubling up to 5 s). A dropped slot is \
            recreated and the tables copied again.

            EXIT STATUS:
              0   SIGINT (Ctrl-C), SIGTERM or SIGHUP (the terminal closed)
              1   PostgreSQL refused (the login, the database, a privilege, wal_level, a table \
            without primary key, a missing publication), the replica stopped (a schema change, \
            a change it does not match), or the replica file cannot be written
              64  invalid command line
            """)

    @Argument(help: "PostgreSQL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
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
///
/// A handler that only writes the signal to a pipe, read by a thread of
/// its own. Not a blocked mask and `sigwait`: the mask set here would hold
/// for this thread only, and the default action on the threads that Swift
/// concurrency started before would kill the process (a test of SIGTERM
/// saw it end by the signal).
enum SignalWatcher {
    /// `nonisolated(unsafe)`: written once by `start`, before the handler
    /// that reads it is installed.
    nonisolated(unsafe) static var writeEnd: Int32 = -1

    static func start(_ onSignal: @escaping @Sendable () -> Void) {
        var ends: [Int32] = [-1, -1]
        // No descriptor left: the signals keep their default action.
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        writeEnd = ends[1]
        readEnd = ends[0]
        var action = sigaction()
        let forward: @convention(c) (Int32) -> Void = { number in
            let savedErrno = errno
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(SignalWatcher.writeEnd, &byte, 1)
            errno = savedErrno
        }
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = forward
        #else
        action.__sigaction_u.__sa_handler = forward
        #endif
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in [SIGINT, SIGTERM, SIGHUP] {
            sigaction(number, &action, nil)
            sigaddset(&unblocked, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        let box = Unmanaged.passRetained(Action(onSignal)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            let action = Unmanaged<Action>.fromOpaque(context!).takeRetainedValue()
            var signals = 0
            while true {
                var byte: UInt8 = 0
                let count = read(SignalWatcher.readEnd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return nil }
                signals += 1
                if signals == 1 { action.body() } else { exit(0) }
            }
        }, box)
    }

    /// `nonisolated(unsafe)`: written once by `start`, before the thread
    /// that reads it is created.
    nonisolated(unsafe) static var readEnd: Int32 = -1

    /// The closure, handed to the thread.
    final class Action: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
