import Benchmark
import BenchmarkSupport
import Foundation

// The read benchmarks of issue 16: ReactiveSQLite against GRDB 7.10 (the
// baseline) observing the same table in the same run, each library on its
// own database file in a temporary directory of the benchmark process.
//
// Both libraries have the same schema, `player(id INTEGER PRIMARY KEY, name
// TEXT, score INTEGER)`, the same rows (`Player <id>`, score id % 1000) and
// the same durability, set explicitly on both sides (`StoreKind`): WAL mode
// and `synchronous = NORMAL`, for the queue as for the pool. A comparison
// that is not like for like is worthless. The one exception is the write
// benchmark (`SingleRowWrite.DefaultPool`), which compares each library's
// default `DatabasePool`, and checks both write with `synchronous = NORMAL`.
//
// Names end with the library (`...GRDB`, `...ReactiveSQLite`): package-benchmark
// runs benchmarks in name order, each in its own process, so that the two
// libraries run one after the other under the same load. Every wait for a
// value is a semaphore signalled by the observation's `onChange` (values are
// delivered on a serial dispatch queue, `.async(onQueue:)` in both
// libraries), never a sleep; each iteration checks the value it waited for.

/// A directory of this process, removed when it exits.
let directory: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("ReadBenchmarks-\(ProcessInfo.processInfo.processIdentifier)").path
    try? FileManager.default.removeItem(atPath: path)
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: directory) }
    return path
}()

enum Library: String, CaseIterable, Sendable {
    case grdb = "GRDB"
    case reactiveSQLite = "ReactiveSQLite"

    /// A store on a new file, configured for `kind`, filled with `rowCount` players.
    func makeStore(kind: StoreKind, rowCount: Int) throws -> any ReadStore {
        let path = directory + "/\(rawValue)-\(UUID().uuidString).sqlite"
        switch self {
        case .grdb: return try GRDBReadStore(path: path, kind: kind, rowCount: rowCount)
        case .reactiveSQLite: return try ReactiveSQLiteReadStore(path: path, kind: kind, rowCount: rowCount)
        }
    }

    /// What this library observes: GRDB has no set-difference observation.
    var observedValues: [ObservedValue] {
        switch self {
        case .grdb: [.allByIndex, .allDecodable]
        case .reactiveSQLite: [.allByIndex, .allDecodable, .setDifferencesByIndex, .setDifferencesDecodable]
        }
    }
}

/// The world of a benchmark: a store, what its rows hold, and a running
/// observation for the commit-to-value benchmarks.
final class ReadFixture {
    let store: any ReadStore
    let rowCount: Int
    let waiter = ValueWaiter()
    /// The score of each player, index id - 1, as the writes make it.
    var scores: [Int]
    var cancellable: (any ReadCancellable)?
    private var random = SplitMix64(seed: 0x5EAD_B0A7)

    init(store: any ReadStore, rowCount: Int) {
        self.store = store
        self.rowCount = rowCount
        scores = (1...Int64(rowCount)).map(ReadInputs.initialScore)
        waiter.watchedID = Int64(rowCount / 2)
    }

    /// A player to update: seeded, the same in every run.
    func nextID() -> Int64 {
        Int64.random(in: 1...Int64(rowCount), using: &random)
    }

    /// Checks the durability the store's writer reports.
    func checkDurability(synchronous: Int, journalMode: String, _ name: String) throws {
        let durability = try store.durability()
        precondition(
            durability.synchronous == synchronous && durability.journalMode == journalMode,
            "\(name): synchronous \(durability.synchronous), journal mode \(durability.journalMode); "
                + "expected \(synchronous), \(journalMode)")
    }

    /// Checks a value of every player, as the writes left them.
    @inline(never)
    func check(_ summary: ValueSummary, _ name: String) {
        let expected = ValueSummary(
            count: rowCount, lastID: Int64(rowCount), watchedScore: scores[Int(waiter.watchedID) - 1])
        precondition(summary == expected, "\(name): \(summary), expected \(expected)")
    }
}

func configuration(rowCount: Int, maxIterations: Int? = nil) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: rowCount >= 100_000 ? 2 : 5,
        maxDuration: .seconds(rowCount >= 100_000 ? 3 : 2),
        maxIterations: maxIterations ?? (rowCount >= 100_000 ? 100 : 400)
    )
}

