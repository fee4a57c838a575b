#if PostgreSQL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import ReactiveSQLite
import ReactiveSQLiteReplication

/// Where a `PostgresReplicator` reads, and what.
public struct PostgresReplicationConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String?
    /// The logical replication slot (created when missing).
    public var slot: String
    /// The publication the slot decodes (created for `tables` when missing).
    public var publication: String
    /// The tables of the publication to create, `schema.table` or `table`;
    /// empty: the publication must exist.
    public var tables: [String]
    /// How long the replicator waits before it asks PostgreSQL again when
    /// nothing was committed. Default 5 ms.
    public var pollInterval: Duration = .milliseconds(5)
    /// How long a position that moved with no change of the replica's
    /// tables waits before it is stored in the replica and the slot: the
    /// stream's idle polls then write nothing. `waitUntilReplicated` on
    /// such a position (a write to a table the replica does not hold)
    /// returns after up to this long.
    public var quietAdvanceInterval: Duration = .milliseconds(100)
    /// Copy the tables again, even when the replica could resume.
    public var resync = false

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; an IPv6
    /// address is written in brackets (`postgres://USER@[::1]:5432/DATABASE`),
    /// and `host` is the address without them.
    ///
    /// - Throws: A `ReplicationError` naming what is wrong in the URL.
    public init(url: String, slot: String, publication: String? = nil, tables: [String] = []) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
            var host = components.host, !host.isEmpty, let username = components.user, !username.isEmpty
        else {
            throw ReplicationError("\(url): not a URL postgres://USER@HOST:PORT/DATABASE")
        }
        // URLComponents keeps the brackets of an IPv6 address on Linux,
        // not on Darwin: no resolver knows `[::1]`.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ReplicationError("\(url): not a URL postgres://USER@HOST:PORT/DATABASE") }
        self.host = host
        port = components.port ?? 5432
        self.username = username
        password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? nil : path
        guard Self.isValidName(slot) else {
            throw ReplicationError("\(slot): a slot name has lowercase letters, digits and underscores only")
        }
        self.slot = slot
        self.publication = publication ?? slot
        self.tables = tables
    }

    /// Whether a name is a valid replication slot name (PostgreSQL's rule).
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 63
            && name.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
    }
}

/// Follows PostgreSQL's logical decoding of a publication into a SQLite
/// replica: copies the tables once, then applies each committed
/// PostgreSQL transaction as one SQLite transaction (`ReplicaApplier`).
///
/// How it reads:
/// - **Slot.** `pg_create_logical_replication_slot` with the built-in
///   `pgoutput` plugin, protocol version 1. The replicator uses an ordinary
///   connection (postgres-nio has no replication connection), so the slot
///   exports no snapshot.
/// - **Initial copy, exact.** The slot is created first, then the tables
///   are read in one `REPEATABLE READ` transaction, whose snapshot
///   (`pg_current_snapshot()`) is stored with the copy. Every transaction
///   that committed after the slot's consistent point comes in the
///   stream; those the snapshot already shows (their xid is visible in
///   it) are skipped. They all commit before any transaction the snapshot
///   does not show, so the snapshot is dropped at the first one applied.
///   The copy's position is the slot's, or the one the replica held when
///   later (a resync): the replica's position never goes back, and a
///   waiter of `ReplicaApplier.waitUntilReplicated` never returns before
///   the replica holds its transaction (see `copy(_:)`).
/// - **The copy streams**: each table is read through a cursor of the
///   snapshot in batches, each inserted as it comes into the one SQLite
///   transaction that replaces the tables; at most two batches are held
///   at once, whatever the size of the tables.
/// - **The copy reads what the stream sends**: the publication's column
///   list and row filter (PostgreSQL 15), no generated column (pgoutput
///   sends none before PostgreSQL 18), a partitioned table published
///   through its root with the rows of its partitions, and each value
///   through its type's output function, as pgoutput writes it (`::text`
///   differs for `inet`, `char(n)`, `boolean`). A replica identity index
///   other than the primary key (`REPLICA IDENTITY USING INDEX`) becomes
///   a `UNIQUE` constraint of the replica's table, by which updates and
///   deletes find their rows.
/// - **The copy is described** with the replica's position
///   (`ReplicaApplier.sourceState()`): each table's schema and OID, its
///   columns' numbers, types and type modifiers. The stream's tables are
///   matched by schema and name, and checked against it.
/// - **Stream.** `pg_logical_slot_peek_binary_changes` up to
///   `pg_current_wal_flush_lsn()` (logical decoding reads no WAL that is
///   not flushed: with asynchronous commits, the WAL written goes
///   further), then, once SQLite committed, the slot is moved with
///   `pg_replication_slot_advance`: a crash between the two applies
///   nothing twice (positions at or before the stored one are skipped)
///   and loses nothing (the slot still holds what SQLite lacks). When
///   nothing came, it asks again after `pollInterval` (5 ms): the latency
///   of a commit is the interval, plus one decoding, plus the SQLite
///   commit. Polling rather than the streaming protocol, because the
///   latter needs a replication connection.
/// - **Reconnects** when the connection fails (`pg_terminate_backend`, a
///   restart of PostgreSQL, a server not reachable yet): after 100 ms,
///   then, while attempts fail in a row (a session that did not read the
///   stream is a failed attempt), after twice as long each time, up to
///   5 s. A query never waits on a closed connection (see
///   `GuardedConnection`).
/// - Every access to the replica is asynchronous: no thread of Swift
///   concurrency waits for the SQLite writer.
///
/// What stops it, with a `ReplicationError` that says why:
/// - PostgreSQL refusing what no reconnection changes: the login (an
///   unknown role, a wrong password), a database that does not exist, a
///   privilege the role lacks, a published table that does not exist, no
///   free replication slot, a slot that PostgreSQL invalidated (with its
///   message, SQLSTATE, DETAIL and HINT: see `refusesForGood(_:)` and
///   `describe(_:)`);
/// - a slot of its name created in another database;
/// - a message of the stream that cannot be decoded (with the slot, the
///   message's LSN and what could not be read: a text that is not UTF-8,
///   from a `SQL_ASCII` database), which the slot would send again after
///   any reconnection; a change made while the publication did not exist,
///   which the slot can never decode (drop the slot);
/// - at the copy, a table that a replica cannot follow: without primary
///   key, with a `DEFERRABLE` primary key (the replica checks its key at
///   each row), with a primary key column that the stream leaves out;
///   two published tables of the same name in two schemas;
/// - a schema change that the replica cannot follow, at the first change
///   of the table after it (run again with `resync`): a column added,
///   dropped, renamed, or dropped and added again under its name; a
///   column's type (or type modifier, but for `varchar`) changed; another
///   primary key; the table dropped and created again; a table of the
///   publication that the replica does not hold (one of the same name in
///   another schema included);
/// - a partition of a table published through its root truncated,
///   dropped, detached or rewritten, which pgoutput does not send (see
///   `PostgresSourceState.checkPartitions`; run again with `resync`);
/// - a slot that stands after the replica's position (another replica
///   uses it, or the replica's file is older than the slot): PostgreSQL no
///   longer holds what the replica lacks (run again with `resync`);
/// - a replica whose position is after the end of PostgreSQL's WAL (made
///   from another server, or before the server was restored to an
///   earlier point): the stream would skip every transaction up to it
///   (run again with `resync`);
/// - a change the replica does not match.
///
/// After such a stop, a resync copies the tables again; the transactions
/// of the stream that the new copy shows are skipped, those that stopped
/// the replica included.
///
/// A dropped slot is recreated, and the tables copied again. A replica
/// made by an earlier version, which does not describe its tables, is
/// copied again.
public final class PostgresReplicator: Sendable {
    public let configuration: PostgresReplicationConfiguration
    public let applier: ReplicaApplier
    let logger: Logger
    /// The rows of the initial copy held in memory.
    let copyMeter = CopyMeter()

