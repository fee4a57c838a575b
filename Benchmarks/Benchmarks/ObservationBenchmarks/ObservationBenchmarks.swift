import Benchmark
import Foundation
import Synchronization

// The observation benchmarks of issue 5: ReactiveSQLite against GRDB 7.10
// (the baseline) doing the same work in the same run, each library on its own
// database file (WAL, `synchronous = NORMAL`) in a temporary directory.
// Names end with the library (`...GRDB`, `...ReactiveSQLite`): package-benchmark
// runs benchmarks in name order, each in its own process, so the two
// libraries run one after the other under the same load.
//
// Every wait for a value is a semaphore signalled by the observation's
// `onChange`, never a sleep; each wait checks the value it gets.

/// The SQL of every benchmark, the same for both libraries.
enum ObservationInputs {
    static let createTablesSQL = """
        CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
        CREATE TABLE team(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE item(id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, name TEXT NOT NULL, price INTEGER NOT NULL);
        CREATE INDEX item_owner ON item(owner)
        """
    static let insertPlayerSQL = "INSERT INTO player (id, name, score) VALUES (?, 'Arthur', 0)"
    static let insertTeamSQL = "INSERT INTO team (id, name) VALUES (?, 'Reds')"
    static let incrementScoreSQL = "UPDATE player SET score = score + 1 WHERE id = ?"
    static let deletePlayersSQL = "DELETE FROM player WHERE id > ?"
    static let insertItemSQL = "INSERT INTO item (id, owner, name, price) VALUES (?, ?, 'pen', 0)"
    static let incrementPriceSQL = "UPDATE item SET price = price + 1 WHERE id = ?"
    /// The observed request of the values-index benchmarks.
    static let itemsOfOwnerSQL = "SELECT * FROM item WHERE owner = ?"
}

/// A directory of this process, removed when it exits.
let directory: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("ObservationBenchmarks-\(ProcessInfo.processInfo.processIdentifier)").path
    try? FileManager.default.removeItem(atPath: path)
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: directory) }
    return path
}()

/// The two libraries, each making a fresh store on a new file.
let libraries: [(name: String, makeStore: @Sendable (StoreKind) throws -> any ObservationStore)] = [
    ("GRDB", { try GRDBObservationStore(path: directory + "/grdb-\(UUID().uuidString).sqlite", kind: $0) }),
    (
        "ReactiveSQLite",
        { try ReactiveSQLiteObservationStore(path: directory + "/reactivesqlite-\(UUID().uuidString).sqlite", kind: $0) }
    ),
]

/// The world of a benchmark: a store and its running observations.
final class Fixture {
    let store: any ObservationStore
    var cancellables: [any BenchmarkCancellable] = []
    /// What the latest write should make the observed value reach.
    var expected = 0
    /// The latest value of the observation the benchmark waits for.
    let latest = LatestValue()
    let arrivals = Arrivals()
    /// The count every subscriber of a shared observation must deliver next.
    let sharedExpected = ExpectedCount()

    init(store: any ObservationStore) {
        self.store = store
    }

    /// Starts `count` observations of players 1 ... `count` (or of teams)
    /// and waits for their first values. The observation of player 1, if
    /// any, also reports its later values to `latest`.
    func observeRows(count: Int, ofTeams: Bool = false) {
        guard count > 0 else { return }
        arrivals.expect(count)
        let arrivals = self.arrivals
        let latest = self.latest
        for id in 1...Int64(count) {
            if ofTeams {
                cancellables.append(store.observeTeam(id: id) { _ in arrivals.arrive() })
            } else if id == 1 {
                cancellables.append(store.observePlayer(id: id) { score in
                    if score == 0 { arrivals.arrive() } else { latest.receive(score) }
                })
            } else {
                cancellables.append(store.observePlayer(id: id) { _ in arrivals.arrive() })
            }
        }
        arrivals.wait()
    }

    /// Starts `count` observations of the items of owners 1 ... `count`
    /// (`SELECT * FROM item WHERE owner = ?`) and waits for their first
    /// values. The observation of owner 1 also reports the later sums of
    /// its prices to `latest`.
    func observeItems(count: Int) {
        arrivals.expect(count)
        let arrivals = self.arrivals
        let latest = self.latest
        for owner in 1...Int64(count) {
            // GRDB's pool may deliver a first value twice: one arrival each.
            let arrived = Atomic<Bool>(false)
            cancellables.append(store.observeItems(owner: owner) { sum in
                if sum > 0 {
                    latest.receive(sum)
                } else if !arrived.exchange(true, ordering: .relaxed) {
                    arrivals.arrive()
                }
            })
        }
        arrivals.wait()
    }

