#if Server
import Foundation
import HummingbirdWSClient
import Logging
import Testing
import TestSupport

/// `sqlite-watch --serve`, end to end: the tool serves a file that other
/// processes change; clients on loopback.
@Suite struct ServeTests {
    static let leaderboard = "SELECT * FROM player ORDER BY score DESC, id"

    @Test(arguments: [false, true])
    func aHundredClientsEndWithWhatAFreshQueryReturns(ordered: Bool) async throws {
        let database = try await WatchedDatabase.players(journalMode: "wal")
        let sql = ordered ? Self.leaderboard : "SELECT * FROM player"
        let served = try await ServedWatch(database, sql: sql, ordered ? ["--ordered"] : [])
        let clients = try (0..<100).map { _ in
            try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: ordered))
        }
        // 30 KB/s at most: a client far slower than the changes.
        let slow = try SSEClient(
            port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: ordered),
            readPause: .milliseconds(250))
        defer { (clients + [slow]).forEach { $0.disconnect() } }
        for client in clients + [slow] { #expect(await client.wait(until: { $0.replica.hasRows }) != nil) }

        // 1 000 commits by other processes, in 20 bursts.
        var random = SplitMix64(seed: ordered ? 1 : 2)
        for _ in 0..<20 {
            try await database.commit(randomPlayerChanges(count: 50, using: &random))
        }
        let expected = try await database.currentRows(sql, ordered: ordered, keys: ["id"])
        for (index, client) in clients.enumerated() {
            do {
                let stream = try await waitForReplica(client, toEqual: expected)
                #expect(stream.replica.inconsistency == nil)
            } catch {
                // What the server said, to tell its end from a client's.
                Issue.record("client \(index): \(error); sqlite-watch's standard error: \(served.process.errorText)")
                throw error
            }
        }
        let slowStream = try await waitForReplica(slow, toEqual: expected, timeout: .seconds(120))
        #expect(slowStream.replica.inconsistency == nil)
        try await served.stop()
    }

    @Test func thePageTheEventsAndTheWebSocketAreServed() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: "SELECT * FROM player ORDER BY id", ["--ordered", "--map", "score,id"])
        let page = try SSEClient(port: served.port, path: "/")
        let loaded = try #require(await page.wait(until: { $0.body.contains("</html>") }))
        #expect(loaded.status == 200)
        #expect(loaded.headers["content-type"] == "text/html; charset=utf-8")
        #expect(loaded.body.contains(#""events":"/live/query""#))
        #expect(loaded.body.contains(#""keys":["id"]"#))
        #expect(loaded.body.contains(#""map":{"x":"score","y":"id"}"#))

        let events = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
        defer { events.disconnect() }
        let first = try #require(await events.wait(until: { $0.replica.hasRows }))
        #expect(first.events.first?.data == #"{"rows":[{"id":1,"name":"Arthur","team":"red","score":100},{"id":2,"name":"Barbara","team":"blue","score":80},{"id":3,"name":"Craig","team":"red","score":60}]}"#)
        try await database.execute("UPDATE player SET score = 1 WHERE id = 1")
        let changed = try #require(await events.wait(until: { $0.events.count == 2 }))
        #expect(changed.events.last?.name == "diff")
        #expect(changed.events.last?.data == #"{"inserted":[],"updated":[{"id":1,"name":"Arthur","team":"red","score":1}],"previous":[{"score":100}],"deleted":[],"insertedAt":[],"moved":[]}"#)

        let missing = try SSEClient(port: served.port, path: "/nothing")
        #expect(await missing.wait(until: { $0.status != nil })?.status == 404)

        // /ws: the same events over a WebSocket, subscribed at once.
        let frames = ObservedState<[String]>([])
        var logger = Logger(label: "ws")
        logger.logLevel = .error
        try await WebSocketClient.connect(url: "ws://127.0.0.1:\(served.port)/ws", logger: logger) { inbound, _, _ in
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            while let message = try await messages.next() {
                guard case .text(let text) = message else { continue }
                frames.update { $0.append(text) }
                if frames.value.count == 1 {
                    try await database.execute("UPDATE player SET score = 2 WHERE id = 1")
                } else {
                    return
                }
            }
        }
        #expect(frames.value.first?.hasPrefix(#"{"subscription":"query","event":"rows","id":""#) == true)
        #expect(frames.value.first?.hasSuffix(#""data":{"rows":[{"id":1,"name":"Arthur","team":"red","score":1},{"id":2,"name":"Barbara","team":"blue","score":80},{"id":3,"name":"Craig","team":"red","score":60}]}}"#) == true)
        #expect(frames.value.last?.contains(#""event":"diff""#) == true)
        #expect(frames.value.last?.hasSuffix(#""data":{"inserted":[],"updated":[{"id":1,"name":"Arthur","team":"red","score":2}],"previous":[{"score":1}],"deleted":[],"insertedAt":[],"moved":[]}}"#) == true)
        try await served.stop()
    }

    /// A served file deleted or replaced ends the tool as it ends the plain
    /// watch: status 1 and the same message (the server kept serving the
    /// old rows: nothing held its file monitor).
    @Test(arguments: [false, true])
    func aServedFileDeletedOrReplacedEndsTheTool(replaced: Bool) async throws {
        let database = try await WatchedDatabase.players()
        let other = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: "SELECT * FROM player")
        if replaced {
            #expect(rename(other.path, database.path) == 0)
        } else {
            try FileManager.default.removeItem(atPath: database.path)
        }
        #expect(try await served.process.waitForExit() == .exit(1))
        #expect(served.process.errorText.contains(
            replaced
                ? "sqlite-watch: error: \(database.path) was replaced by another file while watched"
                : "sqlite-watch: error: \(database.path) was deleted while watched"))
    }

    /// Another process commits 500-row updates of a 20 000-row result as
    /// fast as it can, after a client came and left: results that arrive
    /// while one is diffed are coalesced, so the server's memory stays
    /// bounded (it grew by a result per commit: 1.2 GB in 10 s), and a
    /// client that connects once the writer stopped gets the last state at
    /// once (events came 21 s late).
    @Test func commitsFasterThanDiffingKeepTheServerSmall() async throws {
        let database = try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE item (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, t TEXT NOT NULL);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
            INSERT INTO item SELECT x, 0, printf('item %d', x) FROM c;
            """)
        let sql = "SELECT * FROM item"
        let served = try await ServedWatch(database, sql: sql)
        let pid = served.process.processIdentifier
        let first = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        #expect(await first.wait(until: { $0.replica.hasRows }) != nil)
        first.disconnect()
        let baseline = try #require(residentMegabytes(pid))

        let statements = (0..<600).map { index in
            let start = (index * 500) % 20_000 + 1
            return "UPDATE item SET v = v + 1 WHERE id BETWEEN \(start) AND \(start + 499)"
        }
        // Sampled every 100 ms while the writer runs.
        let sampler = Task { () -> Int in
            var peak = baseline
            while !Task.isCancelled {
                if let megabytes = residentMegabytes(pid) { peak = max(peak, megabytes) }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return peak
        }
        try await database.commit(statements)
        sampler.cancel()
        var peak = await sampler.value
        if let megabytes = residentMegabytes(pid) { peak = max(peak, megabytes) }
        // A result of 20 000 rows is a few megabytes: a handful may be held
        // at once (the kept rows, one diffed, one waiting, one fetched).
        #expect(peak - baseline < 200, "resident memory grew from \(baseline) MB to \(peak) MB")

        let expected = try await database.currentRows(sql, ordered: false, keys: ["id"])
        let late = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { late.disconnect() }
        #expect(await late.wait(timeout: .seconds(10), until: { $0.replica == expected }) != nil)
        try await served.stop()
    }

    /// Another process holds an exclusive lock longer than the busy
    /// timeout: standard error says so, as for the plain watch, and every
    /// stream gets a `notice` (the page's status line shows it); both are
    /// cleared when the lock ends, and the change it held comes.
    @Test func aLockWhileServingIsNotedOnStandardErrorAndInTheStreams() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: "SELECT * FROM player ORDER BY id", ["--busy-timeout", "0.3"])
        let events = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { events.disconnect() }
        #expect(await events.wait(until: { $0.replica.hasRows }) != nil)
        let locker = try LockHolder(database)
        try await locker.waitUntilHeld()
        try await served.process.waitForError(containing: "the database is locked by another connection or process")
        let noticed = try #require(await events.wait(until: { $0.events.contains { $0.name == "notice" } }))
        #expect(noticed.events.last?.data == #"{"notice":"the database is locked by another process: changes wait for the lock's end"}"#)
        locker.release()
        try await served.process.waitForError(containing: "the database is no longer locked")
        #expect(await events.wait(until: { $0.events.last?.data == #"{"notice":null}"# }) != nil)
        try await database.execute("UPDATE player SET score = 7 WHERE id = 1")
        #expect(await events.wait(until: { $0.events.last?.name == "diff" }) != nil)
        try await served.stop()
    }

    /// A result over `--max-rows` is not served: the streams end with the
    /// reason, standard error says what to do, once; a result back under
    /// the limit is served again to a new client.
    @Test func aResultOverTheRowLimitIsExplained() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: "SELECT * FROM player ORDER BY id", ["--max-rows", "3"])
        let events = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { events.disconnect() }
        #expect(await events.wait(until: { $0.replica.rows.count == 3 }) != nil)
        try await database.execute("INSERT INTO player (id, name, team, score) VALUES (4, 'Dora', 'blue', 5)")
        let ended = try #require(await events.wait(until: { $0.isClosed }))
        #expect(ended.events.last?.name == "error")
        #expect(ended.events.last?.data.contains("returned more than the server's limit of 3 rows") == true)
        try await served.process.waitForError(containing: "the result has more than --max-rows (3) rows")
        // A client that tries again meets the same limit: not noted again.
        let retry = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { retry.disconnect() }
        #expect(await retry.wait(until: { $0.isClosed }) != nil)
        #expect(served.process.errorText.components(separatedBy: "more than --max-rows").count == 2)
        try await database.execute("DELETE FROM player WHERE id = 4")
        let after = try SSEClient(port: served.port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { after.disconnect() }
        #expect(await after.wait(until: { $0.replica.rows.count == 3 }) != nil)
        try await served.stop()
    }

    @Test func servingNeedsAValidAddressAndQuery() async throws {
        let database = try await WatchedDatabase.players()
        for (arguments, status, message) in [
            (["SELECT * FROM player", "--serve", "nowhere"], Int32(64), "--serve takes HOST:PORT"),
            (["SELECT * FROM player", "--serve", "127.0.0.1:99999"], 64, "--serve takes HOST:PORT"),
            (["SELECT * FROM player", "--serve", "127.0.0.1:0", "--count", "2"], 64, "--count does not apply to --serve"),
            (["SELECT * FROM player", "--map", "x,y"], 64, "--map applies to --serve only"),
            (["SELECT * FROM player", "--max-rows", "10"], 64, "--max-rows applies to --serve only"),
            (["SELECT * FROM player", "--serve", "127.0.0.1:0", "--max-rows", "0"], 64, "--max-rows must be at least 1"),
            (["SELECT * FROM player", "--serve", "127.0.0.1:0", "--map", "x"], 64, "--map takes two result columns"),
            (["SELECT * FROM player WHERE id = :id", "--serve", "127.0.0.1:0"], 2, "the parameter :id is not declared"),
            (["DELETE FROM player", "--serve", "127.0.0.1:0"], 2, "not a read"),
        ] {
            let watch = try database.watch(arguments)
            #expect(try await watch.waitForExit() == .exit(status), "\(arguments): \(watch.errorText)")
            #expect(watch.errorText.contains(message), "\(arguments): \(watch.errorText)")
        }
    }

    @Test func aPortInUseEndsTheToolWithAMessage() async throws {
        let database = try await WatchedDatabase.players()
        let first = try await ServedWatch(database, sql: "SELECT * FROM player")
        let second = try database.watch(["SELECT * FROM player", "--serve", "127.0.0.1:\(first.port)"])
        #expect(try await second.waitForExit() == .exit(1))
        #expect(second.errorText.contains("cannot serve on 127.0.0.1:\(first.port)"))
        try await first.stop()
    }

    @Test func theDemoServesTheLeaderboardAndThePlaces() async throws {
        let served = try await ServedWatch(try ChildProcess(try Executables.sqliteWatch(), ["--serve", "127.0.0.1:0"]))
        let leaderboard = try SSEClient(
            port: served.port, path: "/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
        let places = try SSEClient(
            port: served.port, path: "/live/places", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
        defer { leaderboard.disconnect(); places.disconnect() }
        // The writer changes both: differences arrive on each stream.
        for client in [leaderboard, places] {
            let stream = try #require(await client.wait(timeout: .seconds(60), until: { $0.events.contains { $0.name == "diff" } }))
            #expect(stream.replica.inconsistency == nil)
        }
        #expect(places.state.value.events[0].data.contains(#""x":"#))
        try await served.stop()
    }
}

/// The resident memory of a process, in megabytes, from `/proc/PID/status`.
func residentMegabytes(_ pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
    else { return nil }
    return kilobytes / 1024
}
#endif

