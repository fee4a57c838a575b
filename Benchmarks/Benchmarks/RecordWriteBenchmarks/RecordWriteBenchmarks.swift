import Benchmark
import Foundation

// Records that write themselves, ReactiveSQLite against GRDB 7.10 (the
// baseline): the same `Codable` record (`id`, `name`, `score`, `bonus`,
// `createdAt`), the same calls (`insert`, `update`, `upsert`,
// `updateChanges(_:from:)`), 100 000 records in one `write` transaction per
// iteration. Each library has its own database file in a temporary
// directory, with the same durability set explicitly on both
// (`journal_mode = WAL`, `synchronous = NORMAL`). After each iteration, the
// table's checksum (computed by SQLite) is checked against the inputs, so a
// fast but wrong write cannot pass unnoticed. The table is prepared before
// each iteration with plain SQL, outside measurement.
//
// Names put the library last (`RecordWrite.Insert.GRDB`,
// `RecordWrite.Insert.ReactiveSQLite`): package-benchmark runs benchmarks in
// name order, each in its own process, so the two libraries run one after
// the other for each operation, under the same load.

let recordCount = 100_000

/// The records of every benchmark, built once per process.
let inputs = RecordInputs(count: recordCount)

/// A directory of this process, removed when it exits.
let directory: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("RecordWriteBenchmarks-\(ProcessInfo.processInfo.processIdentifier)").path
    try? FileManager.default.removeItem(atPath: path)
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: directory) }
    return path
}()

/// The stores, created on first use (outside measurements).
nonisolated(unsafe) let reactiveSQLiteStore: any RecordStore = try! ReactiveSQLiteRecordStore(
    path: directory + "/reactivesqlite.sqlite", inputs: inputs)
nonisolated(unsafe) let grdbStore: any RecordStore = try! GRDBRecordStore(
    path: directory + "/grdb.sqlite", inputs: inputs)

@inline(never)
func check(_ actual: Checksum, _ expected: Checksum, _ name: String) {
    precondition(actual == expected, "\(name): \(actual), expected \(expected)")
}

/// One warm-up iteration (it fills the statement and schema caches), then
/// as many iterations as fit in `seconds`, at most 20, and at least one.
func configuration(seconds: Int = 10) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(seconds),
        maxIterations: 20
    )
}

let benchmarks: @Sendable () -> Void = {
    let libraries: [(name: String, store: @Sendable () -> any RecordStore)] = [
        ("ReactiveSQLite", { reactiveSQLiteStore }),
        ("GRDB", { grdbStore }),
    ]
    for (library, store) in libraries {
        // `record.insert(db)` into an empty table.
        Benchmark("RecordWrite.Insert.\(library) n=\(recordCount)", configuration: configuration()) { benchmark in
            let store = store()
            try store.reset(to: [])
            benchmark.startMeasurement()
            try store.insert(0)
            benchmark.stopMeasurement()
            check(try store.tableChecksum(), inputs.checksumA, "RecordWrite.Insert.\(library)")
        }

        // `record.update(db)` of every row, from version A to version B.
        Benchmark("RecordWrite.Update.\(library) n=\(recordCount)", configuration: configuration()) { benchmark in
            let store = store()
            try store.reset(to: inputs.versionA)
            benchmark.startMeasurement()
            try store.update(1)
            benchmark.stopMeasurement()
            check(try store.tableChecksum(), inputs.checksumB, "RecordWrite.Update.\(library)")
        }

        // `record.upsert(db)` of version B over the even rows of version A:
        // half the records insert their row, half update an existing one.
        Benchmark("RecordWrite.Upsert.\(library) n=\(recordCount)", configuration: configuration()) { benchmark in
            let store = store()
            try store.reset(to: inputs.versionA)
            try store.deleteOddRows()
            check(try store.tableChecksum(), inputs.evenChecksumA, "RecordWrite.Upsert.\(library) setup")
            benchmark.startMeasurement()
            try store.upsert(1)
            benchmark.stopMeasurement()
            check(try store.tableChecksum(), inputs.checksumB, "RecordWrite.Upsert.\(library)")
        }

        // `new.updateChanges(db, from: old)` from version A to version B:
        // one changed column (the score) per record, one UPDATE each.
        Benchmark("RecordWrite.UpdateChanges.\(library) n=\(recordCount)", configuration: configuration()) { benchmark in
            let store = store()
            try store.reset(to: inputs.versionA)
            benchmark.startMeasurement()
            try store.updateChanges(1, from: 0)
            benchmark.stopMeasurement()
            check(try store.tableChecksum(), inputs.checksumB, "RecordWrite.UpdateChanges.\(library)")
        }

        // `record.updateChanges(db, from: record)`: nothing changed, no
        // statement (the sync's second run, at scale).
        Benchmark("RecordWrite.UpdateNoChanges.\(library) n=\(recordCount)", configuration: configuration()) { benchmark in
            let store = store()
            try store.reset(to: inputs.versionA)
            benchmark.startMeasurement()
            try store.updateChanges(0, from: 0)
            benchmark.stopMeasurement()
            check(try store.tableChecksum(), inputs.checksumA, "RecordWrite.UpdateNoChanges.\(library)")
        }
    }
}
