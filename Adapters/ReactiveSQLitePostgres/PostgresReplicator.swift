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

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
    ///
    /// - Throws: A `ReplicationError` naming what is wrong in the URL.
    public init(url: String, slot: String, publication: String? = nil, tables: [String] = []) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
            let host = components.host, !host.isEmpty, let username = components.user, !username.isEmpty
        else {
            throw ReplicationError("\(url): not a URL postgres://USER@HOST:PORT/DATABASE")
        }
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
/// - **Stream.** `pg_logical_slot_peek_binary_changes` up to
///   `pg_current_wal_lsn()`, then, once SQLite committed, the slot is
///   moved with `pg_replication_slot_advance`: a crash between the two
///   applies nothing twice (positions at or before the stored one are
///   skipped) and loses nothing (the slot still holds what SQLite lacks).
///   When nothing came, it asks again after `pollInterval` (5 ms): the
///   latency of a commit is the interval, plus one decoding, plus the
///   SQLite commit. Polling rather than the streaming protocol, because the
///   latter needs a replication connection.
/// - **Reconnects** when the connection fails (`pg_terminate_backend`, a
///   restart of PostgreSQL, a server not reachable yet): after 100 ms,
///   then, while attempts fail in a row, after twice as long each time,
///   up to 5 s. A query never waits on a closed connection (see
///   `GuardedConnection`).
/// - Every access to the replica is asynchronous: no thread of Swift
///   concurrency waits for the SQLite writer.
///
/// What stops it, with a `ReplicationError` that says why:
/// - PostgreSQL refusing what no reconnection changes: the login (an
///   unknown role, a wrong password), a database that does not exist, a
///   privilege the role lacks, a published table that does not exist, no
///   free replication slot (with its message and SQLSTATE);
/// - a table without primary key (its rows cannot be identified);
/// - a column added or dropped in PostgreSQL (run again with `resync`);
/// - a change the replica does not match.
///
/// A dropped slot is recreated, and the tables copied again.
public final class PostgresReplicator: Sendable {
    public let configuration: PostgresReplicationConfiguration
    public let applier: ReplicaApplier
    let logger: Logger

    /// Creates a replicator into the replica of `applier`.
    public init(configuration: PostgresReplicationConfiguration, applier: ReplicaApplier, logger: Logger) {
        self.configuration = configuration
        self.applier = applier
        self.logger = logger
    }

