import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import Synchronization
import TestSupport
import Testing

@Suite(.isolated) struct ConcurrencyTests {
    private func makeDatabase(_ kind: DatabaseKind, configuration: Configuration = Configuration()) throws -> TestDatabase {
        let test = try kind.make(configuration: configuration)
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE counter (value INTEGER NOT NULL); INSERT INTO counter VALUES (0)")
        }
        return test
    }

    private static func value(_ db: Database) throws -> Int {
        try db.int("SELECT value FROM counter") ?? -1
    }

    @Test(arguments: DatabaseKind.allCases)
    func manyConcurrentAsyncWritesAndReadsGiveTheExactCount(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let taskCount = 200
        let readValues = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<taskCount {
                group.addTask {
                    try await writer.write { db in
                        try db.execute(sql: "UPDATE counter SET value = value + 1")
                    }
                    return nil
                }
                group.addTask {
                    try await writer.read { db in try Self.value(db) }
                }
            }
            var values: [Int] = []
            for try await value in group {
                if let value { values.append(value) }
            }
            return values
        }
        #expect(readValues.count == taskCount)
        #expect(readValues.allSatisfy { (0...taskCount).contains($0) })
        #expect(try await writer.read { db in try Self.value(db) } == taskCount)
    }

    @Test(arguments: DatabaseKind.allCases)
    func concurrentSyncAndAsyncWritesGiveTheExactCount(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let threads = (0..<8).map { _ in
            ThreadResult {
                for _ in 0..<25 {
                    try writer.write { db in try db.execute(sql: "UPDATE counter SET value = value + 1") }
                    _ = try writer.read(Self.value)
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await writer.writeWithoutTransaction { db in
                        try db.execute(sql: "UPDATE counter SET value = value + 1")
                    }
                }
            }
            try await group.waitForAll()
        }
        for thread in threads {
            let result = await thread.waitAsync()
            #expect(result != nil)
            try result?.get()
        }
        #expect(try await writer.read { db in try Self.value(db) } == 400)
    }

    /// With a sync write holding the writer on a thread outside Swift
    /// concurrency, many more async accesses than cooperative threads wait for
    /// the database, and an unrelated task still runs: the waiting accesses
    /// are suspended, not blocking their threads.
    @Test(arguments: DatabaseKind.allCases)
    func asyncAccessesWaitingForTheWriterDoNotBlockCooperativeThreads(kind: DatabaseKind) async throws {
        let test = try makeDatabase(kind)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let holding = Gate()
        let release = Gate()
        let holder = ThreadResult {
            try writer.write { db in
                holding.open()
                _ = release.wait()
                try db.execute(sql: "UPDATE counter SET value = value + 1")
            }
        }
        #expect(await holding.waitAsync())

        // Far more than the cooperative pool's threads (one per core).
        let taskCount = 4 * ProcessInfo.processInfo.activeProcessorCount + 16
        let started = Gate()
        let tasks = (0..<taskCount).map { index in
            Task {
                started.open()
                if index.isMultiple(of: 2) || kind == .pool {
                    try await writer.write { db in try db.execute(sql: "UPDATE counter SET value = value + 1") }
                } else {
                    // A queue serializes reads with writes: they wait too.
                    try await writer.writeWithoutTransaction { db in
                        try db.execute(sql: "UPDATE counter SET value = value + 1")
                    }
                    _ = try await writer.read(Self.value)
                }
            }
        }

        // Decided on a dispatch thread, which does not depend on the
        // cooperative pool: were it exhausted, the waits below would time out.
        let verdict = ThreadResult { () -> (allStarted: Bool, unrelatedRan: Bool) in
            let allStarted = (0..<taskCount).allSatisfy { _ in started.wait() }
            let unrelated = Gate()
            Task { unrelated.open() }
            let unrelatedRan = unrelated.wait()
            release.open()
            return (allStarted, unrelatedRan)
        }
        let outcome = try #require(await verdict.waitAsync(seconds: 3 * patience)).get()
        #expect(outcome.allStarted)
        #expect(outcome.unrelatedRan)
        let held = await holder.waitAsync()
        #expect(held != nil)
        try held?.get()
        for task in tasks { try await task.value }
        #expect(try await writer.read { db in try Self.value(db) } == taskCount + 1)
    }

    /// Same with reads waiting for a pool's only reader.
    @Test func asyncReadsWaitingForAReaderDoNotBlockCooperativeThreads() async throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        let test = try makeDatabase(.pool, configuration: configuration)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let holding = Gate()
        let release = Gate()
        let holder = ThreadResult {
            try writer.read { db in
                holding.open()
                _ = release.wait()
                return try Self.value(db)
            }
        }
        #expect(await holding.waitAsync())

        let taskCount = 4 * ProcessInfo.processInfo.activeProcessorCount + 16
        let started = Gate()
        let tasks = (0..<taskCount).map { _ in
            Task {
                started.open()
                return try await writer.read { db in try Self.value(db) }
            }
        }
        let verdict = ThreadResult { () -> (allStarted: Bool, unrelatedRan: Bool, writeRan: Bool) in
            let allStarted = (0..<taskCount).allSatisfy { _ in started.wait() }
            let unrelated = Gate()
            Task { unrelated.open() }
            let unrelatedRan = unrelated.wait()
            // The writer is free meanwhile.
            let write = ThreadResult { try writer.write { db in try db.execute(sql: "UPDATE counter SET value = 1") } }
            let writeRan = (try? write.wait()?.get()) != nil
            release.open()
            return (allStarted, unrelatedRan, writeRan)
        }
        let outcome = try #require(await verdict.waitAsync(seconds: 3 * patience)).get()
        #expect(outcome.allStarted)
        #expect(outcome.unrelatedRan)
        #expect(outcome.writeRan)
        #expect(try #require(await holder.waitAsync()).get() == 0)
        for task in tasks { #expect(try await task.value == 1) }
    }

    /// Sync reads on dispatch threads and async reads in tasks compete for two
    /// readers, with writes meanwhile: every read gets a reader, never more
    /// than two run at once, and nothing is lost.
    @Test func syncAndAsyncReadsShareTheReadersUnderContention() async throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = 2
        let test = try makeDatabase(.pool, configuration: configuration)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let gauge = ConcurrencyGauge()
        let reads = Counter()
        let threads = (0..<6).map { _ in
            ThreadResult {
                for _ in 0..<40 {
                    _ = try writer.read { db in
                        try gauge.measure {
                            reads.increment()
                            return try Self.value(db)
                        }
                    }
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<240 {
                group.addTask {
                    if index.isMultiple(of: 4) {
                        try await writer.write { db in try db.execute(sql: "UPDATE counter SET value = value + 1") }
                    }
                    _ = try await writer.read { db in
                        try gauge.measure {
                            reads.increment()
                            return try Self.value(db)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        for thread in threads {
            try #require(await thread.waitAsync()).get()
        }
        #expect(reads.current == 6 * 40 + 240)
        #expect(gauge.maximum <= 2)
        #expect(try await writer.read { db in try Self.value(db) } == 60)
    }

    /// A synchronous read, as code that is not async calls it.
    private static func syncRead(_ reader: some DatabaseReader) throws -> Int {
        try reader.read { db in try value(db) }
    }

    /// Sync reads called from tasks block their cooperative threads while
    /// they wait for the pool's only reader. Async reads compete for it: a
    /// reader handed to (or given back by) an async read must not need a
    /// cooperative thread to make progress, or everything stops.
    @Test func syncReadsInTasksAndAsyncReadsShareOneReaderWithoutDeadlock() async throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        let test = try makeDatabase(.pool, configuration: configuration)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let taskCount = 2 * ProcessInfo.processInfo.activeProcessorCount + 4
        let finished = Counter()
        let failures = Counter()
        let allFinished = Gate()
        for index in 0..<taskCount {
            Task.detached {
                for _ in 0..<20 {
                    do {
                        if index.isMultiple(of: 2) {
                            _ = try Self.syncRead(writer)
                        } else {
                            _ = try await writer.read { db in try Self.value(db) }
                        }
                    } catch {
                        failures.increment()
                    }
                }
                if finished.increment() == taskCount { allFinished.open() }
            }
        }
        let verdict = ThreadResult { () -> Bool in
            let done = allFinished.wait()
            // Were the reads stuck, closing fails the waiting ones, so that
            // the blocked threads come back and the test ends.
            if !done { writer.close() }
            return done
        }
        #expect(try #require(await verdict.waitAsync(seconds: 2 * patience)).get())
        #expect(failures.current == 0)
    }

    /// Global dispatch queues have one thread per core: with all of them
    /// blocked (by other code of the process), an async read that must open
    /// a reader still gets it.
    @Test func anAsyncReadOpensAReaderWhileGlobalDispatchThreadsAreBlocked() async throws {
        let test = try makeDatabase(.pool)
        let writer = test.writer
        defer { withExtendedLifetime(test) {} }
        let release = Gate()
        let blockedCount = 2 * ProcessInfo.processInfo.activeProcessorCount
        for _ in 0..<blockedCount {
            DispatchQueue.global().async { _ = release.wait() }
        }
        let read = Task { try await writer.read { db in try Self.value(db) } }
        let verdict = ThreadResult { () -> Bool in
            let readEnded = Gate()
            Task {
                _ = await read.result
                readEnded.open()
            }
            let ended = readEnded.wait()
            for _ in 0..<blockedCount { release.open() }
            return ended
        }
        #expect(try #require(await verdict.waitAsync(seconds: 2 * patience)).get())
        #expect(try await read.value == 0)
    }
}