    /// Creates a replicator into the replica of `applier`.
    public init(configuration: PostgresReplicationConfiguration, applier: ReplicaApplier, logger: Logger) {
        self.configuration = configuration
        self.applier = applier
        self.logger = logger
    }

    /// Replicates until the task is cancelled, or until an error that a
    /// reconnection cannot cure.
    ///
    /// A failure that connecting again may cure (a lost connection, a
    /// server that restarts) is retried: after 100 ms, then twice as long
    /// each time, up to 5 s; the wait starts again from 100 ms once a
    /// session has read the stream. Every other failure stops the
    /// replicator with a `ReplicationError` (or the replica's
    /// `DatabaseError`): PostgreSQL refusing for good (see
    /// `refusesForGood(_:)`), a message or a value that cannot be decoded,
    /// a replica that cannot follow the stream.
    ///
    /// - Parameter onReady: Called once the replica holds a copy, before
    ///   the stream is followed.
    public func run(onReady: @Sendable () -> Void = {}) async throws {
        var backoff = Duration.milliseconds(100)
        var isReady = false
        var resync = configuration.resync
        while !Task.isCancelled {
            // Whether this session read the stream at least once: a
            // failure that comes at once, each time, waits longer and
            // longer rather than connecting again ten times a second.
            var hasPolled = false
            do {
                let connection = try await connect()
                defer { Task { try? await connection.connection.close() } }
                try await prepare(connection, resync: resync)
                resync = false
                if !isReady {
                    isReady = true
                    onReady()
                }
                try await follow(connection, hasPolled: &hasPolled)
            } catch let error as ReplicationError {
                throw error
            } catch let error as DatabaseError {
                // The replica's own error (a full disk, a locked file):
                // no reconnection cures it.
                throw error
            } catch is CancellationError {
                return
            } catch let error as PSQLError where Self.refusesForGood(error) {
                throw ReplicationError("PostgreSQL refused: \(Self.describe(error))")
            } catch let error as PostgresDecodingError {
                // A value of PostgreSQL's answer that postgres-nio cannot
                // read: the same answer comes after a reconnection.
                throw ReplicationError("a value that PostgreSQL sent cannot be read: \(String(reflecting: error))")
            } catch let error as DecodingError {
                // The publication's column list, as JSON.
                throw ReplicationError("a description that PostgreSQL sent cannot be read: \(error)")
            } catch {
                // A session that read the stream starts the backoff again:
                // it is the failed attempts in a row that wait longer and
                // longer.
                if hasPolled { backoff = .milliseconds(100) }
                if Task.isCancelled { return }
                logger.warning("PostgreSQL: \(Self.sentence(Self.describe(error))) Connecting again in \(backoff).")
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    /// Whether PostgreSQL refused in a way that connecting again cannot
    /// cure:
    /// - a login it rejects (SQLSTATE class 28: an unknown role, a wrong
    ///   password, no `pg_hba.conf` entry), or that postgres-nio cannot
    ///   make (a password needed and not given, an authentication method
    ///   it does not support);
    /// - a database that does not exist (3D000);
    /// - SQLSTATE class 42 (a privilege the role lacks, 42501; a table to
    ///   publish that does not exist, 42P01; a function that an older
    ///   server lacks, 42883), but for 42704, an object that does not
    ///   exist (a slot dropped under the stream: it is created again; a
    ///   dropped publication is told apart in `follow`), and 42710, an
    ///   object that exists already (a slot or a publication that another
    ///   replicator created at the same moment);
    /// - no replication slot left (53400, `max_replication_slots`);
    /// - an object not in the state it must be (55000: a slot created in
    ///   another database, a slot that PostgreSQL invalidated because it
    ///   held too much WAL, `wal_level` below logical);
    /// - a feature that the server does not support (0A000).
    ///
    /// Everything else is retried: a lost connection, a server that shuts
    /// down or starts up (class 57), a slot that another process holds for
    /// a moment (55006), a lack of resources (53100 disk full, 53200 out
    /// of memory, 53300 too many connections).
    static func refusesForGood(_ error: PSQLError) -> Bool {
        if error.code == .authMechanismRequiresPassword || error.code == .unsupportedAuthMechanism {
            return true
        }
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        if state == "42704" || state == "42710" { return false }
        return state.hasPrefix("28") || state.hasPrefix("42")
            || ["3D000", "53400", "55000", "0A000"].contains(state)
    }

    /// The text of an error: PostgreSQL's message when there is one, with
    /// its SQLSTATE, then its DETAIL and HINT when it sent them, which say
    /// what a refusal is about and what to do (a role that lacks a
    /// privilege, a slot that PostgreSQL invalidated):
    ///
    /// ```
    /// permission denied for database "app" (SQLSTATE 42501). DETAIL: User does not have CONNECT privilege.
    /// ```
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        guard let message = error.serverInfo?[.message] else { return "\(error.code)" }
        var text = error.serverInfo?[.sqlState].map { "\(message) (SQLSTATE \($0))" } ?? message
        let fields: [(label: String, field: PSQLError.ServerInfo.Field)] = [("DETAIL", .detail), ("HINT", .hint)]
        for (label, field) in fields {
            guard let value = error.serverInfo?[field], !value.isEmpty else { continue }
            text = sentence(text) + " \(label): \(value)"
        }
        return text
    }

    /// `text` ending as a sentence: with a full stop, unless it ends with
    /// one already (PostgreSQL's DETAIL and HINT do, its message does not).
    static func sentence(_ text: String) -> String {
        guard let last = text.last, !".!?".contains(last) else { return text }
        return text + "."
    }

    // MARK: - Connection

    private func connect() async throws -> GuardedConnection {
        let configuration = PostgresConnection.Configuration(
            host: self.configuration.host, port: self.configuration.port, username: self.configuration.username,
            password: self.configuration.password, database: self.configuration.database, tls: .disable)
        let connection = GuardedConnection(
            try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger))
        // Text representations that the copy and the stream share.
        // The application name finds the replicator in pg_stat_activity
        // (the slot's name is letters, digits and underscores only).
        let settings = [
            "TimeZone = 'UTC'", "DateStyle = 'ISO, YMD'", "bytea_output = 'hex'", "extra_float_digits = 3",
            "application_name = 'reactivesqlite-replica:\(self.configuration.slot)'",
        ]
        do {
            for setting in settings {
                try await query(connection, PostgresQuery(unsafeSQL: "SET \(setting)"))
            }
        } catch {
            // postgres-nio wants every connection closed before it goes.
            try? await connection.connection.close()
            throw error
        }
        return connection
    }

    @discardableResult
    private func query(_ connection: GuardedConnection, _ query: PostgresQuery) async throws -> PostgresRowSequence {
        try await connection.query(query, logger: logger)
    }

    private func strings(_ connection: GuardedConnection, _ sql: String, _ binds: [String?] = []) async throws
        -> [[String?]]
    {
        var bindings = PostgresBindings()
        for bind in binds { bindings.append(bind) }
        let rows = try await query(connection, PostgresQuery(unsafeSQL: sql, binds: bindings))
        var result: [[String?]] = []
        for try await row in rows {
            result.append(try row.map { cell in try cell.decode(String?.self) })
        }
        return result
    }

    // MARK: - Setup and copy

    private func prepare(_ connection: GuardedConnection, resync: Bool) async throws {
        let walLevel = try await strings(connection, "SHOW wal_level").first?.first ?? nil
        guard walLevel == "logical" else {
            throw ReplicationError("PostgreSQL runs with wal_level = \(walLevel ?? "?"): logical decoding needs wal_level = logical")
        }
        let publication = configuration.publication
        let publications = try await strings(connection, "SELECT 1 FROM pg_publication WHERE pubname = $1", [publication])
        if publications.isEmpty {
            guard !configuration.tables.isEmpty else {
                throw ReplicationError("the publication \(publication) does not exist: give the tables to publish")
            }
            let tables = configuration.tables.map(Self.quotedName).joined(separator: ", ")
            try await query(
                connection, PostgresQuery(unsafeSQL: "CREATE PUBLICATION \(Self.quoteIdentifier(publication)) FOR TABLE \(tables)"))
            logger.info("created the publication \(publication) for \(configuration.tables.joined(separator: ", "))")
        }
        let slots = try await strings(connection, """
            SELECT plugin, confirmed_flush_lsn::text, database::text, (database = current_database())::text,
                   pg_current_wal_flush_lsn()::text
            FROM pg_replication_slots WHERE slot_name = $1
            """, [configuration.slot])
        let position = try await applier.position()
        // A logical slot decodes the database it was created in (a
        // physical slot has none: its plugin is checked below).
        if let slot = slots.first, let database = slot[2], slot[3] != "true" {
            throw ReplicationError("""
                the slot \(configuration.slot) belongs to another database (\(database)): a logical slot decodes \
                the database it was created in. Give this replica a slot of its own.
                """)
        }
        if slots.isEmpty {
            if position != nil {
                logger.warning("the slot \(configuration.slot) is gone (dropped?): the tables are copied again")
            }
            try await query(
                connection, PostgresQuery(
                    unsafeSQL: "SELECT pg_create_logical_replication_slot($1, 'pgoutput')",
                    binds: { var b = PostgresBindings(); b.append(configuration.slot); return b }()))
            try await copy(connection)
        } else if slots[0].first != "pgoutput" {
            throw ReplicationError("the slot \(configuration.slot) decodes with \(slots[0].first.flatMap { $0 } ?? "?"), not pgoutput")
        } else if position == nil || resync {
            try await copy(connection)
        } else if PostgresSourceState(text: try await applier.sourceState()) == nil {
            logger.warning("the replica does not describe its tables (an earlier version made it): the tables are copied again")
            try await copy(connection)
        } else if let position, let slotPosition = slots[0][1].flatMap(ReplicationPosition.init(lsn:)) {
            try checkSlot(at: slotPosition, replicaAt: position)
            if let flushed = slots[0][4].flatMap(ReplicationPosition.init(lsn:)) {
                try checkHistory(replicaAt: position, flushed: flushed)
            }
        }
    }

    /// Throws when the replica's position is after the end of PostgreSQL's
    /// WAL: the replica was made from another history of the source
    /// (another server, or this one before it was restored to an earlier
    /// point), whose positions say nothing of this one's transactions.
    /// Followed from there, the stream would skip every transaction up to
    /// the replica's position as if applied. (The replicator stores only
    /// positions up to the WAL's end, which never goes back.)
    private func checkHistory(replicaAt position: ReplicationPosition, flushed: ReplicationPosition) throws {
        guard position > flushed else { return }
        throw ReplicationError("""
            this replica stands at \(position), after the end of PostgreSQL's WAL (\(flushed)): it was made from \
            another server, or before this server was restored to an earlier point, and holds rows that this \
            server's transactions do not describe. Run again with --resync to copy the tables again.
            """)
    }

    /// Throws when the slot stands after the replica's position: it no
    /// longer holds the transactions in between, which the replica lacks.
    /// (The replicator moves the slot only to positions that the replica
    /// holds.)
    private func checkSlot(at slotPosition: ReplicationPosition, replicaAt position: ReplicationPosition) throws {
        guard slotPosition > position else { return }
        throw ReplicationError("""
            the slot \(configuration.slot) stands at \(slotPosition), after this replica's position \(position): \
            PostgreSQL no longer holds the transactions in between (another replica uses the same slot, or \
            this replica's file is older than the slot: restored from a backup, or copied). Give each replica \
            a slot of its own, and run again with --resync to copy the tables again.
            """)
    }

    /// A published table, and how the copy reads its rows.
    struct CopiedTable {
        var table: PublishedTable
        /// The publication's row filter (`WHERE`), nil when none.
        var rowFilter: String?
        /// Whether the table is partitioned (published through its root),
        /// whose rows are its partitions'.
        var isPartitioned: Bool
    }

    /// The published tables, as PostgreSQL's catalog describes them, and
    /// as pgoutput sends them: the columns of the publication's column list
    /// (PostgreSQL 15), generated columns left out (pgoutput sends none
    /// before PostgreSQL 18), the row filter (15).
    private func publishedTables(_ connection: GuardedConnection) async throws -> [CopiedTable] {
        let version = Int(try await strings(connection, "SHOW server_version_num").first?.first.flatMap { $0 } ?? "") ?? 0
        // What the publication publishes of each table: the column list
        // and row filter (15), stored generated columns (18).
        let columnListSQL = version >= 150_000 ? "array_to_json(t.attnames)::text" : "NULL"
        let rowFilterSQL = version >= 150_000 ? "t.rowfilter" : "NULL"
        let hasColumnListSQL = version >= 150_000 ? """
            EXISTS (SELECT 1 FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid
                    WHERE p.pubname = t.pubname AND r.prrelid = c.oid AND r.prattrs IS NOT NULL)::text
            """ : "'false'"
        let publishesGeneratedSQL = version >= 180_000
            ? "(SELECT p.pubgencols = 's' FROM pg_publication p WHERE p.pubname = t.pubname)::text" : "'false'"
        let rows = try await strings(connection, """
            SELECT t.schemaname, t.tablename, c.oid::text, c.relkind::text, c.relreplident::text,
                   \(columnListSQL), \(rowFilterSQL), \(hasColumnListSQL), \(publishesGeneratedSQL)
            FROM pg_publication_tables t
            JOIN pg_namespace n ON n.nspname = t.schemaname
            JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.tablename
            WHERE t.pubname = $1 ORDER BY 1, 2
            """, [configuration.publication])
        var tables: [CopiedTable] = []
        // SQLite compares table names without case (ASCII).
        var qualifiedNames: [String: String] = [:]
        for row in rows {
            guard let schema = row[0], let name = row[1], let oid = row[2].flatMap({ UInt32($0) }) else { continue }
            let qualifiedName = "\(schema).\(name)"
            if let other = qualifiedNames.updateValue(qualifiedName, forKey: name.lowercased()) {
                throw ReplicationError("""
                    \(other) and \(qualifiedName) are both published: a replica names its tables without \
                    their schema, so they would be one table. Publish one of them.
                    """)
            }
            let listed = try row[5].map { try JSONDecoder().decode([String].self, from: Data($0.utf8)) }
            let hasColumnList = row[7] == "true"
            let publishesGenerated = row[8] == "true"
            let columnRows = try await strings(connection, """
                SELECT a.attname, a.atttypid::text, a.atttypmod::text, a.attnum::text, a.attgenerated::text
                FROM pg_attribute a WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY a.attnum
                """, [String(oid)])
            let columns = columnRows.compactMap { column -> PublishedTable.Column? in
                guard let columnName = column[0], listed?.contains(columnName) ?? true else { return nil }
                // pgoutput sends no generated column before PostgreSQL 18,
                // then stored ones when the publication says so.
                switch column[4] ?? "" {
                case "": break
                case "s" where version >= 180_000 && (hasColumnList || publishesGenerated): break
                default: return nil
                }
                return PublishedTable.Column(
                    name: columnName, typeOID: column[1].flatMap { UInt32($0) } ?? 0,
                    typeModifier: column[2].flatMap { Int32($0) } ?? -1, number: column[3].flatMap { Int($0) } ?? 0)
            }
            // The primary key and the replica identity index, each in the
            // order of its index.
            let keyRows = try await strings(connection, """
                SELECT i.indisprimary::text, i.indisreplident::text, COALESCE(k.condeferrable, false)::text, a.attname
                FROM pg_index i
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = i.indrelid
                WHERE i.indrelid = $1::oid AND (i.indisprimary OR i.indisreplident)
                ORDER BY i.indexrelid, array_position(i.indkey::int2[], a.attnum)
                """, [String(oid)])
            let key = keyRows.filter { $0[0] == "true" }.map { $0[3] ?? "" }
            guard !key.isEmpty else {
                throw ReplicationError("""
                    \(qualifiedName) has no primary key: its rows cannot be identified in a replica \
                    (REPLICA IDENTITY DEFAULT needs one). Add a primary key, or leave the table out of the publication.
                    """)
            }
            guard !keyRows.contains(where: { $0[0] == "true" && $0[2] == "true" }) else {
                throw ReplicationError("""
                    \(qualifiedName) has a DEFERRABLE primary key: PostgreSQL checks it at the end of a statement \
                    or a transaction, the replica at each row, so a transaction that swaps keys could not be \
                    applied. Make the primary key NOT DEFERRABLE, or leave the table out of the publication.
                    """)
            }
            let unpublished = key.filter { key in !columns.contains { $0.name == key } }
            guard unpublished.isEmpty else {
                let generated = Set(columnRows.filter { ($0[4] ?? "") != "" }.compactMap { $0[0] })
                let reason = unpublished.contains(where: generated.contains)
                    ? "a generated column, which pgoutput does not send" : "add it to the publication's column list"
                throw ReplicationError("""
                    \(qualifiedName): the stream leaves out its primary key column \
                    \(unpublished.joined(separator: ", ")) (\(reason)): its rows cannot be identified in a replica.
                    """)
            }
            var identityKey: [String]?
            if row[4] == "i" {
                let identity = keyRows.filter { $0[1] == "true" }.map { $0[3] ?? "" }
                if !identity.isEmpty, identity != key, identity.allSatisfy({ name in columns.contains { $0.name == name } }) {
                    identityKey = identity
                }
            }
            let table = PublishedTable(
                schema: schema, name: name, oid: oid, columns: columns, primaryKey: key, identityKey: identityKey)
            tables.append(CopiedTable(table: table, rowFilter: row[6], isPartitioned: row[3] == "p"))
        }
        return tables
    }

    /// The most rows that a batch of the copy holds.
    static let copyBatchRows = 1_000
    /// The size of the values of a batch that the copy aims at: a table
    /// of wide rows is read in fewer rows per batch.
    static let copyBatchBytes = 8 << 20

    /// Copies every published table in one snapshot, taken after the slot
    /// exists, and stores the snapshot for the catch-up.
    ///
    /// The copy streams: each table is read through a cursor of the
    /// snapshot's transaction, in batches (`copyBatchRows` rows at most,
    /// fewer when the rows are wide: see `nextBatchRows(after:bytes:)`),
    /// and each batch is inserted as it comes into one SQLite transaction
    /// (`ReplicaApplier.replaceTables(_:position:sourceState:batches:)`),
    /// which replaces the tables and stores the position and the
    /// snapshot. At most two batches are held at once, whatever the size
    /// of the tables; observers of the replica see the copy in one commit.
    ///
    /// Each value is read through its type's output function (`concat`),
    /// as pgoutput sends it: `::text` differs for some types (`inet`
    /// shows its netmask, `char(n)` loses its padding, `boolean` is
    /// spelled out).
    ///
    /// The copy stores the later of two positions (see
    /// `ReplicaApplier.waitUntilReplicated`): the slot's, where the stream
    /// goes on, and the one the replica held, when the slot stands before
    /// it (a replicator stopped between storing a transaction and moving
    /// its slot: by an error of the replica, a crash). The copy shows
    /// every transaction up to either: the replicator read them from the
    /// stream, so they had committed, before the copy's snapshot. The
    /// replica's position thus never goes back, and the stream's
    /// transactions up to it are skipped as applied. (A position read from
    /// PostgreSQL as the copy begins would not do: a transaction whose
    /// commit is in the WAL becomes visible to snapshots a moment later,
    /// or once a synchronous standby confirmed it, so the copy could lack
    /// a transaction before that position, which the stream would then
    /// skip.) A replica whose position is after the end of the WAL
    /// (another history of the source, see `checkHistory`) first forgets
    /// it, in a commit of its own: apps that wait for a position of this
    /// server then wait for the copy, rather than return with the other
    /// history's rows.
    private func copy(_ connection: GuardedConnection) async throws {
        // Read before the snapshot: a position of this history is at or
        // before it.
        let flushedText = try await strings(connection, "SELECT pg_current_wal_flush_lsn()::text").first?.first ?? nil
        guard let flushed = flushedText.flatMap(ReplicationPosition.init(lsn:)) else {
            throw ReplicationError("PostgreSQL gave no WAL position")
        }
        var held = try await applier.position()
        if let position = held, position > flushed {
            logger.warning("""
                the replica stands at \(position), after the end of PostgreSQL's WAL (\(flushed)): it was made from \
                another server or another history of this one; its position is dropped, and the tables copied again
                """)
            try await applier.forgetPosition()
            held = nil
        }
        try await query(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            var tables = try await publishedTables(connection)
            // The partitions of the partitioned tables, in the copy's
            // snapshot, which the stream's partitions are checked against.
            if tables.contains(where: \.isPartitioned) {
                let oids = Self.oidArray(tables.filter(\.isPartitioned).map(\.table.oid))
                let catalog = try await catalogPartitions(connection, tables: oids).partitions
                for index in tables.indices where tables[index].isPartitioned {
                    tables[index].table.partitions = catalog.filter { $0.root == tables[index].table.oid && $0.isLeaf }
                        .map { PublishedTable.Partition(oid: $0.oid, name: $0.name, relfilenode: $0.relfilenode) }
                }
            }
            let snapshot = try await strings(connection, "SELECT pg_current_snapshot()::text").first?.first ?? nil
            let slotPosition = try await strings(
                connection, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
                [configuration.slot]
            ).first?.first ?? nil
            let position = max(
                slotPosition.flatMap { ReplicationPosition(lsn: $0) } ?? ReplicationPosition(0),
                held ?? ReplicationPosition(0))
            let state = PostgresSourceState(snapshot: snapshot, tables: tables.map(\.table))
            copyMeter.start()
            var remaining = tables[...]
            var count = 0
            // The last batch handed to the writer, which it may still be
            // inserting: it is released when the writer takes the next.
            var handedOver = CopyMeter.Amount()
            try await applier.replaceTables(
                tables.map(\.table.replica), position: position, sourceState: try state.text()
            ) { _, write in
                // Called once per table, in their order.
                guard let copied = remaining.popFirst() else { return }
                try await copyRows(of: copied, connection) { batch, amount in
                    try await write(batch)
                    copyMeter.released(handedOver)
                    handedOver = amount
                    count += batch.count
                }
            }
            copyMeter.released(handedOver)
            // Read only: the copy is in the replica, whatever comes of it.
            try await query(connection, "COMMIT")
            logger.info("copied \(tables.count) tables (\(count) rows) at \(position)")
        } catch {
            _ = try? await query(connection, "ROLLBACK")
            throw error
        }
    }

    /// Reads the rows of `copied` in batches, through a cursor of the
    /// copy's transaction, and gives each batch, with its size, to
    /// `write`.
    ///
    /// - Throws: A `ReplicationError` for a text value that is not UTF-8
    ///   (which the stream could not decode either), or the error of a
    ///   query or of `write`.
    private func copyRows(
        of copied: CopiedTable, _ connection: GuardedConnection,
        write: ([[DatabaseValue]], CopyMeter.Amount) async throws -> Void
    ) async throws {
        let table = copied.table
        let columns = table.columns.map { column in
            let name = Self.quoteIdentifier(column.name)
            // `num_nulls`, not `IS NULL`, which is true of a composite
            // value whose fields are all null.
            return "CASE WHEN num_nulls(\(name)) = 1 THEN NULL ELSE concat(\(name)) END"
        }.joined(separator: ", ")
        let types = table.columns.map { PostgresColumnType(oid: $0.typeOID) }
        let only = copied.isPartitioned ? "" : "ONLY "
        let filter = copied.rowFilter.map { " WHERE (\($0))" } ?? ""
        try await query(connection, PostgresQuery(unsafeSQL: """
            DECLARE reactivesqlite_copy NO SCROLL CURSOR FOR SELECT \(columns) FROM \(only)\
            \(Self.quoteIdentifier(table.schema)).\(Self.quoteIdentifier(table.name))\(filter)
            """))
        var limit = 1
        while true {
            let rows = try await query(
                connection, PostgresQuery(unsafeSQL: "FETCH FORWARD \(limit) FROM reactivesqlite_copy"))
            var batch: [[DatabaseValue]] = []
            var bytes = 0
            for try await row in rows {
                var values: [DatabaseValue] = []
                values.reserveCapacity(types.count)
                for (cell, (type, column)) in zip(row, zip(types, table.columns)) {
                    guard let buffer = try cell.decode(ByteBuffer?.self) else {
                        values.append(.null)
                        continue
                    }
                    guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
                        throw ReplicationError("""
                            \(table.qualifiedName): a value of column \(column.name) is not valid UTF-8 (a database \
                            whose encoding is SQL_ASCII stores any bytes), which neither the copy nor the stream can \
                            read. Store it as UTF-8, or leave the table out of the publication.
                            """)
                    }
                    bytes += buffer.readableBytes
                    values.append(type.value(fromText: text))
                }
                batch.append(values)
            }
            let amount = CopyMeter.Amount(rows: batch.count, bytes: bytes)
            copyMeter.read(amount)
            guard !batch.isEmpty else { break }
            try await write(batch, amount)
            if batch.count < limit { break }
            limit = Self.nextBatchRows(after: batch.count, bytes: bytes)
        }
        try await query(connection, "CLOSE reactivesqlite_copy")
    }

