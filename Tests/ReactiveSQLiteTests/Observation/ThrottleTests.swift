import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `throttle(_:)`: at most one fetch, and so one value, per interval, and
/// the last committed state always delivered.
///
/// On threads of their own: 10 000 commits in a tight loop held a thread of
/// the cooperative pool for seconds, and the suites that await stalled.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct ThrottleTests {
    @Test(arguments: DatabaseKind.allCases)
    func tenThousandCommitsCostAFetchPerIntervalAndEndOnTheLastState(kind: DatabaseKind) async throws {
        // Without a sync of the file at each commit: the file queue's 10 000
        // commits took 50 s (140 s under the thread sanitizer), and the
        // throttle is the same.
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        let test = try kind.make(configuration: configuration, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let recorder = Recorder<Int>()
        let interval = Duration.milliseconds(50)
        let observation = ValueObservation.tracking { db -> Int in
            fetches.withLock { $0 += 1 }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") ?? 0
        }.throttle(interval)
        let cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "ThrottleTests")),
            onError: { Issue.record($0) }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [3])
        // 10 000 single-row commits in a tight loop.
        let clock = ContinuousClock()
        let start = clock.now
        for id in 4...10_003 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
        }
        let lastCommit = clock.now
        // The last state comes, at most an interval (and a fetch) later.
        let values = try await recorder.wait(forLast: 10_003)
        let elapsed = clock.now - start
        let allowed = Int((elapsed / interval).rounded(.up)) + 2
        print("ThrottleTests (\(kind)): 10 000 commits in \(lastCommit - start), \(values.count) values, \(fetches.value) fetches")
        #expect(values.count <= allowed, "\(values.count) values in \(elapsed)")
        // Fetches are throttled too, not only deliveries.
        #expect(fetches.value <= allowed, "\(fetches.value) fetches in \(elapsed)")
        #expect(values == values.sorted())
        // Nothing more once the state is delivered.
        try await Task.sleep(for: interval * 3)
        #expect(recorder.values.count == values.count)
    }

    @Test(arguments: DatabaseKind.allCases)
    func fetchesAreSpacedByTheIntervalAndMapKeepsTheThrottle(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<Int>()
        let interval = Duration.milliseconds(200)
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .throttle(interval)
            .map { $0 * 10 }
            .start(in: writer, scheduling: .async(onQueue: DispatchQueue(label: "ThrottleTests")),
                   onError: { Issue.record($0) }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [30])
        let clock = ContinuousClock()
        let firstCommit = clock.now
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        _ = try await recorder.wait(forLast: 40)
        // The fetch of this commit starts an interval after the previous
        // one at least, which started after the first commit.
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'Eve')")
        let values = try await recorder.wait(forLast: 50)
        #expect(clock.now - firstCommit >= interval)
        #expect(values.suffix(2) == [40, 50])
    }
}
