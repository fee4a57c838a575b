import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import TestSupport
import Testing

/// Commits faster than an observation reduces its values (the difference
/// of large results): with `coalescingWhileReducing()` (row differences),
/// fetched values never pile up waiting for the reduction queue: the newest
/// replaces the one that waits, the values in between are never reduced,
/// and the last state is delivered. Without it, every fetched value is
/// reduced (this test then counts hundreds of reductions).
///
/// The reduction of the second value holds the queue until the fetches of
/// 400 commits are done: the outcome depends on no timing.
@Suite(.timeLimit(.minutes(2)), .onItsOwnThread) struct SlowReductionTests {
    @Test(arguments: DatabaseKind.allCases)
    func fetchedValuesWaitingForTheReductionReplaceEachOther(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        let test = try kind.make(configuration: configuration, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked((count: 0, largest: 0))
        let reductions = Locked(0)
        let held = DispatchSemaphore(value: 0)
        defer { held.signal() }
        let recorder = Recorder<Int>()
        let observation = ValueObservation.tracking { db -> Int in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") ?? 0
            fetches.withLock { $0 = ($0.count + 1, max($0.largest, count)) }
            return count
        }
        .map { count -> Int in
            let reduction = reductions.withLock { reductions in
                reductions += 1
                return reductions
            }
            if reduction == 2 { held.wait() }
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
        try await waitUntil { fetches.value.largest == 403 }
        held.signal()
        let values = try await recorder.wait(forLast: 403)
        let fetchCount = fetches.value.count
        print("SlowReductionTests (\(kind)): 400 commits, \(fetchCount) fetches, \(reductions.value) reductions, values \(values)")
        // The first, the held one, the one that waited (and the last
        // fetch's, when it came after the queue was let go).
        #expect(reductions.value <= 4)
        #expect(values == values.sorted())
    }
}
