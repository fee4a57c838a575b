import DatabaseTestSupport
import ReactiveSQLite
import Testing
import TestSupport

/// Observations of queries under random writes, against an oracle: every
/// query runs before and after each write. An observation whose result
/// changed must have been told of the write (nothing missed); the writes
/// told to an observation whose result did not change are counted; at
/// the end every observation's value equals a fresh fetch.
enum NotificationOracle {
    /// Runs `steps` writes from `randomWrite`; returns the notifications
    /// needed and those not needed.
    ///
    /// - Parameters:
    ///   - waitsForEachValue: Whether each observation's value equals a
    ///     fresh fetch after each write before the next one.
    ///   - onWastedNotification: Called with the index of the query and the
    ///     write of each notification not needed.
    static func run(
        _ test: TestDatabase, queries: [String], steps: Int, waitsForEachValue: Bool = false,
        random: inout SplitMix64, randomWrite: (inout SplitMix64) -> String,
        onWastedNotification: (_ query: Int, _ write: String) -> Void = { _, _ in }
    ) async throws -> (needed: Int, wasted: Int) {
        let recorders = queries.map { _ in Recorder<[Row]>() }
        let told = queries.map { _ in LockedState(0) }
        var cancellables: [AnyDatabaseCancellable] = []
        defer { for cancellable in cancellables { cancellable.cancel() } }
        for (index, sql) in queries.enumerated() {
            let counter = told[index]
            let recorder = recorders[index]
            cancellables.append(ValueObservation.trackingAll(SQLRequest<Row>(sql: sql))
                .handleEvents(databaseDidChange: { counter.withLock { $0 += 1 } })
                .start(in: test.writer, onError: { Issue.record("\(sql): \($0)") }, onChange: { recorder.append($0) }))
            _ = try await recorder.wait(for: 1)
        }
        func results() throws -> [[Row]] {
            try test.writer.read { db in try queries.map { try SQLRequest<Row>(sql: $0).fetchAll(db) } }
        }
        func waitForFreshValues(_ results: [[Row]]) async throws {
            for (index, recorder) in recorders.enumerated() {
                let expected = results[index]
                _ = try await recorder.wait { $0.last == expected }
            }
        }
        var before = try results()
        var needed = 0
        var wasted = 0
        for step in 0..<steps {
            let counts = told.map { $0.withLock { $0 } }
            let write = randomWrite(&random)
            try test.writer.writeSQLWithoutTransaction(write)
            let after = try results()
            for index in queries.indices {
                let wasTold = told[index].withLock { $0 } > counts[index]
                if before[index] != after[index] {
                    needed += 1
                    #expect(wasTold, "step \(step): \(queries[index]) was not told of \(write)")
                } else if wasTold {
                    wasted += 1
                    onWastedNotification(index, write)
                }
            }
            if waitsForEachValue { try await waitForFreshValues(after) }
            before = after
        }
        try await waitForFreshValues(before)
        return (needed, wasted)
    }
}
