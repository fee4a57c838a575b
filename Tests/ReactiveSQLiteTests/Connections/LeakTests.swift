import Foundation
import ReactiveSQLite
import Testing
import TestSupport

/// Opening and closing thousands of databases leaves no file descriptor open.
///
/// Each body runs in a child process, so that the databases of tests running
/// in parallel do not disturb the count of open descriptors.
@Suite(.isolated) struct LeakTests {
    /// Opens, uses and closes (or releases) databases, and stops the process
    /// with a message when the open descriptors grew by more than a constant.
    private static func checkNoDescriptorLeak(
        queueCount: Int, poolCount: Int, explicitClose: Bool
    ) throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        func exercise(_ writer: any DatabaseWriter) throws {
            try writer.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, name TEXT)")
                let insert = try db.cachedStatement(sql: "INSERT INTO t (name) VALUES (?)")
                try insert.execute(arguments: ["a"])
                try insert.execute(arguments: ["b"])
            }
            let count = try writer.read { db in
                try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM t").fetchOne(db)
            }
            precondition(count ?? 0 >= 2)
            if explicitClose { writer.close() }
        }
        // Opening fails for these: nothing may stay open either.
        let garbage = directory.path("garbage.sqlite")
        try Data(repeating: 0x2A, count: 4096).write(to: URL(fileURLWithPath: garbage))
        let failingPaths = [garbage, directory.path("missing/db.sqlite")]
        // So do these, whose `prepareDatabase` throws: on every connection,
        // or on a pool's readers only (the pool opens, its reads throw).
        var failing = Configuration()
        failing.prepareDatabase = { _ in throw CancellationError() }
        var failingReaders = Configuration()
        failingReaders.prepareDatabase = { db in
            if db.label.contains("reader") { throw CancellationError() }
        }
        func round(queueCount: Int, poolCount: Int) throws {
            for queueIndex in 0..<queueCount {
                try exercise(DatabaseQueue(path: directory.path("queue\(queueIndex % 10).sqlite")))
                if queueIndex.isMultiple(of: 10) {
                    for path in failingPaths {
                        precondition((try? DatabaseQueue(path: path)) == nil)
                        precondition((try? DatabasePool(path: path)) == nil)
                    }
                    let path = directory.path("failing.sqlite")
                    precondition((try? DatabaseQueue(path: path, configuration: failing)) == nil)
                    precondition((try? DatabaseQueue(configuration: failing)) == nil)
                    precondition((try? DatabasePool(path: path, configuration: failing)) == nil)
                    let pool = try DatabasePool(path: path, configuration: failingReaders)
                    for _ in 0..<3 {
                        precondition((try? pool.read { db in try db.execute(sql: "SELECT 1") }) == nil)
                    }
                    if explicitClose { pool.close() }
                }
            }
            for poolIndex in 0..<poolCount {
                try exercise(DatabasePool(path: directory.path("pool\(poolIndex % 10).sqlite")))
            }
        }
        // A first small round opens what the process keeps open for good.
        try round(queueCount: 20, poolCount: 20)
        let baseline = openFileDescriptorCount()
        try round(queueCount: queueCount, poolCount: poolCount)
        let after = openFileDescriptorCount()
        // A leak of one descriptor per database would show thousands.
        if after > baseline + 4 {
            fatalError("open file descriptors grew from \(baseline) to \(after)")
        }
    }

    private func expectSuccess(_ result: ExitTest.Result?, sourceLocation: SourceLocation = #_sourceLocation) {
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!output.contains("grew"), "\(output)", sourceLocation: sourceLocation)
    }

    @Test func closedDatabasesLeaveNoDescriptorOpen() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(seconds: 300, exitCode: EXIT_FAILURE)
            try LeakTests.checkNoDescriptorLeak(queueCount: 2_000, poolCount: 300, explicitClose: true)
        }
        expectSuccess(result)
    }

    @Test func releasedDatabasesLeaveNoDescriptorOpen() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            armExitTestWatchdog(seconds: 300, exitCode: EXIT_FAILURE)
            try LeakTests.checkNoDescriptorLeak(queueCount: 2_000, poolCount: 300, explicitClose: false)
        }
        expectSuccess(result)
    }
}
