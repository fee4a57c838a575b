#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB
import GRDBDifferences
import TestSupport
import Testing

/// The set-difference scenario of the differences observations issue, run through
/// GRDB's `ValueObservation`: `setDifferences` on an observation of
/// elements, and `trackingSetDifferences` on a request.
@Suite(.onItsOwnThread) struct SetDifferencesScenarioTests {
    static let schemaSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
        INSERT INTO player (id, name) VALUES (1, 'Arthur');
        """

    /// One transaction per step, each awaited before the next one.
    static let steps = [
        "UPDATE player SET name = 'Barbara' WHERE id = 1",
        "DELETE FROM player",
        "INSERT INTO player (id, name) VALUES (1, 'Craig'), (2, 'Danielle')",
        "DELETE FROM player WHERE id = 1; UPDATE player SET name = 'Fiona' WHERE id = 2; "
            + "INSERT INTO player (id, name) VALUES (3, 'Gerhard')",
        "UPDATE player SET name = 'Harriett' WHERE id = 2",
    ]

    static let expected = [
        DifferenceSummary(inserted: ["Arthur"]),
        DifferenceSummary(updated: ["Barbara"]),
        DifferenceSummary(deleted: ["Barbara"]),
        DifferenceSummary(inserted: ["Craig", "Danielle"]),
        DifferenceSummary(inserted: ["Gerhard"], updated: ["Fiona"], deleted: ["Craig"]),
        DifferenceSummary(updated: ["Harriett"]),
    ]

    static let expectedWithCounts = [
        DifferenceSummary(inserted: ["Arthur 0"]),
        DifferenceSummary(updated: ["Barbara 1"]),
        DifferenceSummary(deleted: ["Barbara 1"]),
        DifferenceSummary(inserted: ["Craig 0", "Danielle 0"]),
        DifferenceSummary(inserted: ["Gerhard 0"], updated: ["Fiona 1"], deleted: ["Craig 0"]),
        DifferenceSummary(updated: ["Harriett 2"]),
    ]

    /// Runs the steps, waiting for one difference after each, and returns
    /// the differences.
    static func runScenario<Reducer: ValueReducer>(
        kind: GRDBDatabaseKind,
        _ observation: ValueObservation<Reducer>
    ) async throws -> [SetDifference<CountedPlayer>] where Reducer.Value == SetDifference<CountedPlayer> {
        let test = try kind.make(sql: schemaSQL)
        let recorder = Recorder<SetDifference<CountedPlayer>>()
        let cancellable = observation.record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        for (index, step) in steps.enumerated() {
            try test.writer.writeSQL(step)
            try await recorder.wait(for: index + 2)
        }
        return recorder.values
    }

    @Test(arguments: GRDBDatabaseKind.allCases)
    func setDifferencesOfTheScenario(kind: GRDBDatabaseKind) async throws {
        let observation = ValueObservation
            .tracking { db in try CountedPlayer.orderByPrimaryKey().fetchAll(db) }
            .setDifferences()
        let differences = try await Self.runScenario(kind: kind, observation)
        #expect(differences.map { DifferenceSummary($0, counts: false) } == Self.expected)
    }

    @Test(arguments: GRDBDatabaseKind.allCases)
    func setDifferencesOfTheScenarioWithAnUpdateCounter(kind: GRDBDatabaseKind) async throws {
        let observation = ValueObservation
            .tracking { db in try CountedPlayer.orderByPrimaryKey().fetchAll(db) }
            .setDifferences(updateElement: CountedPlayer.incrementingCount)
        let differences = try await Self.runScenario(kind: kind, observation)
        #expect(differences.map { DifferenceSummary($0, counts: true) } == Self.expectedWithCounts)
    }

    @Test(arguments: GRDBDatabaseKind.allCases)
    func trackingSetDifferencesOfTheScenario(kind: GRDBDatabaseKind) async throws {
        let observation = ValueObservation.trackingSetDifferences(CountedPlayer.all())
        let differences = try await Self.runScenario(kind: kind, observation)
        #expect(differences.map { DifferenceSummary($0, counts: false) } == Self.expected)
    }

    @Test(arguments: GRDBDatabaseKind.allCases)
    func trackingSetDifferencesOfTheScenarioWithAnUpdateCounter(kind: GRDBDatabaseKind) async throws {
        let observation = ValueObservation.trackingSetDifferences(
            CountedPlayer.all(), updateRecord: CountedPlayer.incrementingCount)
        let differences = try await Self.runScenario(kind: kind, observation)
        #expect(differences.map { DifferenceSummary($0, counts: true) } == Self.expectedWithCounts)
    }

    /// Rows are read in the order of the request (names descending): the
    /// difference is still in id order.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func setDifferencesSortsElementsThatAreNotSortedByID(kind: GRDBDatabaseKind) async throws {
        let observation = ValueObservation
            .tracking { db in try CountedPlayer.order(Column("name").desc).fetchAll(db) }
            .setDifferences(updateElement: CountedPlayer.incrementingCount)
        let differences = try await Self.runScenario(kind: kind, observation)
        #expect(differences.map { DifferenceSummary($0, counts: true) } == Self.expectedWithCounts)
    }
}

#endif
