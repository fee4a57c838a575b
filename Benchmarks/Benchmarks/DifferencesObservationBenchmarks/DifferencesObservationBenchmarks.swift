import Benchmark
import BenchmarkSupport
import Dispatch
import Foundation

// Set differences of a live query, ReactiveSQLite against GRDB 7.10 (the
// baseline). Each library has its own database file, filled with the same
// 100 000 rows of `player(id INTEGER PRIMARY KEY, name TEXT NOT NULL,
// score INTEGER NOT NULL)`, and observes `Player.orderByPrimaryKey()`:
//
// - ReactiveSQLite: `ValueObservation.trackingSetDifferences(Player.orderByPrimaryKey())`,
//   which refetches the changed rows only, and the same with the update
//   hook (`ReactiveSQLiteFullScan`), which scans the table at each commit;
// - GRDB: `ValueObservation.trackingConstantRegion { try Player.orderByPrimaryKey().fetchAll($0) }`
//   and a sorted merge of each array with the previous one (by id, `==` on
//   common ids) on the delivery queue: a refetch and a merge per commit.
//   Two records: `Decodable` (as ours), and a hand-written `init(row:)`
//   reading columns by index (GRDB's fastest decoding).
//
// One iteration updates the score of one random row in one transaction and
// waits for the `SetDifference` on the observation's delivery queue: the
// time from the start of the write (BEGIN, UPDATE, COMMIT: a few
// microseconds, the files use `synchronous = OFF` so that no fsync blurs the
// figures) to the delivered difference. Each iteration checks the
// difference: exactly one updated record, the row written, with its new
// score.
//
// Names put the library last, so that the two run one after the other.

let rowCount = 100_000
/// The row count of the large benchmarks (issue 21's first target).
let largeRowCount = 1_000_000

/// A directory of this process, removed when it exits.
let directory: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("DifferencesObservationBenchmarks-\(ProcessInfo.processInfo.processIdentifier)").path
    try? FileManager.default.removeItem(atPath: path)
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: directory) }
    return path
}()

/// A running observation of set differences, and the writes that feed it.
protocol DiffFixture: AnyObject {
    /// Sets the score of a row in one transaction and waits for the
    /// difference the observation delivers.
    func update(id: Int64, score: Int) throws -> UpdatedRecords
    /// Inserts a row of id `id` in one transaction and waits for the
    /// difference, then deletes it and waits for the next one.
    func insertThenDelete(id: Int64) throws -> (inserted: UpdatedRecords, deleted: UpdatedRecords)
}

/// What a delivered difference says: its counts, and the id and score of
/// its first updated record.
struct UpdatedRecords: Equatable {
    var insertedCount: Int
    var updatedCount: Int
    var deletedCount: Int
    var firstUpdated: (id: Int64, score: Int)?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.insertedCount == rhs.insertedCount && lhs.updatedCount == rhs.updatedCount
            && lhs.deletedCount == rhs.deletedCount && lhs.firstUpdated?.id == rhs.firstUpdated?.id
            && lhs.firstUpdated?.score == rhs.firstUpdated?.score
    }
}

/// The observations, started on first use (outside measurements).
nonisolated(unsafe) let reactiveSQLiteFixture: any DiffFixture = try! ReactiveSQLiteDiffFixture(
    path: directory + "/reactivesqlite.sqlite", rowCount: rowCount)
nonisolated(unsafe) let reactiveSQLiteFullScanFixture: any DiffFixture = try! ReactiveSQLiteFullScanDiffFixture(
    path: directory + "/reactivesqlite-full-scan.sqlite", rowCount: rowCount)
nonisolated(unsafe) let reactiveSQLiteDecodingFixture: any DiffFixture = try! ReactiveSQLiteDecodingDiffFixture(
    path: directory + "/reactivesqlite-decoding.sqlite", rowCount: rowCount)
nonisolated(unsafe) let grdbFixture: any DiffFixture = try! GRDBDiffFixture<GRDBPlayer>(
    path: directory + "/grdb.sqlite", rowCount: rowCount)
nonisolated(unsafe) let grdbRowFixture: any DiffFixture = try! GRDBDiffFixture<GRDBRowPlayer>(
    path: directory + "/grdb-row.sqlite", rowCount: rowCount)
nonisolated(unsafe) let largeReactiveSQLiteFixture: any DiffFixture = try! ReactiveSQLiteDiffFixture(
    path: directory + "/large-reactivesqlite.sqlite", rowCount: largeRowCount)
nonisolated(unsafe) let largeGRDBFixture: any DiffFixture = try! GRDBDiffFixture<GRDBPlayer>(
    path: directory + "/large-grdb.sqlite", rowCount: largeRowCount)