    /// How many rows the copy reads next, after a batch of `rows` rows
    /// whose values took `bytes` bytes: as many as make `copyBatchBytes`
    /// at that size, at most twice as many as before, and between 1 and
    /// `copyBatchRows`. A table starts with one row, so that its first
    /// batches are small when its rows are wide.
    static func nextBatchRows(after rows: Int, bytes: Int) -> Int {
        let rowBytes = max(1, bytes / max(1, rows))
        return max(1, min(copyBatchRows, 2 * rows, copyBatchBytes / rowBytes))
    }

    // MARK: - Stream

    /// Follows the stream until the task is cancelled or a query fails.
    ///
    /// - Parameter hasPolled: Set once the stream was read.
    private func follow(_ connection: GuardedConnection, hasPolled: inout Bool) async throws {
        guard var state = PostgresSourceState(text: try await applier.sourceState()) else {
            throw ReplicationError("the replica does not describe its tables: run again with --resync")
        }
        var decoder = TransactionDecoder(tables: state.tables)
        var snapshot = state.snapshot.flatMap(Snapshot.init)
        // Where the replica stands, where the slot was moved, and when
        // (the slot never stands after the replica).
        var replicated = try await applier.position()
        var advanced = replicated
        var lastAdvance = ContinuousClock.now
        // Whether `state` changed since it was stored: it is stored with
        // the next transaction or position.
        var isStateChanged = false
        // The partitions of the replica's partitioned tables, checked
        // against the catalog at the first poll, then when the digest of
        // their catalog changes (`checkPartitions`). The first check
        // finds the partitioned tables (a replica of an earlier version
        // does not say which); a table cannot become partitioned, so
        // without any, the polls read no digest.
        let tableOIDs = Self.oidArray(state.tables.map(\.oid))
        var partitionedOIDs: String?
        var hasCheckedPartitions = false
        var checkedDigest: String?
        var unexplained: [UInt32: UnexplainedPartition] = [:]
        while !Task.isCancelled {
            // The WAL flushed, not written: logical decoding reads no
            // further, and a position past what it read would skip the
            // transactions in between (asynchronous commits).
            let positions: [String?]?
            if let partitionedOIDs {
                positions = try await strings(connection, """
                    \(Self.partitionTreeSQL(tables: "$2"))
                    SELECT pg_current_wal_flush_lsn()::text,
                           (SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1),
                           \(Self.partitionDigestSQL)
                    """, [configuration.slot, partitionedOIDs]).first
            } else {
                positions = try await strings(connection, """
                    SELECT pg_current_wal_flush_lsn()::text,
                           (SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1), NULL
                    """, [configuration.slot]).first
            }
            let digest = positions?[2] ?? nil
            guard let upto = positions?[0], let uptoPosition = ReplicationPosition(lsn: upto) else {
                throw ReplicationError("PostgreSQL gave no WAL position")
            }
            // Another replicator moved the slot past this replica.
            if let slotText = positions?[1], let slotPosition = ReplicationPosition(lsn: slotText), let replicated {
                try checkSlot(at: slotPosition, replicaAt: replicated)
            }
            let limit = 20_000
            var bindings = PostgresBindings()
            bindings.append(configuration.slot)
            bindings.append(upto)
            bindings.append(configuration.publication)
            // The transactions are applied once the catalog is checked
            // (no query runs while the rows come).
            var count = 0
            var transactions: [TransactionDecoder.DecodedTransaction] = []
            // The first message that could not be decoded, where, and
            // why: the rows after it are read, not decoded, and the
            // transactions before it are applied.
            var undecodable: (lsn: String, xid: String, error: any Error)?
            do {
                let rows = try await query(
                    connection, PostgresQuery(
                        unsafeSQL: """
                            SELECT lsn::text, xid::text, data FROM pg_logical_slot_peek_binary_changes(
                                $1, $2::pg_lsn, \(limit), 'proto_version', '1', 'publication_names', $3)
                            """, binds: bindings))
                for try await row in rows {
                    count += 1
                    guard undecodable == nil else { continue }
                    let (lsn, xid, buffer) = try row.decode((String, String, ByteBuffer).self)
                    do {
                        let message = try PgOutputMessage(decoding: buffer.readableBytesView)
                        if let transaction = decoder.consume(message) { transactions.append(transaction) }
                    } catch {
                        undecodable = (lsn, xid, error)
                    }
                }
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42704" {
                try await checkPublication(connection, error, replicaAt: replicated)
                throw error
            }
            hasPolled = true
            let described = decoder.takeDescribedTables()
            if !described.isEmpty { try await checkColumnNumbers(connection, described) }
            for decoded in transactions {
                let transaction = decoded.transaction
                // Applied before (a stream replayed from the slot's
                // position, behind the replica's): skipped, refused or not.
                if let replicated, transaction.position <= replicated { continue }
                if let current = snapshot, current.isVisible(decoded.xid) {
                    // Already in the copy: its position only.
                    try await applier.apply(ReplicatedTransaction(position: transaction.position, changes: []))
                } else {
                    if let refusal = decoded.refusal {
                        // The slot moves to what the replica holds, so
                        // that a resync replays no more than it must.
                        try await advanceSlot(connection, from: &advanced, to: replicated)
                        throw refusal
                    }
                    if snapshot != nil {
                        // The first transaction the copy does not show:
                        // the snapshot is of no more use.
                        snapshot = nil
                        state.snapshot = nil
                        isStateChanged = true
                    }
                    // A TRUNCATE of a partitioned table gives each of its
                    // partitions new storage, in this transaction.
                    for index in state.tables.indices where state.tables[index].partitions != nil
                        && decoded.truncatedRelations.contains(state.tables[index].oid)
                    {
                        state.tables[index].truncatedBy = decoded.xid
                        isStateChanged = true
                    }
                    if isStateChanged {
                        if try await applier.apply(transaction, sourceState: .some(try state.text())) {
                            isStateChanged = false
                        }
                    } else {
                        try await applier.apply(transaction)
                    }
                }
                replicated = transaction.position
            }
            if let undecodable {
                try await advanceSlot(connection, from: &advanced, to: replicated)
                throw undecodableMessage(
                    undecodable.error, at: undecodable.lsn, transaction: undecodable.xid, replicaAt: replicated)
            }
            let lastCommit = transactions.last?.transaction.position
            // Fewer rows than the limit: every transaction committed before
            // `upto` is in the replica.
            let reached = count < limit ? uptoPosition : lastCommit
            if !hasCheckedPartitions || digest != checkedDigest || !unexplained.isEmpty {
                let (catalog, seenBefore, checked) = try await catalogPartitions(connection, tables: tableOIDs)
                do {
                    if try state.checkPartitions(
                        catalog, seenBefore: seenBefore, readThrough: reached ?? replicated, unexplained: &unexplained)
                    {
                        isStateChanged = true
                    }
                } catch {
                    try await advanceSlot(connection, from: &advanced, to: replicated)
                    throw error
                }
                hasCheckedPartitions = true
                checkedDigest = checked
                let partitioned = state.tables.filter { $0.partitions != nil }.map(\.oid)
                partitionedOIDs = partitioned.isEmpty ? nil : Self.oidArray(partitioned)
            }
            // A position that only moved past other tables' changes (or
            // the polls' own) is stored at most every
            // `quietAdvanceInterval`: an idle poll writes nothing.
            if let reached, reached > (advanced ?? ReplicationPosition(0)),
                lastCommit != nil || isStateChanged
                    || ContinuousClock.now - lastAdvance >= configuration.quietAdvanceInterval
            {
                advanced = reached
                lastAdvance = .now
                if isStateChanged {
                    let empty = ReplicatedTransaction(position: reached, changes: [])
                    if try await applier.apply(empty, sourceState: .some(try state.text())) { isStateChanged = false }
                } else {
                    try await applier.advance(to: reached)
                }
                replicated = max(replicated ?? reached, reached)
                try await advanceSlot(connection, to: reached)
            }
            if count == 0 { try await Task.sleep(for: configuration.pollInterval) }
        }
    }