    func cancelAll() throws {
        for cancellable in cancellables { cancellable.cancel() }
        cancellables = []
        try store.barrier()
    }
}

/// The value the subscribers of a shared observation must deliver next.
final class ExpectedCount: Sendable {
    let value = Atomic<Int>(0)
}

func configuration(seconds: Int, maxIterations: Int, warmup: Int = 3) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: warmup,
        maxDuration: .seconds(seconds),
        maxIterations: maxIterations
    )
}

/// The rows of `player` in the write-cost benchmarks: observations watch
/// 1 ... N (N <= 10 000), and the unwatched update touches the last one.
let playerCount = 20_000
let unwatchedID = Int64(playerCount)

let benchmarks: @Sendable () -> Void = {
    registerFilterWorkloadBenchmarks()
    for (library, makeStore) in libraries {
        // 1. Commit-to-value latency: one `trackingCount` of `player`; each
        // iteration inserts one row and waits until the observation delivers
        // the new count, from before `write` to the delivery.
        for kind in StoreKind.allCases {
            Benchmark(
                "Observation.Latency.\(kind.rawValue).\(library)",
                configuration: configuration(seconds: 3, maxIterations: 3_000, warmup: 20)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                fixture.expected += 1
                try! fixture.store.insertPlayer()
                fixture.latest.wait(forAtLeast: fixture.expected)
            } setup: {
                let fixture = Fixture(store: try makeStore(kind))
                let latest = fixture.latest
                fixture.cancellables.append(fixture.store.observePlayerCount { latest.receive($0) })
                latest.wait(forAtLeast: 0)
                return fixture
            }
        }

        // 2. Write cost against the number of observations: N `trackingOne`
        // observations of players 1 ... N in a pool; one single-row UPDATE
        // of a row none of them watches, or of player 1 until its
        // observation delivers the new score.
        for count in [0, 1, 100, 1_000, 10_000] {
            let name = "N=\(count).\(library)"
            // GRDB checks every observation on every write: bound its time.
            let seconds = count >= 1_000 ? 5 : 2
            Benchmark(
                "Observation.UpdateUnwatched.\(name)",
                configuration: configuration(seconds: seconds, maxIterations: 2_000)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                try! fixture.store.incrementScore(id: unwatchedID)
            } setup: {
                let fixture = Fixture(store: try makeStore(.pool))
                try fixture.store.fill(playerCount: playerCount, teamCount: 0)
                fixture.observeRows(count: count)
                return fixture
            }
            guard count > 0 else { continue }
            Benchmark(
                "Observation.UpdateWatched.\(name)",
                configuration: configuration(seconds: seconds, maxIterations: 2_000)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                fixture.expected += 1
                try! fixture.store.incrementScore(id: 1)
                fixture.latest.wait(forAtLeast: fixture.expected)
            } setup: {
                let fixture = Fixture(store: try makeStore(.pool))
                try fixture.store.fill(playerCount: playerCount, teamCount: 0)
                fixture.observeRows(count: count)
                return fixture
            }
        }

        #if os(Linux)
        // 2b. The watched update again, with the process confined to one CPU
        // (`confineProcessToOneCPU`): the same work, without the wake-ups of
        // halted virtual CPUs that the value's hand-offs between threads
        // (writer, reader, reduction queue, delivery queue, this thread) may
        // cost on several CPUs. A diagnostic of the watched update's latency,
        // for both libraries alike.
        for count in [1, 1_000] {
            Benchmark(
                "Observation.UpdateWatchedOneCPU.N=\(count).\(library)",
                configuration: configuration(seconds: count >= 1_000 ? 5 : 2, maxIterations: 2_000)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                fixture.expected += 1
                try! fixture.store.incrementScore(id: 1)
                fixture.latest.wait(forAtLeast: fixture.expected)
            } setup: {
                guard confineProcessToOneCPU() != nil else { fatalError("could not confine the process to one CPU") }
                let fixture = Fixture(store: try makeStore(.pool))
                try fixture.store.fill(playerCount: playerCount, teamCount: 0)
                fixture.observeRows(count: count)
                return fixture
            }
        }
        #endif

        // 3. A 10 000-row INSERT transaction in `player` with N observations
        // of other rows of `player` (Rows) or of rows of `team` (OtherTable),
        // in a pool. The inserted rows are deleted after each iteration,
        // outside measurement.
        for (variant, ofTeams) in [("Rows", false), ("OtherTable", true)] {
            for count in [0, 1, 100, 1_000] {
                Benchmark(
                    "Observation.Insert10000.\(variant).N=\(count).\(library)",
                    configuration: configuration(seconds: count >= 1_000 ? 10 : 4, maxIterations: 100, warmup: 1)
                ) { (benchmark: Benchmark, fixture: Fixture) in
                    benchmark.startMeasurement()
                    try! fixture.store.insertPlayers(100_001...110_000)
                    benchmark.stopMeasurement()
                    try! fixture.store.deletePlayers(after: 100_000)
                } setup: {
                    let fixture = Fixture(store: try makeStore(.pool))
                    try fixture.store.fill(playerCount: 1_000, teamCount: 1_000)
                    fixture.observeRows(count: count, ofTeams: ofTeams)
                    return fixture
                }
            }
        }

        // 5. A shared observation (issue 32): one `trackingCount` of
        // `player` shared by 100 subscribers, against one plain observation,
        // in a pool; each iteration inserts one row and waits until every
        // subscriber (the one observation) has the new count.
        for subscribers in [0, 100] {
            let name = subscribers == 0 ? "Plain" : "Subscribers=\(subscribers)"
            Benchmark(
                "Observation.Shared.\(name).\(library)",
                configuration: configuration(seconds: 3, maxIterations: 3_000, warmup: 20)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                fixture.expected += 1
                fixture.sharedExpected.value.store(fixture.expected, ordering: .releasing)
                fixture.arrivals.expect(max(subscribers, 1))
                try! fixture.store.insertPlayer()
                fixture.arrivals.wait()
            } setup: {
                let fixture = Fixture(store: try makeStore(.pool))
                let arrivals = fixture.arrivals
                let expected = fixture.sharedExpected
                // A repeated earlier value (GRDB's pool may deliver its first
                // value twice) is no arrival; a later one is a bug.
                let onChange: @Sendable (Int) -> Void = { count in
                    let awaited = expected.value.load(ordering: .acquiring)
                    if count == awaited {
                        arrivals.arrive()
                    } else if count > awaited {
                        fatalError("count \(count), expected \(awaited)")
                    }
                }
                arrivals.expect(max(subscribers, 1))
                if subscribers == 0 {
                    fixture.cancellables.append(fixture.store.observePlayerCount(onChange))
                } else {
                    fixture.cancellables += fixture.store.observeSharedPlayerCount(subscribers: subscribers, onChange)
                }
                arrivals.wait()
                return fixture
            }
        }

        // 6. The values index (issue 33, point 2): N observations of
        // `SELECT * FROM item WHERE owner = ?`, owners 1 ... N, in a pool
        // (two items per owner, owners 0 ... 10 000); a single-row UPDATE of
        // an item of owner 0, whom nobody watches (Write: the write alone),
        // or of owner 1 until its observation delivers the new prices
        // (Delivery). Both libraries observe records decoded by column index.
        for count in [100, 1_000, 10_000] {
            let name = "N=\(count).\(library)"
            // GRDB fetches every observation of `item` after each write.
            let seconds = count >= 1_000 ? 5 : 2
            Benchmark(
                "Observation.Pinned.Write.\(name)",
                configuration: configuration(seconds: seconds, maxIterations: 2_000)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                try! fixture.store.incrementPrice(itemID: 1)
            } setup: {
                let fixture = Fixture(store: try makeStore(.pool))
                try fixture.store.fillItems(owners: 10_000)
                fixture.observeItems(count: count)
                return fixture
            }
            Benchmark(
                "Observation.Pinned.Delivery.\(name)",
                configuration: configuration(seconds: seconds, maxIterations: 2_000)
            ) { (benchmark: Benchmark, fixture: Fixture) in
                fixture.expected += 1
                try! fixture.store.incrementPrice(itemID: 3)
                fixture.latest.wait(forAtLeast: fixture.expected)
            } setup: {
                let fixture = Fixture(store: try makeStore(.pool))
                try fixture.store.fillItems(owners: 10_000)
                fixture.observeItems(count: count)
                return fixture
            }
        }

        // 4. Time to start 1 000 `trackingOne` observations of distinct
        // players in a pool, until each has delivered its first value.
        // Cancelling them is outside measurement.
        Benchmark(
            "Observation.Start1000.\(library)",
            configuration: configuration(seconds: 5, maxIterations: 100, warmup: 1)
        ) { (benchmark: Benchmark, fixture: Fixture) in
            benchmark.startMeasurement()
            fixture.observeRows(count: 1_000)
            benchmark.stopMeasurement()
            try! fixture.cancelAll()
        } setup: {
            let fixture = Fixture(store: try makeStore(.pool))
            try fixture.store.fill(playerCount: 1_000, teamCount: 0)
            return fixture
        }
    }
}