let benchmarks: @Sendable () -> Void = {
    for library in Library.allCases {
        for value in library.observedValues {
            for kind in StoreKind.allCases {
                for rowCount in [10_000, 100_000] {
                    let suffix = "\(kind.rawValue).n=\(rowCount).\(library.rawValue)"

                    // (i) Initial value: from `start` to the first value
                    // delivered. Cancelling is outside measurement, and
                    // followed by a barrier on the writer and the delivery
                    // queue.
                    let initialName = "Read.\(value.rawValue).Initial.\(suffix)"
                    Benchmark(initialName, configuration: configuration(rowCount: rowCount)) {
                        (benchmark: Benchmark, fixture: ReadFixture) in
                        fixture.waiter.reset()
                        benchmark.startMeasurement()
                        let cancellable = fixture.store.start(value, reportingTo: fixture.waiter)!
                        let summary = fixture.waiter.wait { _ in true }
                        benchmark.stopMeasurement()
                        fixture.check(summary, initialName)
                        cancellable.cancel()
                        try! fixture.store.barrier()
                    } setup: {
                        let fixture = ReadFixture(store: try library.makeStore(kind: kind, rowCount: rowCount), rowCount: rowCount)
                        try fixture.checkDurability(synchronous: 1, journalMode: "wal", initialName)
                        return fixture
                    }

                    // (ii) Commit-to-value, for `trackingAll`: one UPDATE of
                    // a random player's score in one `write`, then wait
                    // until the observation delivers the value that holds
                    // the new score, measured from before the write.
                    guard value == .allByIndex || value == .allDecodable else { continue }
                    let commitName = "Read.\(value.rawValue).CommitToValue.\(suffix)"
                    Benchmark(commitName, configuration: configuration(rowCount: rowCount)) {
                        (benchmark: Benchmark, fixture: ReadFixture) in
                        let id = fixture.nextID()
                        let score = fixture.scores[Int(id) - 1] + 1
                        fixture.scores[Int(id) - 1] = score
                        fixture.waiter.watchedID = id
                        let changedCount = try! fixture.store.incrementScore(id: id)
                        let summary = fixture.waiter.wait { $0.watchedScore == score }
                        benchmark.stopMeasurement()
                        precondition(changedCount == 1, "\(commitName): \(changedCount) rows changed")
                        fixture.check(summary, commitName)
                    } setup: {
                        let fixture = ReadFixture(store: try library.makeStore(kind: kind, rowCount: rowCount), rowCount: rowCount)
                        try fixture.checkDurability(synchronous: 1, journalMode: "wal", commitName)
                        fixture.cancellable = fixture.store.start(value, reportingTo: fixture.waiter)!
                        fixture.check(fixture.waiter.wait { _ in true }, commitName)
                        return fixture
                    }
                }
            }
        }
    }

    // A single-row write on a `DatabasePool` opened with each library's
    // default configuration: the one comparison of defaults against
    // defaults. Both write in WAL mode with `synchronous = NORMAL`, which
    // the setup checks. `ReactiveSQLiteSynchronousFull` (a diagnostic, no
    // target) is ours with `synchronous = FULL`, the default of our pools
    // before issue 16.
    let rowCount = 10_000
    let writers: [(name: String, synchronous: Int, makeStore: @Sendable (String) throws -> any ReadStore)] = [
        ("GRDB", 1, { try GRDBReadStore(defaultPoolAt: $0, rowCount: rowCount) }),
        ("ReactiveSQLite", 1, { try ReactiveSQLiteReadStore(defaultPoolAt: $0, rowCount: rowCount) }),
        ("ReactiveSQLiteSynchronousFull", 2, { try ReactiveSQLiteReadStore(synchronousFullPoolAt: $0, rowCount: rowCount) }),
    ]
    for (library, synchronous, makeStore) in writers {
        let name = "Read.SingleRowWrite.DefaultPool.\(library)"
        Benchmark(name, configuration: configuration(rowCount: rowCount, maxIterations: 5_000)) {
            (benchmark: Benchmark, fixture: ReadFixture) in
            let id = fixture.nextID()
            benchmark.startMeasurement()
            let changedCount = try! fixture.store.incrementScore(id: id)
            benchmark.stopMeasurement()
            precondition(changedCount == 1, "\(name): \(changedCount) rows changed")
        } setup: {
            let fixture = ReadFixture(
                store: try makeStore(directory + "/write-\(UUID().uuidString).sqlite"), rowCount: rowCount)
            try fixture.checkDurability(synchronous: synchronous, journalMode: "wal", name)
            return fixture
        }
    }
}