    /// OIDs as the text of a PostgreSQL array (`{16384,16390}`).
    static func oidArray(_ oids: [UInt32]) -> String {
        "{" + oids.map { String($0) }.joined(separator: ",") + "}"
    }

    /// The partition trees of the replica's partitioned tables, as a
    /// common table expression `tree(root, relid)`: each table (of the
    /// OIDs in the array `tables`) that is partitioned, and the relations
    /// that inherit from it, partitions of partitions included. Read from
    /// `pg_inherits` in the query's snapshot (`pg_partition_tree` reads
    /// the latest catalog).
    static func partitionTreeSQL(tables: String) -> String {
        """
        WITH RECURSIVE tree(root, relid) AS (
            SELECT c.oid, c.oid FROM pg_class c WHERE c.oid = ANY(\(tables)::oid[]) AND c.relkind = 'p'
            UNION ALL
            SELECT tree.root, i.inhrelid FROM tree JOIN pg_inherits i ON i.inhparent = tree.relid
        )
        """
    }

    /// A digest of `tree`: which relations, with which storage. Each poll
    /// reads it; the catalog is read and checked when it changes.
    static let partitionDigestSQL = """
        (SELECT md5(string_agg(tree.root::text || ':' || c.oid::text || ':' || c.relfilenode::text, ',' \
        ORDER BY tree.root, c.oid)) FROM tree JOIN pg_class c ON c.oid = tree.relid)
        """

