import Benchmark
import Foundation

// ReactiveSQLite against GRDB 7.10 (the baseline): same schema, same rows,
// same calls, each library on its own database file in a temporary directory
// (journal mode DELETE and synchronous FULL, the defaults of a `DatabaseQueue`
// in both). One iteration does the whole work of a benchmark on 100 000 rows:
// figures are per iteration, and `ratios.py` divides them by n. Each iteration
// checks its result against the inputs (count and checksums), so a fast but
// wrong fetch cannot pass unnoticed.
//
// Names put the library last (`SQLite.Insert.GRDB`, `SQLite.Insert.ReactiveSQLite`):
// package-benchmark runs benchmarks in name order, each in its own process, so
// the two libraries run one after the other for each operation, under the same
// load.

let rowCount = 100_000

/// The rows of every benchmark, built once per process.
let inputs = PlayerInputs(count: rowCount)

/// A directory of this process, removed when it exits.
let directory: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("SQLiteBenchmarks-\(ProcessInfo.processInfo.processIdentifier)").path
    try? FileManager.default.removeItem(atPath: path)
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: directory) }
    return path
}()

/// The stores, filled with `inputs` on first use (outside measurements).
nonisolated(unsafe) let reactiveSQLiteStore: any PlayerStore = try! ReactiveSQLiteStore(
    path: directory + "/reactivesqlite.sqlite", inputs: inputs)
nonisolated(unsafe) let grdbStore: any PlayerStore = try! GRDBStore(path: directory + "/grdb.sqlite", inputs: inputs)

@inline(never)
func check(_ actual: Checksum, _ expected: Checksum, _ name: String) {
    precondition(actual == expected, "\(name): \(actual), expected \(expected)")
}

/// One warm-up iteration (it fills the statement and schema caches), then
/// as many iterations as fit in `seconds`, at most 30, and at least one.
func configuration(seconds: Int = 3) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: 1,
        maxDuration: .seconds(seconds),
        maxIterations: 30
    )
}

let benchmarks: @Sendable () -> Void = {
    let libraries: [(name: String, store: @Sendable () -> any PlayerStore)] = [
        ("ReactiveSQLite", { reactiveSQLiteStore }),
        ("GRDB", { grdbStore }),
    ]
    for (library, store) in libraries {
        // Insert every row in one transaction with one cached statement. The
        // table is emptied before, in its own transaction, outside measurement.
        Benchmark("SQLite.Insert.\(library) n=\(rowCount)", configuration: configuration()) { benchmark in
            let store = store()
            try store.deleteAll()
            benchmark.startMeasurement()
            try store.insert(inputs)
            benchmark.stopMeasurement()
            check(try store.tableChecksum(), inputs.expected, "SQLite.Insert.\(library)")
        } setup: {
            _ = store()
        }

        // Every row as `[Row]`, reading the id of each row (by index).
        Benchmark("SQLite.FetchRows.\(library) n=\(rowCount)", configuration: configuration()) { benchmark in
            let checksum = try store().fetchRows()
            check(checksum, inputs.expected.rowPart, "SQLite.FetchRows.\(library)")
            blackHole(checksum)
        } setup: {
            _ = store()
        }

        // Every row as a `Decodable` record (`Player.all().fetchAll(db)`).
        Benchmark("SQLite.FetchDecodable.\(library) n=\(rowCount)", configuration: configuration()) { benchmark in
            let checksum = try store().fetchRecords()
            check(checksum, inputs.expected, "SQLite.FetchDecodable.\(library)")
            blackHole(checksum)
        } setup: {
            _ = store()
        }

        // One record by primary key, 100 000 times in one read, in a seeded
        // random order: `Player.filter(key: id).fetchOne(db)`.
        Benchmark("SQLite.FetchOneByKey.\(library) n=\(rowCount)", configuration: configuration(seconds: 8)) { benchmark in
            let checksum = try store().fetchRecordsByPrimaryKey(inputs.lookupIDs)
            check(checksum, inputs.expectedLookups, "SQLite.FetchOneByKey.\(library)")
            blackHole(checksum)
        } setup: {
            _ = store()
        }

        // The same with raw SQL through the statement cache:
        // `SQLRequest<Player>(sql: "SELECT * FROM player WHERE id = ?", arguments: [id])`.
        Benchmark("SQLite.FetchOneBySQL.\(library) n=\(rowCount)", configuration: configuration(seconds: 5)) { benchmark in
            let checksum = try store().fetchRecordsBySQL(inputs.lookupIDs)
            check(checksum, inputs.expectedLookups, "SQLite.FetchOneBySQL.\(library)")
            blackHole(checksum)
        } setup: {
            _ = store()
        }
    }
}
