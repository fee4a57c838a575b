import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

// Fixtures of the differences observation tests. Observations deliver with the
// `.observationQueue` scheduler into a `Recorder` (Observation/ObservationSupport.swift),
// and tests wait for each value before the next write, so that no value
// coalesces and every kind of database delivers the same values.

/// A row of `player(id INTEGER PRIMARY KEY, name TEXT)`, with a count of the
/// updates an update closure made to it (not a column: equality ignores it).
struct Person: FetchableRecord, TableRecord, Identifiable, Equatable, Encodable, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var updateCount = 0

    enum CodingKeys: String, CodingKey {
        case id, name
    }

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(row: Row) throws {
        id = try row["id"]
        name = try row["name"]
    }

    static func == (lhs: Person, rhs: Person) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name
    }
}

/// `name:count` for each element, `-` for none: `Craig:0, Danielle:0`.
func describe(_ people: [Person]) -> String {
    people.isEmpty ? "-" : people.map { "\($0.name):\($0.updateCount)" }.joined(separator: ", ")
}

/// `inserted | updated | deleted`.
func describe(_ difference: SetDifference<Person>) -> String {
    "\(describe(difference.inserted)) | \(describe(difference.updated)) | \(describe(difference.deleted))"
}

/// `inserted | updated | deleted`, each element described by `describe`.
func describe<Element>(_ difference: SetDifference<Element>, _ describe: (Element) -> String) -> String {
    func list(_ elements: [Element]) -> String {
        elements.isEmpty ? "-" : elements.map(describe).joined(separator: ", ")
    }
    return "\(list(difference.inserted)) | \(list(difference.updated)) | \(list(difference.deleted))"
}

/// Starts `observation` with the `.observationQueue` scheduler, records its values, and
/// runs `steps`: each one a transaction, after which the test waits for one
/// more value. Returns the values described by `describe`.
///
/// - Parameter steps: SQL run in one transaction per step, after the first
///   value arrived.
func recordValues<Value: Sendable>(
    of observation: ValueObservation<Value>,
    in writer: any DatabaseWriter,
    steps: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> [Value] {
    let recorder = Recorder<Value>()
    let cancellable = observation.start(in: writer, scheduling: .observationQueue) { error in
        Issue.record(error, sourceLocation: sourceLocation)
    } onChange: { value in
        recorder.append(value)
    }
    defer { cancellable.cancel() }
    try await recorder.wait(for: 1)
    for (index, sql) in steps.enumerated() {
        try writer.writeSQL(sql)
        try await recorder.wait(for: index + 2)
    }
    return recorder.values
}

/// Starts `observation` and returns the first error it reports.
func firstError<Value: Sendable>(
    of observation: ValueObservation<Value>,
    in writer: any DatabaseWriter
) async throws -> any Error {
    let errors = Recorder<String>()
    let box = Locked<(any Error)?>(nil)
    let cancellable = observation.start(in: writer, scheduling: .observationQueue) { error in
        box.value = error
        errors.append("\(error)")
    } onChange: { value in
        Issue.record("unexpected value \(value)")
    }
    defer { cancellable.cancel() }
    try await errors.wait(for: 1)
    return try #require(box.value)
}