    /// The partition trees of the replica's partitioned tables (`tables`,
    /// the array of their OIDs), a WAL position after the commit of every
    /// transaction they show, and their digest (`partitionDigestSQL`).
    private func catalogPartitions(_ connection: GuardedConnection, tables: String) async throws
        -> (partitions: [CatalogPartition], seenBefore: ReplicationPosition, digest: String?)
    {
        let rows = try await strings(connection, """
            \(Self.partitionTreeSQL(tables: "$1"))
            SELECT tree.root::text, c.oid::text, n.nspname || '.' || c.relname, (c.relkind = 'r')::text,
                   c.relfilenode::text, c.xmin::text, pg_current_wal_insert_lsn()::text, \(Self.partitionDigestSQL)
            FROM tree JOIN pg_class c ON c.oid = tree.relid JOIN pg_namespace n ON n.oid = c.relnamespace
            """, [tables])
        var partitions: [CatalogPartition] = []
        for row in rows {
            guard let root = row[0].flatMap({ UInt32($0) }), let oid = row[1].flatMap({ UInt32($0) }),
                let relfilenode = row[4].flatMap({ UInt32($0) }), let xmin = row[5].flatMap({ UInt32($0) })
            else { throw ReplicationError("PostgreSQL described a partition without its OIDs: \(row)") }
            partitions.append(CatalogPartition(
                root: root, oid: oid, name: row[2] ?? "?", isLeaf: row[3] == "true", relfilenode: relfilenode,
                xmin: xmin))
        }
        let seenBefore = rows.first.flatMap { $0[6] }.flatMap(ReplicationPosition.init(lsn:)) ?? ReplicationPosition(0)
        return (partitions, seenBefore, rows.first?[7] ?? nil)
    }

