#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB
import GRDBDifferences
import TestSupport
import Testing

/// What the data can get wrong ends the observation with a thrown error,
/// never a trap.
@Suite struct DifferencesErrorTests {
    static let playersSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
        INSERT INTO player VALUES (1, 'Arthur'), (2, 'Barbara');
        """

    /// Starts `observation` and returns its first error.
    static func firstError<Reducer: ValueReducer>(
        of observation: ValueObservation<Reducer>, sql: String
    ) async throws -> any Error {
        let test = try GRDBDatabaseKind.inMemoryQueue.make(sql: sql)
        let errors = Recorder<any Error>()
        let cancellable = observation.record(in: test.writer, into: Recorder(), errors: errors)
        defer { cancellable.cancel() }
        return try await errors.wait(for: 1)[0]
    }

    @Test func aSelectionWithoutThePrimaryKey() async throws {
        let error = try await Self.firstError(
            of: ValueObservation.trackingSetDifferences(CountedPlayer.select(Column("name"))), sql: Self.playersSQL)
        let differencesError = try #require(error as? DifferencesObservationError)
        #expect(differencesError.kind == .missingPrimaryKeyColumn)
        #expect(differencesError.message.contains("\"id\" of table \"player\""))
    }

    /// A text primary key of a rowid table accepts several NULLs.
    @Test func duplicateKeys() async throws {
        let error = try await Self.firstError(
            of: ValueObservation.trackingSetDifferences(TrackingSetDifferencesKeyTests.Tag.all()),
            sql: """
                CREATE TABLE tag (name TEXT PRIMARY KEY, count INTEGER NOT NULL);
                INSERT INTO tag VALUES (NULL, 1), (NULL, 2);
                """)
        let differencesError = try #require(error as? DifferencesObservationError)
        #expect(differencesError.kind == .duplicateIdentifier)
        #expect(differencesError.message.contains("NULL"))
    }

    @Test func duplicateIDsInSetDifferences() async throws {
        let observation = ValueObservation
            .tracking { db in try CountedPlayer.fetchAll(db, sql: "SELECT * FROM player UNION ALL SELECT 2, 'Bis'") }
            .setDifferences()
        let error = try await Self.firstError(of: observation, sql: Self.playersSQL)
        #expect((error as? DifferencesObservationError)?.kind == .duplicateIdentifier)
    }

    @Test func duplicateIDsInInitialElements() async throws {
        let observation = ValueObservation
            .tracking { db in try CountedPlayer.fetchAll(db) }
            .setDifferences(initialElements: [CountedPlayer(id: 1, name: "A"), CountedPlayer(id: 1, name: "B")])
        let error = try await Self.firstError(of: observation, sql: Self.playersSQL)
        #expect((error as? DifferencesObservationError)?.kind == .duplicateIdentifier)
    }

    @Test func duplicateIDsInOrderedDifferences() async throws {
        let observation = ValueObservation
            .tracking { db in try CountedPlayer.fetchAll(db, sql: "SELECT * FROM player UNION ALL SELECT 1, 'Bis'") }
            .orderedDifferences()
        let error = try await Self.firstError(of: observation, sql: Self.playersSQL)
        #expect((error as? DifferencesObservationError)?.kind == .duplicateIdentifier)
    }

    struct FailingPlayer: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        struct DecodingFailure: Error {}

        init(row: Row) throws {
            if row["name"] == "Barbara" { throw DecodingFailure() }
        }
    }

    /// A record that cannot be decoded ends the observation with its error.
    @Test func recordDecodingErrors() async throws {
        let error = try await Self.firstError(
            of: ValueObservation.trackingSetDifferences(FailingPlayer.all()), sql: Self.playersSQL)
        #expect(error is FailingPlayer.DecodingFailure)
    }

    /// The database's errors (here, a missing table) reach `onError` as thrown.
    @Test func databaseErrors() async throws {
        let error = try await Self.firstError(
            of: ValueObservation.trackingSetDifferences(CountedPlayer.all()), sql: "")
        #expect((error as? DatabaseError)?.resultCode == .SQLITE_ERROR)
    }
}

#endif
