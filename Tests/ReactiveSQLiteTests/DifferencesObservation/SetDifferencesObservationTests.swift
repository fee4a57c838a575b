import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// The scenario of the set difference observations: the same six steps
/// through `setDifferences` and `trackingSetDifferences`, with and without
/// an update closure.
@Suite struct SetDifferencesObservationTests {
    static let schemaSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT);
        INSERT INTO player (id, name) VALUES (1, 'Arthur');
        """

    /// One transaction each.
    static let steps = [
        "UPDATE player SET name = 'Barbara' WHERE id = 1",
        "DELETE FROM player",
        "INSERT INTO player (id, name) VALUES (1, 'Craig'), (2, 'Danielle')",
        "DELETE FROM player WHERE id = 1; UPDATE player SET name = 'Fiona' WHERE id = 2; INSERT INTO player (id, name) VALUES (3, 'Gerhard')",
        "UPDATE player SET name = 'Harriett' WHERE id = 2",
    ]

    /// inserted | updated | deleted, with update counts.
    static let expected = [
        "Arthur:0 | - | -",
        "- | Barbara:0 | -",
        "- | - | Barbara:0",
        "Craig:0, Danielle:0 | - | -",
        "Gerhard:0 | Fiona:0 | Craig:0",
        "- | Harriett:0 | -",
    ]

    /// With an update closure that counts updates: the deletion reports the
    /// kept element, and the count goes on from the kept element.
    static let expectedWithUpdateCounts = [
        "Arthur:0 | - | -",
        "- | Barbara:1 | -",
        "- | - | Barbara:1",
        "Craig:0, Danielle:0 | - | -",
        "Gerhard:0 | Fiona:1 | Craig:0",
        "- | Harriett:2 | -",
    ]

    func run(_ observation: ValueObservation<SetDifference<Person>>, kind: DatabaseKind) async throws -> [String] {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL)
        return try await recordValues(of: observation, in: test.writer, steps: Self.steps).map(describe)
    }

    @Test(arguments: DatabaseKind.allCases)
    func setDifferencesReportInsertedUpdatedAndDeletedElements(kind: DatabaseKind) async throws {
        let observation = ValueObservation.trackingAll(Person.orderByPrimaryKey()).setDifferences()
        #expect(try await run(observation, kind: kind) == Self.expected)
    }

    @Test(arguments: DatabaseKind.allCases)
    func setDifferencesReportAndKeepWhatUpdateElementReturns(kind: DatabaseKind) async throws {
        let observation = ValueObservation.trackingAll(Person.orderByPrimaryKey())
            .setDifferences { old, new in
                var element = new
                element.updateCount = old.updateCount + 1
                return element
            }
        #expect(try await run(observation, kind: kind) == Self.expectedWithUpdateCounts)
    }

    @Test(arguments: DatabaseKind.allCases)
    func trackingSetDifferencesReportInsertedUpdatedAndDeletedRecords(kind: DatabaseKind) async throws {
        let observation = ValueObservation.trackingSetDifferences(Person.all())
        #expect(try await run(observation, kind: kind) == Self.expected)
    }

    @Test(arguments: DatabaseKind.allCases)
    func trackingSetDifferencesReportAndKeepWhatUpdateRecordReturns(kind: DatabaseKind) async throws {
        let observation = ValueObservation.trackingSetDifferences(Person.all()) { old, row in
            var record = old
            record.name = (try? row["name"]) ?? "(undecodable)"
            record.updateCount = old.updateCount + 1
            return record
        }
        #expect(try await run(observation, kind: kind) == Self.expectedWithUpdateCounts)
    }

    /// The first difference starts from the initial elements.
    @Test(arguments: DatabaseKind.allCases)
    func setDifferencesStartFromInitialElements(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara'), (3, 'Craig');
            """)
        let initial = [Person(id: 1, name: "Arthur"), Person(id: 2, name: "Babs"), Person(id: 4, name: "David")]
        let observation = ValueObservation.trackingAll(Person.orderByPrimaryKey()).setDifferences(initialElements: initial)
        let values = try await recordValues(of: observation, in: test.writer, steps: [])
        #expect(values.map(describe) == ["Craig:0 | Barbara:0 | David:0"])
    }

    /// Unchanged elements keep their previous instance, which a later
    /// deletion reports; a commit that leaves the rows as they were
    /// delivers nothing.
    @Test(arguments: DatabaseKind.allCases)
    func setDifferencesKeepPreviousInstancesAndSkipEmptyDifferences(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL + """
            INSERT INTO player (id, name) VALUES (2, 'Barbara');
            """)
        let writer = test.writer
        var arthur = Person(id: 1, name: "Arthur")
        arthur.updateCount = 5
        let observation = ValueObservation.trackingAll(Person.orderByPrimaryKey())
            .setDifferences(initialElements: [arthur]) { old, new in
                var element = new
                element.updateCount = old.updateCount + 1
                return element
            }
        let recorder = Recorder<SetDifference<Person>>()
        let cancellable = observation.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try writer.writeSQL("UPDATE player SET name = 'Babs' WHERE id = 2; INSERT INTO player (id, name) VALUES (3, 'Craig')")
        try await recorder.wait(for: 2)
        // The observation fetches after this transaction, and finds the
        // same rows: no value.
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (9, 'Zoe'); DELETE FROM player WHERE id = 9")
        try writer.writeSQL("DELETE FROM player")
        let values = try await recorder.wait(for: 3)
        #expect(values.map(describe) == [
            "Barbara:0 | - | -",
            "Craig:0 | Babs:1 | -",
            "- | - | Arthur:5, Babs:1, Craig:0",
        ])
    }
}