    /// Moves the slot to `position`, the replica's, when it stands after
    /// `advanced`, where the slot was moved last.
    private func advanceSlot(
        _ connection: GuardedConnection, from advanced: inout ReplicationPosition?, to position: ReplicationPosition?
    ) async throws {
        guard let position, position > (advanced ?? ReplicationPosition(0)) else { return }
        advanced = position
        try await advanceSlot(connection, to: position)
    }

    /// The error of a message of the stream that cannot be decoded: the
    /// slot will send it again after any reconnection, so the replica
    /// stops at the transaction before it.
    private func undecodableMessage(
        _ error: any Error, at lsn: String, transaction xid: String, replicaAt position: ReplicationPosition?
    ) -> ReplicationError {
        ReplicationError("""
            the slot \(configuration.slot) sent a message that cannot be decoded, at LSN \(lsn) (transaction \
            \(xid)): \(error). The replica stops at \(position?.description ?? "its copy"), the last transaction it \
            applied whole. The slot sends this message again each time it is read: a text that is not UTF-8 (a \
            database whose encoding is SQL_ASCII) must be stored as UTF-8, then the slot dropped \
            (SELECT pg_drop_replication_slot('\(configuration.slot)')) for the replicator to create it again \
            and copy the tables.
            """)
    }

    /// Throws when the object that the stream's query did not find
    /// (SQLSTATE 42704) is not the slot, which is created again when the
    /// replicator connects again, but the publication. pgoutput reads the
    /// publication in the catalog as it was at each change: once a change
    /// was made while the publication did not exist, the slot can never
    /// decode past it, whether the publication was created again or not.
    private func checkPublication(
        _ connection: GuardedConnection, _ error: PSQLError, replicaAt position: ReplicationPosition?
    ) async throws {
        let slots = try await strings(
            connection, "SELECT slot_name::text FROM pg_replication_slots WHERE slot_name = $1", [configuration.slot])
        guard !slots.isEmpty else { return }
        throw ReplicationError("""
            the slot \(configuration.slot) cannot decode the stream after LSN \(position?.description ?? "?"): \
            \(Self.sentence(Self.describe(error))) The publication \(configuration.publication) was dropped after that \
            position (and may have been created again): PostgreSQL decodes each change with the catalog of its \
            time, so this slot cannot go past a change made while the publication did not exist. Drop the slot \
            (SELECT pg_drop_replication_slot('\(configuration.slot)')) and run again: the replicator creates \
            it again and copies the tables.
            """)
    }

