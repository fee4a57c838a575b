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
        try await ReplicationAdversarialTests.withDatabase(
            ["CREATE TABLE note (id integer PRIMARY KEY, body text)", "INSERT INTO note VALUES (1, 'plain')"],
            options: "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
        ) { url, connection in
            let replica = try TestReplica(url: url, slot: "undecodable", tables: ["note"])
            try await replica.catchUp(with: connection)
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

    /// A change made while the publication did not exist can never be
    /// decoded by the slot (PostgreSQL decodes each change with the catalog
    /// of its time, SQLSTATE 42704), even once the replicator created the
    /// publication again: it stops, and says how to start again.
    @Test func aChangeMadeWhileThePublicationWasDroppedStopsTheReplica() async throws {
        try await ReplicationAdversarialTests.withDatabase([
            "CREATE TABLE thing (id integer PRIMARY KEY)", "INSERT INTO thing VALUES (1)",
        ]) { url, connection in
            let replica = try TestReplica(url: url, slot: "unpublished", tables: ["thing"])
            try await replica.catchUp(with: connection)
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
