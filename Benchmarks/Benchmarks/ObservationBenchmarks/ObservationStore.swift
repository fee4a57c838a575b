import Dispatch
import Synchronization

/// The connection an observation benchmark runs on: a `DatabaseQueue` or a
/// `DatabasePool`, both on a file in WAL mode with `synchronous = NORMAL`
/// (a pool's default in GRDB, set explicitly everywhere else), so that no
/// commit waits for the disk and the figures measure the libraries.
enum StoreKind: String, CaseIterable, Sendable {
    case queue = "Queue"
    case pool = "Pool"
}

/// What an observation benchmark does, through one library: the same calls
/// in `ReactiveSQLiteObservationStore` and `GRDBObservationStore`, line for
/// line.
///
/// Schema: `player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)`,
/// `team(id INTEGER PRIMARY KEY, name TEXT NOT NULL)` and
/// `item(id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, name TEXT NOT NULL, price INTEGER NOT NULL)`. Observations
/// deliver asynchronously on one serial queue of the store
/// (`.async(onQueue:)` in both libraries).
protocol ObservationStore: AnyObject, Sendable {
    init(path: String, kind: StoreKind) throws

    /// Inserts players 1 ... `playerCount` and teams 1 ... `teamCount`,
    /// every score 0, in one transaction.
    func fill(playerCount: Int, teamCount: Int) throws

    /// Observes the number of players (`trackingCount`).
    func observePlayerCount(_ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable

    /// One observation of the number of players (as `observePlayerCount`)
    /// shared by `subscribers` subscribers (`shared(in:scheduling:)`, extent
    /// `.whileObserved`, delivering on the store's queue), each of which
    /// calls `onChange` with every value. The cancellables of the
    /// subscriptions.
    func observeSharedPlayerCount(
        subscribers: Int, _ onChange: @escaping @Sendable (Int) -> Void
    ) -> [any BenchmarkCancellable]

    /// Observes one player by primary key (`trackingOne(Player.filter(key:))`):
    /// its score, or -1 when it does not exist.
    func observePlayer(id: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable

    /// Observes one team by primary key: 0 when it exists, -1 otherwise.
    func observeTeam(id: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable

    /// Inserts one player (`id` NULL, so SQLite picks the next one) in one
    /// transaction, through a cached statement.
    func insertPlayer() throws

    /// `UPDATE player SET score = score + 1 WHERE id = ?` in one transaction,
    /// through a cached statement.
    func incrementScore(id: Int64) throws

    /// Inserts players `ids` in one transaction, through a cached statement.
    func insertPlayers(_ ids: ClosedRange<Int64>) throws

    /// Deletes the players whose id is greater than `id`, in one transaction.
    func deletePlayers(after id: Int64) throws

    /// Inserts two items for each owner 0 ... `owners` (ids 2 × owner + 1
    /// and + 2), every price 0, in one transaction.
    func fillItems(owners: Int) throws

    /// Observes the items of one owner (`SELECT * FROM item WHERE owner = ?`,
    /// as records decoded by column index): the sum of their prices.
    func observeItems(owner: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable

    /// `UPDATE item SET price = price + 1 WHERE id = ?` in one transaction,
    /// through a cached statement.
    func incrementPrice(itemID: Int64) throws

    /// A write that does nothing: it runs after every writer access enqueued
    /// before it (cancelled observations leave the writer in such accesses).
    func barrier() throws
}

/// An observation's cancellable, in either library.
protocol BenchmarkCancellable: AnyObject {
    func cancel()
}

/// The latest value an observation delivered, for a benchmark waiting
/// until a value reaches what its write should produce.
final class LatestValue: Sendable {
    private let latest = Atomic<Int>(Int.min)
    /// Signalled once per delivered value.
    private let semaphore = DispatchSemaphore(value: 0)

    /// Called by the observation's `onChange`.
    func receive(_ value: Int) {
        latest.store(value, ordering: .releasing)
        semaphore.signal()
    }

    /// Blocks until a delivered value is at least `value` (one semaphore
    /// wait per delivered value, no polling).
    func wait(forAtLeast value: Int) {
        while latest.load(ordering: .acquiring) < value {
            guard semaphore.wait(timeout: .now() + .seconds(120)) == .success else {
                fatalError("no value >= \(value) within 2 minutes (latest: \(latest.load(ordering: .acquiring)))")
            }
        }
    }
}

/// Counts the first values of many observations, and lets a benchmark wait
/// until all of them have arrived.
final class Arrivals: Sendable {
    private let count = Atomic<Int>(0)
    private let expected = Atomic<Int>(0)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Expects `count` more arrivals.
    func expect(_ count: Int) {
        self.count.store(0, ordering: .relaxed)
        expected.store(count, ordering: .releasing)
    }

    func arrive() {
        if count.add(1, ordering: .acquiringAndReleasing).newValue == expected.load(ordering: .acquiring) {
            semaphore.signal()
        }
    }

    /// Blocks until the expected number of arrivals happened.
    func wait() {
        guard semaphore.wait(timeout: .now() + .seconds(600)) == .success else {
            fatalError("only \(count.load(ordering: .acquiring)) of \(expected.load(ordering: .acquiring)) first values within 10 minutes")
        }
    }
}