    /// Moves the slot to a position that the replica holds; it keeps
    /// nothing before it from then on.
    private func advanceSlot(_ connection: GuardedConnection, to position: ReplicationPosition) async throws {
        var bindings = PostgresBindings()
        bindings.append(configuration.slot)
        bindings.append(position.description)
        try await query(
            connection, PostgresQuery(unsafeSQL: "SELECT pg_replication_slot_advance($1, $2::pg_lsn)", binds: bindings))
    }

    /// Stops when a column of a table that the stream described is, in
    /// PostgreSQL's catalog, another column than the copy's of its name:
    /// one dropped and added again, whose Relation message is the same,
    /// and whose old values the replica would keep.
    ///
    /// The catalog is read after the stream's end position: it shows every
    /// schema change that a decoded transaction comes after. Column
    /// numbers are never used again once dropped, so a difference lasts.
    private func checkColumnNumbers(_ connection: GuardedConnection, _ tables: [UInt32: PublishedTable]) async throws {
        // Quoted: an OID past 2^31 would be a bigint, which no operator
        // compares with an oid.
        let oids = tables.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
        let rows = try await strings(connection, """
            SELECT attrelid::text, attname, attnum::text FROM pg_attribute
            WHERE attrelid IN (\(oids)) AND attnum > 0 AND NOT attisdropped
            """)
        for row in rows {
            guard let oid = row[0].flatMap({ UInt32($0) }), let table = tables[oid], let name = row[1],
                let number = row[2].flatMap({ Int($0) }),
                let copied = table.columns.first(where: { $0.name == name }), copied.number != number
            else { continue }
            throw ReplicationError("""
                \(table.qualifiedName): its column \(name) was dropped and added again in PostgreSQL (column \
                number \(copied.number), now \(number)): the replica holds the old column's values. \
                \(TransactionDecoder.resyncAdvice)
                """)
        }
    }

    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// `schema.table` or `table`, quoted.
    static func quotedName(_ name: String) -> String {
        name.split(separator: ".", maxSplits: 1).map { quoteIdentifier(String($0)) }.joined(separator: ".")
    }
}