    /// Replicates until the task is cancelled, or until an error that a
    /// reconnection cannot cure.
    ///
    /// - Parameter onReady: Called once the replica holds a copy, before
    ///   the stream is followed.
    public func run(onReady: @Sendable () -> Void = {}) async throws {
        var backoff = Duration.milliseconds(100)
        var isReady = false
        var resync = configuration.resync
        while !Task.isCancelled {
            var isFollowing = false
            do {
                let connection = try await connect()
                defer { Task { try? await connection.connection.close() } }
                try await prepare(connection, resync: resync)
                resync = false
                if !isReady {
                    isReady = true
                    onReady()
                }
                isFollowing = true
                try await follow(connection)
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
            } catch {
                // A connection that got as far as following the stream
                // starts the backoff again: it is the failed attempts in a
                // row that wait longer and longer.
                if isFollowing { backoff = .milliseconds(100) }
                if Task.isCancelled { return }
                logger.warning("PostgreSQL: \(Self.describe(error)); connecting again in \(backoff)")
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    /// Whether PostgreSQL refused in a way that connecting again cannot
    /// cure: a login it rejects (SQLSTATE class 28: an unknown role, a
    /// wrong password, no `pg_hba.conf` entry), a database that does not
    /// exist (3D000), a privilege the role lacks (42501: to create a slot
    /// or a publication), a table to publish that does not exist (42P01),
    /// or no replication slot left (53400, `max_replication_slots`).
    /// Everything else is retried: a lost connection, a server that shuts
    /// down or starts up (class 57), a slot that another process holds for
    /// a moment (55006), a slot dropped under the stream (42704: it is
    /// created again).
    static func refusesForGood(_ error: PSQLError) -> Bool {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("28") || ["3D000", "42501", "42P01", "53400"].contains(state)
    }

    /// The text of an error: PostgreSQL's message when there is one.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return error.serverInfo?[.sqlState].map { "\(message) (SQLSTATE \($0))" } ?? message
            }
            return "\(error.code)"
        }
        return "\(error)"
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
        let slots = try await strings(
            connection, "SELECT plugin FROM pg_replication_slots WHERE slot_name = $1", [configuration.slot])
        let position = try await applier.position()
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
        }
    }

    /// A published table, as PostgreSQL describes it.
    struct PublishedTable {
        var schema: String
        var name: String
        var columns: [(name: String, type: PostgresColumnType)]
        var replica: ReplicaTable
    }

    private func publishedTables(_ connection: GuardedConnection) async throws -> [PublishedTable] {
        let rows = try await strings(connection, """
            SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2
            """, [configuration.publication])
        var tables: [PublishedTable] = []
        // SQLite compares table names without case (ASCII).
        var qualifiedNames: [String: String] = [:]
        for row in rows {
            guard let schema = row[0], let name = row[1] else { continue }
            if let other = qualifiedNames.updateValue("\(schema).\(name)", forKey: name.lowercased()) {
                throw ReplicationError("""
                    \(other) and \(schema).\(name) are both published: a replica names its tables without \
                    their schema, so they would be one table. Publish one of them.
                    """)
            }
            let qualified = Self.quoteIdentifier(schema) + "." + Self.quoteIdentifier(name)
            let columnRows = try await strings(connection, """
                SELECT a.attname, a.atttypid::text,
                       COALESCE((SELECT true FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisprimary
                                 AND a.attnum = ANY(i.indkey)), false)::text
                FROM pg_attribute a
                WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY a.attnum
                """, [qualified])
            let columns = columnRows.map { (name: $0[0] ?? "", type: PostgresColumnType(oid: UInt32($0[1] ?? "") ?? 0)) }
            let key = columnRows.filter { $0[2] == "true" }.map { $0[0] ?? "" }
            guard !key.isEmpty else {
                throw ReplicationError("""
                    \(schema).\(name) has no primary key: its rows cannot be identified in a replica \
                    (REPLICA IDENTITY DEFAULT needs one). Add a primary key, or leave the table out of the publication.
                    """)
            }
            let replica = ReplicaTable(
                name: name, columns: columns.map { ReplicaTable.Column(name: $0.name, type: $0.type.sqliteType) },
                primaryKey: key)
            tables.append(PublishedTable(schema: schema, name: name, columns: columns, replica: replica))
        }
        return tables
    }

    /// Copies every published table in one snapshot, taken after the slot
    /// exists, and stores the snapshot for the catch-up.
    private func copy(_ connection: GuardedConnection) async throws {
        try await query(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let tables = try await publishedTables(connection)
            let snapshot = try await strings(connection, "SELECT pg_current_snapshot()::text").first?.first ?? nil
            let slotPosition = try await strings(
                connection, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
                [configuration.slot]
            ).first?.first ?? nil
            var rowsByTable: [[[DatabaseValue]]] = []
            for table in tables {
                let columns = table.columns.map { Self.quoteIdentifier($0.name) + "::text" }.joined(separator: ", ")
                let rows = try await strings(
                    connection,
                    "SELECT \(columns) FROM ONLY \(Self.quoteIdentifier(table.schema)).\(Self.quoteIdentifier(table.name))")
                rowsByTable.append(rows.map { row in
                    zip(row, table.columns).map { text, column in text.map(column.type.value(fromText:)) ?? .null }
                })
            }
            try await query(connection, "COMMIT")
            let position = slotPosition.flatMap { ReplicationPosition(lsn: $0) } ?? ReplicationPosition(0)
            try await applier.replaceTables(
                tables.map(\.replica), rows: rowsByTable, position: position, sourceState: snapshot)
            logger.info("copied \(tables.count) tables (\(rowsByTable.map(\.count).reduce(0, +)) rows) at \(position)")
        } catch {
            _ = try? await query(connection, "ROLLBACK")
            throw error
        }
    }

    // MARK: - Stream

    private func follow(_ connection: GuardedConnection) async throws {
        var decoder = TransactionDecoder(tables: try await applier.tables())
        var snapshot = try await applier.sourceState().flatMap(Snapshot.init)
        // Where the replica and the slot stand, and when they moved.
        var advanced = try await applier.position()
        var lastAdvance = ContinuousClock.now
        while !Task.isCancelled {
            guard let upto = try await strings(connection, "SELECT pg_current_wal_lsn()::text").first?.first ?? nil,
                let uptoPosition = ReplicationPosition(lsn: upto)
            else { throw ReplicationError("PostgreSQL gave no WAL position") }
            let limit = 20_000
            var bindings = PostgresBindings()
            bindings.append(configuration.slot)
            bindings.append(upto)
            bindings.append(configuration.publication)
            let rows = try await query(
                connection, PostgresQuery(
                    unsafeSQL: """
                        SELECT data FROM pg_logical_slot_peek_binary_changes(
                            $1, $2::pg_lsn, \(limit), 'proto_version', '1', 'publication_names', $3)
                        """, binds: bindings))
            var count = 0
            var lastCommit: ReplicationPosition?
            for try await row in rows {
                count += 1
                let buffer = try row.decode(ByteBuffer.self)
                let message = try PgOutputMessage(decoding: buffer.readableBytesView)
                guard let (xid, transaction) = try decoder.consume(message) else { continue }
                lastCommit = transaction.position
                if let current = snapshot, current.isVisible(xid) {
                    // Already in the copy: its position only.
                    try await applier.apply(ReplicatedTransaction(position: transaction.position, changes: []))
                } else {
                    try await applier.apply(transaction, sourceState: snapshot == nil ? .none : .some(nil))
                    snapshot = nil
                }
            }
            // Fewer rows than the limit: every transaction committed before
            // `upto` is in the replica. A position that only moved past
            // other tables' changes (or the polls' own) is stored at most
            // every `quietAdvanceInterval`: an idle poll writes nothing.
            let reached = count < limit ? uptoPosition : lastCommit
            if let reached, reached > (advanced ?? ReplicationPosition(0)),
                lastCommit != nil || ContinuousClock.now - lastAdvance >= configuration.quietAdvanceInterval
            {
                advanced = reached
                lastAdvance = .now
                try await applier.advance(to: reached)
                var advance = PostgresBindings()
                advance.append(configuration.slot)
                advance.append(reached.description)
                try await query(
                    connection, PostgresQuery(unsafeSQL: "SELECT pg_replication_slot_advance($1, $2::pg_lsn)", binds: advance))
            }
            if count == 0 { try await Task.sleep(for: configuration.pollInterval) }
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

/// Gathers pgoutput messages into transactions of the replica.
struct TransactionDecoder {
    /// The replica's tables, by name.
    var tables: [String: ReplicaTable] = [:]
    /// Relations by id, as the stream described them (the columns as they
    /// were when the change was made, with their types), with the table of
    /// the replica that holds them.
    var relations: [UInt32: (relation: PgOutputRelation, table: Table)] = [:]
    var xid: UInt32?
    var changes: [ReplicatedChange] = []

    /// A relation of the stream, checked against the replica's table.
    struct Table {
        var name: String
        var columns: [(name: String, type: PostgresColumnType)]
        var primaryKey: [String]
    }

    init(tables: [ReplicaTable]) {
        for table in tables { self.tables[table.name] = table }
    }

    /// Consumes one message; returns the transaction a Commit ends.
    mutating func consume(_ message: PgOutputMessage) throws -> (xid: UInt32, transaction: ReplicatedTransaction)? {
        switch message {
        case .begin(let begin):
            xid = begin.xid
            changes = []
        case .commit(let commit):
            defer { xid = nil; changes = [] }
            return (xid ?? 0, ReplicatedTransaction(position: ReplicationPosition(commit.endLSN), changes: changes))
        case .relation(let relation):
            let name = relation.namespace + "." + relation.name
            guard let replica = tables[relation.name] else {
                throw ReplicationError("\(name) is in the stream but not in the replica: run again with --resync")
            }
            let streamed = relation.columns.map(\.name)
            let copied = replica.columns.map(\.name)
            guard streamed == copied else {
                let added = streamed.filter { !copied.contains($0) }
                let dropped = copied.filter { !streamed.contains($0) }
                throw ReplicationError("""
                    \(name): its columns changed in PostgreSQL (added: \(added.joined(separator: ", ")); \
                    dropped: \(dropped.joined(separator: ", "))). The replica stops here, unchanged since the \
                    last transaction it applied; run again with --resync to copy the tables again.
                    """)
            }
            let table = Table(
                name: replica.name,
                columns: relation.columns.map { ($0.name, PostgresColumnType(oid: $0.typeOID)) },
                primaryKey: replica.primaryKey)
            relations[relation.id] = (relation, table)
        case .insert(let id, let new):
            let (relation, table) = try self.relation(id)
            changes.append(.insert(table: table.name, row: try Self.row(new, relation, table)))
        case .update(let id, let old, let new):
            let (relation, table) = try self.relation(id)
            let row = try Self.row(new, relation, table)
            let key: [String: DatabaseValue]
            switch old {
            case .key(let tuple)?, .row(let tuple)?:
                key = try Self.key(Self.row(tuple, relation, table), table)
            case nil:
                key = try Self.key(row, table)
            }
            changes.append(.update(table: table.name, key: key, row: row))
        case .delete(let id, let old):
            let (relation, table) = try self.relation(id)
            switch old {
            case .key(let tuple), .row(let tuple):
                changes.append(.delete(table: table.name, key: try Self.key(Self.row(tuple, relation, table), table)))
            }
        case .truncate(_, let ids):
            changes.append(.truncate(tables: try ids.map { try relation($0).table.name }))
        case .origin, .type, .message:
            break
        }
        return nil
    }

    private func relation(_ id: UInt32) throws -> (relation: PgOutputRelation, table: Table) {
        guard let entry = relations[id] else { throw ReplicationError("a change names relation \(id), never described") }
        return entry
    }

    /// The known values of a tuple, by column (nulls of a key tuple's
    /// other columns and unchanged TOASTed values left out).
    private static func row(
        _ tuple: PgOutputTuple, _ relation: PgOutputRelation, _ table: Table
    ) throws -> [String: DatabaseValue] {
        guard tuple.values.count == table.columns.count else {
            throw ReplicationError("\(table.name): a row has \(tuple.values.count) values for \(table.columns.count) columns")
        }
        var row: [String: DatabaseValue] = [:]
        for (value, column) in zip(tuple.values, table.columns) {
            switch value {
            case .null: row[column.name] = .null
            case .unchangedToast: break
            case .text(let text): row[column.name] = column.type.value(fromText: text)
            case .binary(let bytes): row[column.name] = DatabaseValue(storage: .blob(Data(bytes)))
            }
        }
        return row
    }

    private static func key(_ row: [String: DatabaseValue], _ table: Table) throws
        -> [String: DatabaseValue]
    {
        var key: [String: DatabaseValue] = [:]
        for column in table.primaryKey {
            guard let value = row[column] else { throw ReplicationError("\(table.name): a change lacks key column \(column)") }
            key[column] = value
        }
        return key
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
