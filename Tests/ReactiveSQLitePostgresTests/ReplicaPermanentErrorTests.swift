#if PostgreSQL
import Foundation
import PostgresNIO
import ReactiveSQLite
import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import Testing

/// What connecting again cannot cure stops the replicator with a
/// `ReplicationError` that says what and where, instead of a loop that
/// connects, meets the same failure, and connects again for ever. (What a
/// reconnection cures, a terminated connection or a restart of
/// PostgreSQL, is retried: see `PostgresReplicationTests` and
/// `ReplicaCrashTests`.)
@Suite(.serialized, .enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(10)))
struct ReplicaPermanentErrorTests {
    /// The text of an error, for a failure's message.
    static func message(_ error: (any Error)?) -> String {
        (error as? ReplicationError)?.message ?? "not a ReplicationError: \(String(describing: error))"
    }

    /// A message that the decoder cannot read stops the replicator with
    /// the slot, the LSN of the message and what could not be read; the
    /// replica keeps every transaction before it. Here a text value that
    /// is not UTF-8: a `SQL_ASCII` database stores any bytes, and pgoutput
    /// sends them as they are.
    @Test func aMessageThatCannotBeDecodedStopsTheReplica() async throws {
        try await TestReplica.withReplica(
            slot: "undecodable", tables: ["note"],
            schema: ["CREATE TABLE note (id integer PRIMARY KEY, body text)", "INSERT INTO note VALUES (1, 'plain')"],
            options: "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
        ) { replica, connection in
            try await connection.run("INSERT INTO note VALUES (2, 'before')")
            let before = try #require(ReplicationPosition(lsn: try await connection.texts("SELECT pg_current_wal_lsn()::text")[0][0]!))
            try await connection.run("INSERT INTO note VALUES (3, E'caf\\xe9')")
            let after = try #require(ReplicationPosition(lsn: try await connection.texts("SELECT pg_current_wal_lsn()::text")[0][0]!))
            let message = Self.message(await replica.error())
            #expect(message.contains("slot undecodable"), "\(message)")
            #expect(message.contains("is not valid UTF-8"), "\(message)")
            // The LSN of the message, between the commits around it.
            let lsn = message.firstMatch(of: /at LSN ([0-9A-F]+\/[0-9A-F]+)/).flatMap { ReplicationPosition(lsn: String($0.1)) }
            #expect(lsn.map { before <= $0 && $0 < after } == true, "\(message): not between \(before) and \(after)")
            let ids = try await replica.pool.read { try Int.fetchAll($0, sql: "SELECT id FROM note ORDER BY id") }
            #expect(ids == [1, 2])
        }
    }

    /// The copy reads such a value as the stream would: it stops with the
    /// table and the column, rather than copy a replacement character in
    /// its place.
    @Test func aValueThatIsNotUTF8StopsTheCopy() async throws {
        try await ReplicationAdversarialTests.withDatabase(
            ["CREATE TABLE note (id integer PRIMARY KEY, body text)", "INSERT INTO note VALUES (1, E'caf\\xe9')"],
            options: "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
        ) { url, _ in
            let replica = try TestReplica(url: url, slot: "undecodable_copy", tables: ["note"])
            let message = Self.message(await replica.error())
            #expect(message.contains("public.note") && message.contains("column body is not valid UTF-8"), "\(message)")
        }
    }

    /// A slot of the same name that another database created cannot
    /// decode this one (SQLSTATE 55000): the replicator stops, and says so.
    @Test func aSlotOfAnotherDatabaseStopsTheReplica() async throws {
        try await ReplicationAdversarialTests.withDatabase(["CREATE TABLE thing (id integer PRIMARY KEY)"]) { url, _ in
            let (_, other) = try await PostgresTestCluster.makeDatabase()
            do {
                try await other.run("SELECT pg_create_logical_replication_slot('foreign_slot', 'pgoutput')")
            } catch {
                try? await other.close()
                throw error
            }
            try await other.close()
            let replica = try TestReplica(url: url, slot: "foreign_slot", tables: ["thing"])
            let message = Self.message(await replica.error())
            #expect(message.contains("foreign_slot") && message.contains("another database"), "\(message)")
        }
    }

