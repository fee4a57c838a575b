#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
import Dispatch
import ReactiveSQLite
import ReactiveSQLiteCombine
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// A player: table `player`.
struct Player: FetchableRecord, TableRecord, Equatable, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(row: Row) throws {
        id = try row["id"]
        name = try row["name"]
    }
}

/// The `player` table, with three players.
let playerSchemaSQL = """
    CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    INSERT INTO player (id, name) VALUES (1, 'Arthur'), (2, 'Barbara'), (3, 'Craig');
    """

/// The number of players.
let playerCount = ValueObservation.trackingCount(Player.all())

/// A serial queue with a unique label, for `.async(onQueue:)`.
func makeDeliveryQueue() -> (DispatchQueue, String) {
    let label = "ReactiveSQLiteCombineTests.delivery.\(UInt64.random(in: 0...UInt64.max))"
    return (DispatchQueue(label: label), label)
}

extension DispatchQueue {
    /// Waits, without blocking a thread, until the blocks submitted so far ran.
    func drain() async {
        await withCheckedContinuation { continuation in async { continuation.resume() } }
    }
}

/// Whether `values` is an ordered subsequence of `expected`.
func isOrderedSubsequence<T: Equatable>(_ values: [T], of expected: [T]) -> Bool {
    var remaining = expected[...]
    for value in values {
        guard let index = remaining.firstIndex(of: value) else { return false }
        remaining = remaining[(index + 1)...]
    }
    return true
}

#endif