nonisolated(unsafe) let largeGRDBRowFixture: any DiffFixture = try! GRDBDiffFixture<GRDBRowPlayer>(
    path: directory + "/large-grdb-row.sqlite", rowCount: largeRowCount)
/// Issue 21's third target in process: another connection's commits.
nonisolated(unsafe) let largeExternalFixture: any DiffFixture = try! ExternalDiffFixture(
    path: directory + "/large-external.sqlite", rowCount: largeRowCount, mode: .walPool)
nonisolated(unsafe) let largeExternalRollbackFixture: any DiffFixture = try! ExternalDiffFixture(
    path: directory + "/large-external-rollback.sqlite", rowCount: largeRowCount, mode: .rollbackQueue)

/// The rows to update and their new scores: seeded, the same in every run.
/// Scores are above the initial ones (0 ..< 1000) and never repeat, so that
/// each update changes its row.
final class Updates: @unchecked Sendable {  // Used by one benchmark thread at a time.
    private var random = SplitMix64(seed: 0xD1FF_0B5E)
    private var nextScore = 1_000

    func next() -> (id: Int64, score: Int) {
        nextScore += 1
        return (Int64.random(in: 1...Int64(rowCount), using: &random), nextScore)
    }
}

@inline(never)
func check(_ actual: UpdatedRecords, id: Int64, score: Int, _ name: String) {
    let expected = UpdatedRecords(insertedCount: 0, updatedCount: 1, deletedCount: 0, firstUpdated: (id, score))
    precondition(actual == expected, "\(name): \(actual), expected \(expected)")
}

@inline(never)
func check(_ actual: (inserted: UpdatedRecords, deleted: UpdatedRecords), _ name: String) {
    let inserted = UpdatedRecords(insertedCount: 1, updatedCount: 0, deletedCount: 0, firstUpdated: nil)
    let deleted = UpdatedRecords(insertedCount: 0, updatedCount: 0, deletedCount: 1, firstUpdated: nil)
    precondition(actual.inserted == inserted && actual.deleted == deleted, "\(name): \(actual)")
}

let topRowsFixture: any TopRowsFixture = try! ReactiveSQLiteTopRowsFixture(
    path: directory + "/top-reactivesqlite.sqlite", rowCount: largeRowCount, refetches: false)
let topRowsRefetchFixture: any TopRowsFixture = try! ReactiveSQLiteTopRowsFixture(
    path: directory + "/top-reactivesqlite-refetch.sqlite", rowCount: largeRowCount, refetches: true)
let grdbTopRowsFixture: any TopRowsFixture = try! GRDBTopRowsFixture(
    path: directory + "/top-grdb.sqlite", rowCount: largeRowCount)

/// The changes of the leaderboard benchmarks: a row outside the window
/// that stays outside, a row that enters the window (a new best score),
/// and the best row leaving it (a score below every other).
enum TopRowsChange: String, CaseIterable {
    case outsideWindow = "OutsideWindow"
    case entersWindow = "EntersWindow"
    case leavesWindow = "LeavesWindow"
}

/// Seeded changes: the same in every run.
final class TopRowsChanges: @unchecked Sendable {  // Used by one benchmark thread at a time.
    private var random = SplitMix64(seed: 0x70B5)
    private var counter = 0

