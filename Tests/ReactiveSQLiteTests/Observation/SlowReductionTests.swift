import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import TestSupport
import Testing

/// Commits faster than an observation reduces its values (the difference
/// of large results, a slow `map`): with `coalescingWhileReducing()` (row
/// differences), fetched values never pile up waiting for the reduction
/// queue; the commits coalesce into the next fetch, and the last state is
/// delivered. Without it, a queue fetches before each next write.
@Suite(.timeLimit(.minutes(2)), .onItsOwnThread) struct SlowReductionTests {
    @Test(arguments: DatabaseKind.allCases)
    func atMostTwoFetchedValuesWaitForASlowReduction(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        let test = try kind.make(configuration: configuration, sql: playerSchemaSQL)
        let writer = test.writer
        /// Fetches started, and values reduced: the difference is the
        /// number of fetched values alive, fetching or waiting.
        let counts = Locked((fetches: 0, reduced: 0, mostAlive: 0))
        let recorder = Recorder<Int>()
        let observation = ValueObservation.tracking { db -> Int in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") ?? 0
        }
        .handleEvents(willFetch: {
            counts.withLock { counts in
                counts.fetches += 1
                counts.mostAlive = max(counts.mostAlive, counts.fetches - counts.reduced)
            }
        })
        .map { count -> Int in
            // A reduction slower than a commit (on the reduction queue:
            // the outcome is decided by the counts, not by this pause).
            Thread.sleep(forTimeInterval: 0.005)
            counts.withLock { $0.reduced += 1 }
            return count
        }
        .coalescingWhileReducing()
        let cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "SlowReductionTests")),
            onError: { Issue.record($0) }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [3])
        for id in 4...403 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
        }
        let values = try await recorder.wait(forLast: 403)
        let (fetches, _, mostAlive) = counts.value
        print("SlowReductionTests (\(kind)): 400 commits, \(fetches) fetches, \(values.count) values, at most \(mostAlive) alive")
        // One being reduced, one fetched or fetching.
        #expect(mostAlive <= 2)
        #expect(fetches < 400)
        #expect(values == values.sorted())
    }
}
