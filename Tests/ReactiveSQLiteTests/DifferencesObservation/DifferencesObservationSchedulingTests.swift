import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// The diff operators deliver through the plain observation's machinery:
/// `.immediate` never delivers an empty first difference, `values(in:)`
/// skips empty differences too, and errors end the observation once.
///
/// Some tests wait on async sequences: the time limit turns a hang into a failure.
@Suite(.timeLimit(.minutes(3))) struct DifferencesObservationSchedulingTests {
    static let schemaSQL = "CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);"

    /// The three operators on the same table, recording `operator: value`.
    @MainActor
    func startImmediately(in writer: any DatabaseWriter, recorder: Recorder<String>) -> [AnyDatabaseCancellable] {
        let tracking = ValueObservation.trackingSetDifferences(Person.all())
            .start(in: writer, scheduling: .immediate, onError: { Issue.record($0) }) { difference in
                recorder.append("tracking: " + describe(difference))
            }
        let set = ValueObservation.trackingAll(Person.orderByPrimaryKey()).setDifferences()
            .start(in: writer, scheduling: .immediate, onError: { Issue.record($0) }) { difference in
                recorder.append("set: " + describe(difference))
            }
        let ordered = ValueObservation.trackingAll(Person.orderByPrimaryKey()).orderedDifferences()
            .start(in: writer, scheduling: .immediate, onError: { Issue.record($0) }) { value in
                recorder.append("ordered: \(value.elements.map(\.name)) \(value.difference)")
            }
        return [tracking, set, ordered]
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateDeliversNoEmptyFirstDifference(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL)
        let recorder = Recorder<String>()
        let cancellables = startImmediately(in: test.writer, recorder: recorder)
        defer { cancellables.forEach { $0.cancel() } }
        #expect(recorder.values == [])

        try await test.writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (1, 'Arthur')") }
        let values = try await recorder.wait(for: 3)
        #expect(values.sorted() == [
            "ordered: [\"Arthur\"] OrderedDifference(deletions: [], insertions: [0], moves: [], updates: [])",
            "set: Arthur:0 | - | -",
            "tracking: Arthur:0 | - | -",
        ])
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateDeliversANonEmptyFirstDifferenceBeforeStartReturns(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL + "INSERT INTO player VALUES (1, 'Arthur');")
        let recorder = Recorder<String>()
        let cancellables = startImmediately(in: test.writer, recorder: recorder)
        defer { cancellables.forEach { $0.cancel() } }
        #expect(recorder.values == [
            "tracking: Arthur:0 | - | -",
            "set: Arthur:0 | - | -",
            "ordered: [\"Arthur\"] OrderedDifference(deletions: [], insertions: [0], moves: [], updates: [])",
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func asyncValuesSkipEmptyDifferences(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL)
        let writer = test.writer
        var differences = ValueObservation.trackingSetDifferences(Person.all()).values(in: writer).makeAsyncIterator()
        var orderedValues = ValueObservation.trackingAll(Person.orderByPrimaryKey()).orderedDifferences()
            .values(in: writer).makeAsyncIterator()
        try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (1, 'Arthur')") }
        #expect(try await differences.next().map(describe) == "Arthur:0 | - | -")
        #expect(try await orderedValues.next()?.elements.map(\.name) == ["Arthur"])
        // Changes no row: no value; then a change.
        try await writer.write { db in try db.execute(sql: "INSERT INTO player VALUES (2, 'Zoe'); DELETE FROM player WHERE id = 2") }
        try await writer.write { db in try db.execute(sql: "UPDATE player SET name = 'Barbara'") }
        #expect(try await differences.next().map(describe) == "- | Barbara:0 | -")
        #expect(try await orderedValues.next()?.difference.updates == [0])
    }

    @Test(arguments: DatabaseKind.allCases)
    func asyncValuesThrowTheObservationError(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: "")
        await #expect(throws: DatabaseError.self) {
            for try await _ in ValueObservation.trackingSetDifferences(Person.all()).values(in: test.writer) {}
        }
    }

    /// A row that does not decode ends the observation with the decoding
    /// error, once, however many commits follow.
    @Test(arguments: DatabaseKind.allCases)
    func decodingErrorsEndTheObservationOnce(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL + "INSERT INTO player VALUES (1, 'Arthur');")
        let writer = test.writer
        let recorder = Recorder<String>()
        let errors = Recorder<String>()
        let cancellable = ValueObservation.trackingSetDifferences(Person.all())
            .start(in: writer, scheduling: .observationQueue, onError: { errors.append("\(type(of: $0))") }) { difference in
                recorder.append(describe(difference))
            }
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try await writer.write { db in try db.execute(sql: "INSERT INTO player VALUES (2, NULL)") }
        try await errors.wait(for: 1)
        try await writer.write { db in try db.execute(sql: "INSERT INTO player VALUES (3, NULL)") }
        // A value observation after the commit proves the commit was seen.
        let witness = Recorder<Int>()
        let witnessCancellable = ValueObservation.trackingCount(Person.all())
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: witness.append)
        defer { witnessCancellable.cancel() }
        try await witness.wait(forLast: 3)
        #expect(errors.values == ["RowDecodingError"])
        #expect(recorder.values == ["Arthur:0 | - | -"])
    }
}