    func next(_ change: TopRowsChange, latestIDs: [Int64]) -> (id: Int64, score: Int) {
        counter += 1
        switch change {
        case .outsideWindow:
            // Scores below 2 × rows: far from the best ones (up to 4 × rows).
            return (Int64.random(in: 1...Int64(largeRowCount), using: &random),
                    Int.random(in: 0..<(2 * largeRowCount), using: &random))
        case .entersWindow:
            return (Int64.random(in: 1...Int64(largeRowCount), using: &random), 10 * largeRowCount + counter)
        case .leavesWindow:
            return (latestIDs[0], -counter)
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: 3,
        maxDuration: .seconds(5),
        maxIterations: 200
    )
    let fixtures: [(name: String, fixture: @Sendable () -> any DiffFixture)] = [
        ("ReactiveSQLite", { reactiveSQLiteFixture }),
        ("GRDB", { grdbFixture }),
        // The same baseline with GRDB's fastest record decoding.
        ("GRDBRowDecoding", { grdbRowFixture }),
        // The same observation with the update hook, which makes it scan
        // the table at each commit (no refetch of the changed rows only).
        ("ReactiveSQLiteFullScan", { reactiveSQLiteFullScanFixture }),
        // Not the target: `trackingAll(...).setDifferences()`, which
        // decodes every row at each commit, for comparison.
        ("ReactiveSQLiteDecodingAll", { reactiveSQLiteDecodingFixture }),
    ]
    for (library, fixture) in fixtures {
        let name = "DifferencesObservation.OneRowUpdate.\(library) n=\(rowCount)"
        let updates = Updates()
        Benchmark(name, configuration: configuration) { benchmark in
            let fixture = fixture()
            let (id, score) = updates.next()
            benchmark.startMeasurement()
            let difference = try fixture.update(id: id, score: score)
            benchmark.stopMeasurement()
            check(difference, id: id, score: score, name)
        } setup: {
            _ = fixture()
        }
    }

    // A million rows: GRDB refetches a million records per commit (and
    // merges them), or scans them for the leaderboard: a few iterations.
    let largeConfiguration = Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: 1,
        maxDuration: .seconds(8),
        maxIterations: 100
    )
    // The leaderboard of a million rows: ReactiveSQLite keeps it from the
    // rows it holds; with the update hook only, and GRDB, refetch it.
    let topRowsFixtures: [(name: String, fixture: @Sendable () -> any TopRowsFixture)] = [
        ("ReactiveSQLite", { topRowsFixture }),
        ("ReactiveSQLiteRefetch", { topRowsRefetchFixture }),
        ("GRDB", { grdbTopRowsFixture }),
    ]
    for (library, fixture) in topRowsFixtures {
        for change in TopRowsChange.allCases {
            let name = "TopRows.\(change.rawValue).\(library) n=\(largeRowCount)"
            let changes = TopRowsChanges()
            Benchmark(name, configuration: largeConfiguration) { benchmark in
                let fixture = fixture()
                let (id, score) = changes.next(change, latestIDs: fixture.latestIDs)
                let before = fixture.latestIDs
                benchmark.startMeasurement()
                let ids = try fixture.update(id: id, score: score)
                benchmark.stopMeasurement()
                switch change {
                case .outsideWindow: precondition(ids == before || before.contains(id), "\(name): \(ids)")
                case .entersWindow: precondition(ids.first == id, "\(name): \(ids)")
                case .leavesWindow: precondition(!ids.contains(id) && ids.count == 10, "\(name): \(ids)")
                }
            } setup: {
                _ = fixture()
            }
        }
    }

    // One updated row, and one row inserted then deleted (two commits, two
    // differences) before every other row: the first chunk of records changes.
    let largeFixtures: [(name: String, fixture: @Sendable () -> any DiffFixture)] = [
        ("ReactiveSQLite", { largeReactiveSQLiteFixture }),
        ("GRDB", { largeGRDBFixture }),
        ("GRDBRowDecoding", { largeGRDBRowFixture }),
        // Written by another connection, the observation on a pool that
        // observes external changes (no GRDB counterpart: GRDB's
        // observations do not see other connections' commits).
        ("ReactiveSQLiteExternalWriter", { largeExternalFixture }),
        ("ReactiveSQLiteExternalWriterRollback", { largeExternalRollbackFixture }),
    ]
    // SQLite alone runs the observed query once on the rollback-journal
    // file of the external-writer benchmark: the baseline of its full
    // refetches.
    let scanName = "DifferencesObservation.ScanOnce.SQLite n=\(largeRowCount)"
    Benchmark(scanName, configuration: largeConfiguration) { benchmark in
        _ = largeExternalRollbackFixture
        let scan = SQLiteScan(path: directory + "/large-external-rollback.sqlite")
        benchmark.startMeasurement()
        let result = scan.run("SELECT * FROM player ORDER BY id")
        benchmark.stopMeasurement()
        precondition(result.rows >= largeRowCount - 1, "\(scanName): \(result.rows) rows")
    }
    for (library, fixture) in largeFixtures {
        let updateName = "DifferencesObservation.OneRowUpdate.\(library) n=\(largeRowCount)"
        let updates = Updates()
        Benchmark(updateName, configuration: largeConfiguration) { benchmark in
            let fixture = fixture()
            let (id, score) = updates.next()
            benchmark.startMeasurement()
            let difference = try fixture.update(id: id, score: score)
            benchmark.stopMeasurement()
            check(difference, id: id, score: score, updateName)
        } setup: {
            _ = fixture()
        }
        let insertName = "DifferencesObservation.OneRowInsertThenDelete.\(library) n=\(largeRowCount)"
        Benchmark(insertName, configuration: largeConfiguration) { benchmark in
            let fixture = fixture()
            benchmark.startMeasurement()
            let differences = try fixture.insertThenDelete(id: -1)
            benchmark.stopMeasurement()
            check(differences, insertName)
        } setup: {
            _ = fixture()
        }
    }
}