/// A PostgreSQL snapshot (`xmin:xmax:xip,...`): which transactions it shows.
struct Snapshot {
    var xmin: UInt64
    var xmax: UInt64
    var inProgress: Set<UInt64>

    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]) else { return nil }
        self.xmin = xmin
        self.xmax = xmax
        inProgress = Set(parts[2].split(separator: ",").compactMap { UInt64($0) })
    }

    /// Whether the transaction of 32-bit `xid` committed before the
    /// snapshot. Its epoch is that of `xmax`'s neighbourhood: transactions
    /// of the stream are recent.
    func isVisible(_ xid: UInt32) -> Bool {
        var full = (xmax & ~0xFFFF_FFFF) | UInt64(xid)
        if full > xmax, full - xmax > 0x8000_0000, full >= 0x1_0000_0000 { full -= 0x1_0000_0000 }
        if full < xmin { return true }
        return full < xmax && !inProgress.contains(full)
    }
}

/// The connection to PostgreSQL closed while a query waited.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the connection to PostgreSQL closed" }
}

/// A connection whose queries never wait on its close.
///
/// postgres-nio hands a query to its channel without a write promise: a
/// query written after the channel closed and took its handlers down is
/// dropped, and its caller would wait forever (seen after
/// `pg_terminate_backend` struck between two polls). So each query runs in
/// a task of its own, raced against the connection's close: when the
/// close comes first, the caller gets `ConnectionClosed`, and a dropped
/// query's task is left suspended (it holds its query only). One handler
/// of the close per connection, which tells the queries that wait.
final class GuardedConnection: Sendable {
    let connection: PostgresConnection
    /// The queries waiting for their outcome, by number; nil once closed.
    private let waiting = Mutex<(next: Int, closeHandlers: [Int: @Sendable () -> Void]?)>((0, [:]))

    init(_ connection: PostgresConnection) {
        self.connection = connection
        // Holds `self` until the connection closed (the replicator always
        // closes it).
        connection.closeFuture.whenComplete { [self] _ in
            let handlers = waiting.withLock { waiting in
                defer { waiting.closeHandlers = nil }
                return waiting.closeHandlers ?? [:]
            }
            for handler in handlers.values { handler() }
        }
    }

    /// Runs `query`, or throws `ConnectionClosed` once the connection
    /// closed, or `CancellationError` when the task is cancelled.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        let outcome = FirstOutcome<PostgresRowSequence>()
        let number = waiting.withLock { waiting -> Int? in
            guard waiting.closeHandlers != nil else { return nil }
            waiting.next += 1
            waiting.closeHandlers![waiting.next] = { outcome.finish(.failure(ConnectionClosed())) }
            return waiting.next
        }
        guard let number else { throw ConnectionClosed() }
        defer { waiting.withLock { _ = $0.closeHandlers?.removeValue(forKey: number) } }
        let connection = self.connection
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.wait(continuation)
                let task = Task {
                    do {
                        outcome.finish(.success(try await connection.query(query, logger: logger)))
                    } catch {
                        outcome.finish(.failure(error))
                    }
                }
                outcome.whenCancelled { task.cancel() }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }
}

/// The first of several outcomes, handed to one waiting continuation.
///
/// The continuation may come after the outcome (a connection closed
/// already, a task cancelled before it waited): the outcome is kept until
/// then. Later outcomes are ignored.
final class FirstOutcome<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case decided(Result<Value, any Error>)
        case resumed
    }

    private let state = Mutex<State>(.empty)
    private let cancellation = Mutex<(isCancelled: Bool, handler: (@Sendable () -> Void)?)>((false, nil))

    /// Sets the continuation; resumes it at once when the outcome is known.
    func wait(_ continuation: CheckedContinuation<Value, any Error>) {
        let decided: Result<Value, any Error>? = state.withLock { state in
            if case .decided(let result) = state {
                state = .resumed
                return result
            }
            state = .waiting(continuation)
            return nil
        }
        if let decided { continuation.resume(with: decided) }
    }

    /// Decides the outcome, if no other did.
    func finish(_ result: Result<Value, any Error>) {
        let continuation: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .decided(result)
                return nil
            case .waiting(let continuation):
                state = .resumed
                return continuation
            case .decided, .resumed:
                return nil
            }
        }
        continuation?.resume(with: result)
        if case .failure(let error) = result, error is CancellationError { cancel() }
    }

    /// Runs `handler` when the wait is cancelled (at once if it was).
    func whenCancelled(_ handler: @escaping @Sendable () -> Void) {
        let runNow = cancellation.withLock { cancellation in
            if cancellation.isCancelled { return true }
            cancellation.handler = handler
            return false
        }
        if runNow { handler() }
    }

    private func cancel() {
        let handler = cancellation.withLock { cancellation in
            cancellation.isCancelled = true
            defer { cancellation.handler = nil }
            return cancellation.handler
        }
        handler?()
    }
}

#endif
