#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB
import GRDBDifferences
import TestSupport
import Testing

/// How the operators behave as GRDB observations: the first difference,
/// skipped empty differences, one state per run, GRDB's own features.
///
/// Some tests wait on async sequences: the time limit turns a hang into a failure.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct DifferencesObservationTests {
    static let playersSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
        INSERT INTO player VALUES (1, 'Arthur'), (2, 'Barbara');
        """

    static let allPlayers = ValueObservation.tracking { db in try CountedPlayer.orderByPrimaryKey().fetchAll(db) }

    /// GRDB delivers a first value unconditionally: an empty first
    /// difference is delivered. Later empty differences are not.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func onlyTheFirstDifferenceMayBeEmpty(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(sql: Self.playersSQL)
        let initialElements = [CountedPlayer(id: 2, name: "Barbara"), CountedPlayer(id: 1, name: "Arthur")]
        let setRecorder = Recorder<SetDifference<CountedPlayer>>()
        let trackingRecorder = Recorder<SetDifference<CountedPlayer>>()
        let orderedRecorder = Recorder<ElementsWithDifference<CountedPlayer>>()
        let cancellables = [
            Self.allPlayers.setDifferences(initialElements: initialElements)
                .record(in: test.writer, into: setRecorder),
            ValueObservation.trackingSetDifferences(
                CountedPlayer.all(), initialRecords: initialElements
            ).record(in: test.writer, into: trackingRecorder),
            Self.allPlayers.orderedDifferences().record(in: test.writer, into: orderedRecorder),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        #expect(try await setRecorder.wait(for: 1) == [SetDifference()])
        #expect(try await trackingRecorder.wait(for: 1).map { DifferenceSummary($0, counts: false) } == [
            DifferenceSummary()
        ])
        #expect(try await orderedRecorder.wait(for: 1).map(\.difference.insertions) == [[0, 1]])

        // Refetches with the same elements: no difference is delivered.
        try test.writer.writeSQL("UPDATE player SET name = name")
        try test.writer.writeSQL("UPDATE player SET name = 'Craig' WHERE id = 3")
        try test.writer.writeSQL("UPDATE player SET name = 'Art' WHERE id = 1")

        #expect(try await setRecorder.wait(for: 2)[1] == SetDifference(updated: [CountedPlayer(id: 1, name: "Art")]))
        #expect(DifferenceSummary(try await trackingRecorder.wait(for: 2)[1], counts: false)
            == DifferenceSummary(updated: ["Art"]))
        #expect(try await orderedRecorder.wait(for: 2)[1].difference.updates == [0])
        try test.writer.writeSQL("INSERT INTO player VALUES (3, 'Craig')")
        try await setRecorder.wait(for: 3)
        try await trackingRecorder.wait(for: 3)
        try await orderedRecorder.wait(for: 3)
        #expect(setRecorder.values.count == 3)
        #expect(trackingRecorder.values.count == 3)
        #expect(orderedRecorder.values.count == 3)
    }

    @Test(arguments: GRDBDatabaseKind.allCases)
    func anEmptyRequestGivesAnEmptyFirstDifference(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(sql: "CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT)")
        let recorder = Recorder<SetDifference<CountedPlayer>>()
        let cancellable = ValueObservation.trackingSetDifferences(CountedPlayer.all())
            .record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1)[0].isEmpty)
        try test.writer.writeSQL("INSERT INTO player VALUES (1, 'Arthur')")
        #expect(DifferenceSummary(try await recorder.wait(for: 2)[1], counts: false)
            == DifferenceSummary(inserted: ["Arthur"]))
    }

    /// Each start of one observation value has its own state: a second run
    /// starts from the initial elements, and neither run disturbs the other.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func eachRunHasItsOwnState(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(sql: Self.playersSQL)
        let setDifferences = Self.allPlayers.setDifferences(updateElement: CountedPlayer.incrementingCount)
        let trackingSetDifferences = ValueObservation.trackingSetDifferences(
            CountedPlayer.all(), updateRecord: CountedPlayer.incrementingCount)
        func start(_ recorder: Recorder<SetDifference<CountedPlayer>>, tracking: Bool) -> AnyDatabaseCancellable {
            tracking
                ? trackingSetDifferences.record(in: test.writer, into: recorder)
                : setDifferences.record(in: test.writer, into: recorder)
        }

        let firstRuns = [Recorder<SetDifference<CountedPlayer>>(), Recorder<SetDifference<CountedPlayer>>()]
        var cancellables = [start(firstRuns[0], tracking: false), start(firstRuns[1], tracking: true)]
        for recorder in firstRuns { try await recorder.wait(for: 1) }
        try test.writer.writeSQL("UPDATE player SET name = 'Bob' WHERE id = 2")
        for recorder in firstRuns { try await recorder.wait(for: 2) }

        let secondRuns = [Recorder<SetDifference<CountedPlayer>>(), Recorder<SetDifference<CountedPlayer>>()]
        cancellables += [start(secondRuns[0], tracking: false), start(secondRuns[1], tracking: true)]
        defer { cancellables.forEach { $0.cancel() } }
        for recorder in secondRuns { try await recorder.wait(for: 1) }
        try test.writer.writeSQL("UPDATE player SET name = 'Bobby' WHERE id = 2")
        for recorder in firstRuns { try await recorder.wait(for: 3) }
        for recorder in secondRuns { try await recorder.wait(for: 2) }

        for recorder in firstRuns {
            #expect(recorder.values.map { DifferenceSummary($0, counts: true) } == [
                DifferenceSummary(inserted: ["Arthur 0", "Barbara 0"]),
                DifferenceSummary(updated: ["Bob 1"]),
                DifferenceSummary(updated: ["Bobby 2"]),
            ])
        }
        for recorder in secondRuns {
            #expect(recorder.values.map { DifferenceSummary($0, counts: true) } == [
                DifferenceSummary(inserted: ["Arthur 0", "Bob 0"]),
                DifferenceSummary(updated: ["Bobby 1"]),
            ])
        }
    }

    /// The operators return GRDB's own `ValueObservation`: its operators
    /// and its asynchronous sequence work on them.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func theObservationsAreGRDBsOwn(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(sql: Self.playersSQL)
        let insertedNames = ValueObservation.trackingSetDifferences(CountedPlayer.all())
            .map { $0.inserted.map(\.name) }
        var iterator = insertedNames.values(in: test.writer).makeAsyncIterator()
        #expect(try await iterator.next() == ["Arthur", "Barbara"])
        try await test.writer.write { db in try db.execute(sql: "INSERT INTO player VALUES (3, 'Craig')") }
        #expect(try await iterator.next() == ["Craig"])

        var changes = Self.allPlayers.orderedDifferences().values(in: test.writer).makeAsyncIterator()
        #expect(try await changes.next()?.elements.map(\.name) == ["Arthur", "Barbara", "Craig"])
        try await test.writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id = 2") }
        let change = try #require(try await changes.next())
        #expect(change.elements.map(\.name) == ["Arthur", "Craig"])
        #expect(change.difference.deletions == [1])
    }
}

#endif
