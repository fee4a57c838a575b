import Dispatch
import Synchronization

/// The connection a read benchmark runs on. Both libraries get the same
/// durability, set explicitly in `Configuration.prepareDatabase` on every
/// connection: WAL mode (the pool's, set by `PRAGMA journal_mode = WAL` for
/// the queue) and `synchronous = NORMAL`. Each store checks its writer
/// reports them before any measurement.
enum StoreKind: String, CaseIterable, Sendable {
    case queue = "Queue"
    case pool = "Pool"

    /// The SQL that `prepareDatabase` runs, the same in both libraries.
    var prepareSQL: String {
        switch self {
        case .queue: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"
        case .pool: "PRAGMA synchronous = NORMAL"
        }
    }
}

/// What the read benchmarks observe, the same request in both libraries:
/// `Player.orderByPrimaryKey()` (`SELECT * FROM player ORDER BY id`).
enum ObservedValue: String, Sendable {
    /// `trackingAll` of a record decoded by column index (`init(row:)`
    /// reading `row[0]`, `row[1]`, `row[2]`).
    case allByIndex = "AllByIndex"
    /// `trackingAll` of a `Decodable` record, each library's own decoding.
    case allDecodable = "AllDecodable"
    /// Ours only: `trackingSetDifferences` of the record decoded by index.
    case setDifferencesByIndex = "SetDifferencesByIndex"
    /// Ours only: `trackingSetDifferences` of the `Decodable` record.
    case setDifferencesDecodable = "SetDifferencesDecodable"
}

/// What one delivered value says, computed in `onChange` in O(1): its
/// number of records, the id of its last record, and the score of the
/// record whose id is `ValueWaiter.watchedID` (-1 when absent).
struct ValueSummary: Sendable, Equatable {
    var count: Int
    var lastID: Int64
    var watchedScore: Int
}

/// The schema and data of every read benchmark, the same in both libraries.
enum ReadInputs {
    static let createTableSQL = "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT, score INTEGER)"
    static let insertSQL = "INSERT INTO player (id, name, score) VALUES (?, ?, ?)"
    static let incrementScoreSQL = "UPDATE player SET score = score + 1 WHERE id = ?"

    static func name(_ id: Int64) -> String { "Player \(id)" }
    static func initialScore(_ id: Int64) -> Int { Int(id % 1_000) }
}

/// One library's side of the read benchmarks: the same calls in
/// `ReactiveSQLiteReadStore` and `GRDBReadStore`, line for line.
protocol ReadStore: AnyObject, Sendable {
    /// Opens a database file configured for `kind` (see `StoreKind`),
    /// creates `player` and inserts players 1 ... `rowCount`.
    init(path: String, kind: StoreKind, rowCount: Int) throws

    /// Opens a database file with the library's default `DatabasePool`
    /// configuration, and inserts players 1 ... `rowCount`.
    init(defaultPoolAt path: String, rowCount: Int) throws

    /// The writer's `PRAGMA synchronous` and `PRAGMA journal_mode`.
    func durability() throws -> (synchronous: Int, journalMode: String)

    /// Starts an observation of `value` delivering on the store's serial
    /// queue (`.async(onQueue:)`), and reports each value to `waiter`.
    /// Nil when the library has no such observation.
    func start(_ value: ObservedValue, reportingTo waiter: ValueWaiter) -> (any ReadCancellable)?

    /// `UPDATE player SET score = score + 1 WHERE id = ?` in one `write`,
    /// through a cached statement. Returns the number of changed rows.
    func incrementScore(id: Int64) throws -> Int

    /// Waits until every access enqueued on the writer and every delivery
    /// enqueued on the store's queue have run.
    func barrier() throws
}

/// An observation's cancellable, in either library.
protocol ReadCancellable: AnyObject {
    func cancel()
}

/// The latest value an observation delivered, for a benchmark waiting for
/// the value it expects: a semaphore signalled by `onChange`, never a sleep.
final class ValueWaiter: Sendable {
    private let latest = Mutex<ValueSummary?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)
    private let watched = Atomic<Int64>(1)

    /// The id whose score the summaries report.
    var watchedID: Int64 {
        get { watched.load(ordering: .acquiring) }
        set { watched.store(newValue, ordering: .releasing) }
    }

    /// Called by `onChange`, with the value's summary.
    func receive(_ summary: ValueSummary) {
        latest.withLock { $0 = summary }
        semaphore.signal()
    }

    /// Blocks until a delivered value satisfies `isExpected` (one semaphore
    /// wait per delivered value), and returns it.
    func wait(until isExpected: (ValueSummary) -> Bool) -> ValueSummary {
        while true {
            guard semaphore.wait(timeout: .now() + .seconds(120)) == .success else {
                fatalError("no expected value within 2 minutes (latest: \(String(describing: latest.withLock { $0 })))")
            }
            if let summary = latest.withLock({ $0 }), isExpected(summary) { return summary }
        }
    }

    /// Forgets the latest value, and any signal left unconsumed.
    func reset() {
        latest.withLock { $0 = nil }
        while semaphore.wait(timeout: .now()) == .success {}
    }
}