    /// A role of its own that may log in and replicate, but not connect to
    /// the database of `url` (`REVOKE CONNECT ... FROM PUBLIC`): PostgreSQL
    /// refuses it with a DETAIL. Returns `url` with that role as its user;
    /// the test drops the role with `dropRole`.
    static func roleWithoutConnect(_ url: String, _ connection: PostgresConnection) async throws
        -> (url: String, role: String)
    {
        var components = try #require(URLComponents(string: url))
        let database = String(components.path.dropFirst())
        let role = "no_connect_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await connection.run("CREATE ROLE \(role) LOGIN REPLICATION")
        try await connection.run("REVOKE CONNECT ON DATABASE \(database) FROM PUBLIC")
        components.user = role
        return (try #require(components.string), role)
    }

    /// Drops a role of `roleWithoutConnect`.
    static func dropRole(_ role: String, _ connection: PostgresConnection) async throws {
        try await connection.run("DROP ROLE IF EXISTS \(role)")
    }

    /// Bug: the text of PostgreSQL's errors left out their DETAIL and
    /// HINT, which say what a refusal is about and what to do. Correct:
    /// `message (SQLSTATE x). DETAIL: ... HINT: ...`, as PostgreSQL sent
    /// them: here a duplicate key (a DETAIL) and a function that does not
    /// exist (a HINT).
    @Test func theTextOfAServerErrorKeepsItsDetailAndHint() async throws {
        try await ReplicationAdversarialTests.withDatabase([
            "CREATE TABLE thing (id integer PRIMARY KEY)", "INSERT INTO thing VALUES (1)",
        ]) { _, connection in
            func failure(_ sql: String) async -> String {
                do {
                    try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestCluster.logger)
                    return "no error"
                } catch {
                    return PostgresReplicator.describe(error)
                }
            }
            #expect(await failure("INSERT INTO thing VALUES (1)") == """
                duplicate key value violates unique constraint "thing_pkey" (SQLSTATE 23505). \
                DETAIL: Key (id)=(1) already exists.
                """)
            #expect(await failure("SELECT no_such_function(1)") == """
                function no_such_function(integer) does not exist (SQLSTATE 42883). \
                HINT: No function matches the given name and argument types. You might need to add explicit type casts.
                """)
        }
    }

    /// A role that may not connect to the database stops the replicator
    /// with PostgreSQL's message, SQLSTATE and DETAIL.
    @Test func aRefusalStopsTheReplicaWithPostgresDetail() async throws {
        try await ReplicationAdversarialTests.withDatabase(["CREATE TABLE thing (id integer PRIMARY KEY)"]) { url, connection in
            let (refusedURL, role) = try await Self.roleWithoutConnect(url, connection)
            let replica = try TestReplica(url: refusedURL, slot: "no_connect", tables: ["thing"])
            let message = Self.message(await replica.error())
            try await Self.dropRole(role, connection)
            #expect(
                message.contains("permission denied for database")
                    && message.contains("(SQLSTATE 42501). DETAIL: User does not have CONNECT privilege."),
                "\(message)")
        }
    }

    /// A change made while the publication did not exist can never be
    /// decoded by the slot (PostgreSQL decodes each change with the catalog
    /// of its time, SQLSTATE 42704), even once the replicator created the
    /// publication again: it stops, and says how to start again.
    @Test func aChangeMadeWhileThePublicationWasDroppedStopsTheReplica() async throws {
        try await TestReplica.withReplica(slot: "unpublished", tables: ["thing"], schema: [
            "CREATE TABLE thing (id integer PRIMARY KEY)", "INSERT INTO thing VALUES (1)",
        ]) { replica, connection in
            try await connection.run("DROP PUBLICATION unpublished")
            try await connection.run("INSERT INTO thing VALUES (2)")
            let message = Self.message(await replica.error())
            #expect(
                message.contains("publication \"unpublished\" does not exist")
                    && message.contains("pg_drop_replication_slot('unpublished')"),
                "\(message)")
        }
    }
}
#endif
