import Dispatch
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

// Helpers of the observation tests. Threads and tasks meet through
// continuations, conditions and `Recorder` waits, each bounded by a timeout
// that fails the test instead of hanging it. No sleep decides an outcome.

/// Both change-tracking paths: the pre-update hook and the update hook.
let changeTrackings: [Configuration.ChangeTracking] = [.automatic, .updateHookOnly]

/// Whether the tests run under ThreadSanitizer, which makes them several
/// times slower: long tests do less work then.
let isRunningUnderThreadSanitizer = dlsym(nil, "__tsan_init") != nil

/// Runs a blocking closure on a thread of its own (neither a dispatch
/// thread nor a cooperative one, whose pools are small on a small machine),
/// and lets a task await its result.
final class BackgroundThread<Value: Sendable>: Sendable {
    private let result = Recorder<Result<Value, any Error>>()

    init(_ body: @escaping @Sendable () throws -> Value) {
        let result = self.result
        Thread { result.append(Result { try body() }) }.start()
    }

    /// The closure's result, or its error.
    ///
    /// - Throws: `ObservationTimeout` when it does not end in time.
    func value(timeout: Duration = observationPatience) async throws -> Value {
        try await result.wait(for: 1, timeout: timeout)[0].get()
    }
}

/// A player, the record of most observation tests: table `player`.
struct ObservedPlayer: FetchableRecord, TableRecord, Equatable, Sendable, CustomStringConvertible {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int

    init(id: Int64, name: String, score: Int) {
        self.id = id
        self.name = name
        self.score = score
    }

    init(row: Row) throws {
        id = try row["id"]
        name = try row["name"]
        score = try row["score"]
    }

    var description: String { "\(id):\(name):\(score)" }
}

/// The same player, not `Equatable`: for `removeDuplicates: true`.
struct UnequatablePlayer: FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int

    init(row: Row) throws {
        id = try row["id"]
        name = try row["name"]
        score = try row["score"]
    }
}

/// The table of `ObservedPlayer`, with three players.
let playerSchemaSQL = """
    CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
    INSERT INTO player (id, name, score) VALUES (1, 'Arthur', 100), (2, 'Barbara', 200), (3, 'Craig', 150);
    """

/// A counter shared between threads.
final class ChangeCounter: Sendable {
    private let count = Locked(0)
    init() {}
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.value }
}

/// Starts a region observation that counts its calls.
func countChanges(
    in writer: any DatabaseWriter, of regions: [any DatabaseRegionConvertible],
    sourceLocation: SourceLocation = #_sourceLocation
) -> (ChangeCounter, AnyDatabaseCancellable) {
    let counter = ChangeCounter()
    let cancellable = DatabaseRegionObservation(tracking: regions).start(in: writer) { error in
        Issue.record(error, sourceLocation: sourceLocation)
    } onChange: { _ in
        counter.increment()
    }
    return (counter, cancellable)
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

