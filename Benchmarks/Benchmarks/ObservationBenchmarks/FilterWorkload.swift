import Benchmark
import BenchmarkSupport
import Dispatch
import Foundation
import Synchronization

// Issue 33's workload of filters: 100 observations of one-table requests
// with filters (owners, statuses, price ranges, name prefixes, and pairs
// of them) on a 10 000-row table, under random single-row updates. Each
// iteration is a batch of 100 writes, each followed by a barrier (every
// delivery it caused has arrived); its custom metrics count the
// deliveries, and the deliveries that carried the value the observation
// had already (unchanged), in per mille of the deliveries.

/// The workload, the same for every store.
enum FilterWorkload {
    static let rowCount = 10_000
    static let observationCount = 100
    static let writesPerIteration = 100

    static let createTableSQL = """
        CREATE TABLE shop(id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, status TEXT NOT NULL, price INTEGER NOT NULL, name TEXT NOT NULL);
        CREATE INDEX shop_owner ON shop(owner);
        CREATE INDEX shop_status ON shop(status);
        CREATE INDEX shop_price ON shop(price);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
        INSERT INTO shop SELECT i, i % 100, 's' || (i % 50), (i * 7919) % 10000, 'n' || i FROM n;
        """

    /// The observed queries, from a seeded generator.
    static let queries: [String] = {
        var random = SplitMix64(seed: 33)
        return (0..<observationCount).map { _ in
            let owner = Int.random(in: 0..<100, using: &random)
            let status = Int.random(in: 0..<50, using: &random)
            let price = Int.random(in: 0..<9_900, using: &random)
            let prefix = Int.random(in: 10..<100, using: &random)
            let clause = switch Int.random(in: 0..<6, using: &random) {
            case 0: "owner = \(owner)"
            case 1: "status IN ('s\(status)', 's\((status + 7) % 50)')"
            case 2: "price BETWEEN \(price) AND \(price + 60)"
            case 3: "name LIKE 'n\(prefix)%'"
            case 4: "owner = \(owner) AND price > \(price)"
            default: "status = 's\(status)' AND name LIKE 'n\(prefix % 10)%'"
            }
            return "SELECT * FROM shop WHERE \(clause)"
        }
    }()

    /// One random single-row update.
    static func randomWrite(using random: inout SplitMix64) -> String {
        let id = Int.random(in: 1...rowCount, using: &random)
        return switch Int.random(in: 0..<4, using: &random) {
        case 0: "UPDATE shop SET owner = \(Int.random(in: 0..<100, using: &random)) WHERE id = \(id)"
        case 1: "UPDATE shop SET status = 's\(Int.random(in: 0..<50, using: &random))' WHERE id = \(id)"
        case 2: "UPDATE shop SET price = \(Int.random(in: 0..<10_000, using: &random)) WHERE id = \(id)"
        default: "UPDATE shop SET name = 'n\(Int.random(in: 1...20_000, using: &random))' WHERE id = \(id)"
        }
    }
}

/// A row of `shop`, decoded by column index in both libraries.
struct ShopRow: Equatable, Sendable {
    var id: Int64
    var owner: Int64
    var status: String
    var price: Int64
    var name: String
}

/// Counts deliveries, and those whose value equals the observation's previous one.
final class DeliveryCounter: Sendable {
    private let state = Mutex<(last: [Int: [ShopRow]], deliveries: Int, unchanged: Int)>(([:], 0, 0))

    func receive(_ rows: [ShopRow], observation: Int) {
        state.withLock { state in
            if let last = state.last[observation] {
                state.deliveries += 1
                if last == rows { state.unchanged += 1 }
            }
            state.last[observation] = rows
        }
    }

    /// The deliveries after the first values, and the unchanged ones; resets both.
    func take() -> (deliveries: Int, unchanged: Int) {
        state.withLock { state in
            defer { (state.deliveries, state.unchanged) = (0, 0) }
            return (state.deliveries, state.unchanged)
        }
    }

    var firstValueCount: Int { state.withLock { $0.last.count } }
}

/// What the workload needs of a library: a `DatabaseQueue` in WAL mode
/// (`synchronous = NORMAL`), observations of rows delivered on one queue,
/// writes, and a barrier after which every delivery a write caused arrived.
protocol FilterWorkloadStore: AnyObject, Sendable {
    func execute(_ sql: String) throws
    func observe(_ sql: String, _ onChange: @escaping @Sendable ([ShopRow]) -> Void) -> any BenchmarkCancellable
    /// Waits until every value fetched so far is delivered.
    func barrier() throws
}

private let deliveriesMetric = BenchmarkMetric.custom("Deliveries per 100 writes", useScalingFactor: false)
private let unchangedMetric = BenchmarkMetric.custom("Unchanged deliveries (per mille)", useScalingFactor: false)

/// The stores of the workload: ours with filters (the pre-update hook,
/// the default), ours without (`.updateHookOnly`: no old values, so no
/// filter: the figure before issue 33), and GRDB.
let filterWorkloadStores: [(name: String, make: @Sendable (String) throws -> any FilterWorkloadStore)] = [
    ("GRDB", { try GRDBFilterWorkloadStore(path: $0) }),
    ("ReactiveSQLite", { try ReactiveSQLiteFilterWorkloadStore(path: $0, filters: true) }),
    ("ReactiveSQLiteWithoutFilters", { try ReactiveSQLiteFilterWorkloadStore(path: $0, filters: false) }),
]

func registerFilterWorkloadBenchmarks() {
    for (name, make) in filterWorkloadStores {
        Benchmark(
            "Observation.Filters.RandomWrites.\(name)",
            configuration: Benchmark.Configuration(
                metrics: [.wallClock, deliveriesMetric, unchangedMetric],
                timeUnits: .milliseconds,
                warmupIterations: 1,
                maxDuration: .seconds(10),
                maxIterations: 30)
        ) { (benchmark: Benchmark, fixture: FilterWorkloadFixture) in
            benchmark.startMeasurement()
            for _ in 0..<FilterWorkload.writesPerIteration {
                try! fixture.store.execute(FilterWorkload.randomWrite(using: &fixture.random))
                try! fixture.store.barrier()
            }
            benchmark.stopMeasurement()
            let (deliveries, unchanged) = fixture.counter.take()
            benchmark.measurement(deliveriesMetric, deliveries)
            benchmark.measurement(unchangedMetric, deliveries == 0 ? 0 : unchanged * 1_000 / deliveries)
        } setup: {
            let store = try make(directory + "/filters-\(UUID().uuidString).sqlite")
            try store.execute(FilterWorkload.createTableSQL)
            let fixture = FilterWorkloadFixture(store: store)
            for (index, sql) in FilterWorkload.queries.enumerated() {
                let counter = fixture.counter
                fixture.cancellables.append(store.observe(sql) { counter.receive($0, observation: index) })
            }
            // Every first value.
            while fixture.counter.firstValueCount < FilterWorkload.observationCount { try store.barrier() }
            _ = fixture.counter.take()
            return fixture
        }
    }
}

final class FilterWorkloadFixture {
    let store: any FilterWorkloadStore
    let counter = DeliveryCounter()
    var cancellables: [any BenchmarkCancellable] = []
    var random = SplitMix64(seed: 3_333)

    init(store: any FilterWorkloadStore) {
        self.store = store
    }
}
