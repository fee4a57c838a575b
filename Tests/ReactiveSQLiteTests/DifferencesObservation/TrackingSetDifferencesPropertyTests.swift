import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `trackingSetDifferences` under random changes of a table whose keys mix
/// every storage class: each delivered difference is the difference between
/// two committed states, in `BINARY` order, whether the request gives its
/// rows in key order or not, and however many runs share the observation.
@Suite(.onItsOwnThread) struct TrackingSetDifferencesPropertyTests {
    /// `item(key, value)`: the key has no type, so it holds integers, reals,
    /// texts and blobs.
    struct Item: FetchableRecord, TableRecord, Sendable {
        var key: DatabaseValue
        var value: Int

        init(row: Row) throws {
            key = try row["key"]
            value = try row["value"]
        }
    }

    /// A committed state: value by key.
    typealias State = [DatabaseValue: Int]

    static let keys: [DatabaseValue] = {
        var keys: [DatabaseValue] = (0..<12).map { DatabaseValue(storage: .integer($0)) }
        keys += [2.5, -1.5].map { DatabaseValue(storage: .real($0)) }
        keys.append(DatabaseValue(storage: .integer(1 << 53 + 1)))
        keys += ["a", "B", "b", "e\u{301}", "\u{e9}", ""].map { DatabaseValue(storage: .text($0)) }
        keys += [[0], [0, 0], [255]].map { DatabaseValue(storage: .blob(Data($0))) }
        return keys
    }()

    /// The difference between two states, in key order: inserted and updated
    /// as (key, new value), deleted as (key, old value).
    static func difference(from old: State, to new: State) -> String {
        let inserted = new.keys.filter { old[$0] == nil }.sorted().map { "\($0)=\(new[$0]!)" }
        let updated = new.keys.filter { old[$0] != nil && old[$0] != new[$0] }.sorted().map { "\($0)=\(new[$0]!)" }
        let deleted = old.keys.filter { new[$0] == nil }.sorted().map { "\($0)=\(old[$0]!)" }
        return "\(inserted) \(updated) \(deleted)"
    }

    static func describe(_ difference: SetDifference<Item>) -> String {
        func list(_ items: [Item]) -> [String] { items.map { "\($0.key)=\($0.value)" } }
        return "\(list(difference.inserted)) \(list(difference.updated)) \(list(difference.deleted))"
    }

    static func apply(_ difference: SetDifference<Item>, to state: State) -> State {
        var state = state
        for item in difference.deleted { state[item.key] = nil }
        for item in difference.inserted + difference.updated { state[item.key] = item.value }
        return state
    }

    static func fetchState(_ db: Database) throws -> State {
        var state = State()
        for row in try SQLRequest<Row>(sql: "SELECT key, value FROM item").fetchAll(db) {
            state[try row["key"]] = try row["value"]
        }
        return state
    }

    @Test(arguments: DatabaseKind.allCases)
    func differencesGoFromOneCommittedStateToALaterOne(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: "CREATE TABLE item (key PRIMARY KEY NOT NULL, value INTEGER NOT NULL);")
        let writer = test.writer
        try writer.writeSQLWithoutTransaction("PRAGMA synchronous = OFF")
        var random = SplitMix64(seed: 0xD1FF + UInt64(DatabaseKind.allCases.firstIndex(of: kind)!))

        // In key order (the fetch reuses unchanged rows), twice from one
        // observation value (two runs share its reuse of rows), and in
        // another order (the observation sorts).
        let byKey = ValueObservation.trackingSetDifferences(Item.orderByPrimaryKey())
        let byValue = ValueObservation.trackingSetDifferences(Item.all().order(sql: "value DESC, rowid"))
        let recorders = (0..<3).map { _ in Recorder<SetDifference<Item>>() }
        let cancellables = zip([byKey, byKey, byValue], recorders).map { observation, recorder in
            observation.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        }
        defer { cancellables.forEach { $0.cancel() } }

        var states: [State] = [[:]]
        let stepCount = isRunningUnderThreadSanitizer ? 300 : 1500
        for _ in 0..<stepCount {
            var statements: [(String, StatementArguments)] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let key = Self.keys.randomElement(using: &random)!
                let value = Int.random(in: 0..<4, using: &random)
                switch Int.random(in: 0..<8, using: &random) {
                case 0, 1:
                    statements.append(("DELETE FROM item WHERE key = ?", [key]))
                case 2:
                    let newKey = Self.keys.randomElement(using: &random)!
                    statements.append(("UPDATE OR REPLACE item SET key = ? WHERE key = ?", [newKey, key]))
                case 3:
                    statements.append(("UPDATE item SET value = ?", [value]))
                default:
                    statements.append(("INSERT OR REPLACE INTO item (key, value) VALUES (?, ?)", [key, value]))
                }
            }
            states.append(try await writer.write { [statements] db in
                for (sql, arguments) in statements { try db.execute(sql: sql, arguments: arguments) }
                return try Self.fetchState(db)
            })
        }
        let final = states.last!
        for (index, recorder) in recorders.enumerated() {
            // Wait until the differences lead to the final state.
            let values = try await recorder.wait { values in
                values.reduce(State()) { Self.apply($1, to: $0) } == final
            }
            // Each difference goes from the state the previous ones lead to,
            // to a later committed state.
            var stateIndex = 0
            var deliveredStates: [Int] = []
            for (valueIndex, difference) in values.enumerated() {
                let next = Self.apply(difference, to: states[stateIndex])
                guard let nextIndex = states[(stateIndex + 1)...].firstIndex(of: next) else {
                    Issue.record("observation \(index), value \(valueIndex): \(Self.describe(difference)) leads to no later state")
                    break
                }
                #expect(Self.describe(difference) == Self.difference(from: states[stateIndex], to: next),
                        "observation \(index), value \(valueIndex)")
                stateIndex = nextIndex
                deliveredStates.append(nextIndex)
            }
            if kind != .pool {
                // No coalescing on a queue: one difference per state change.
                let changes = states.indices.dropFirst().filter { states[$0] != states[$0 - 1] }
                #expect(deliveredStates == changes, "observation \(index)")
            }
        }
    }
}
