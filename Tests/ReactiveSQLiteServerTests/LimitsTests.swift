#if Server
import DatabaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import ReactiveSQLite
import ReactiveSQLiteServer
import Testing
import TestSupport

@Suite struct LimitsTests {
    static let all = LiveQuery(name: "all", sql: "SELECT * FROM player ORDER BY id", isOrdered: true)

    @Test func subscribersBeyondTheLimitAreRefusedWithAReason() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.maxSubscribers = 2
        options.keepAliveInterval = .milliseconds(50)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all], options: options)
        try await withLiveServer(server) { port, client in
            let first = try SSEClient(port: port, path: "/live/all")
            let second = try SSEClient(port: port, path: "/live/all")
            defer { second.disconnect() }
            for sse in [first, second] { #expect(await sse.wait(until: { $0.replica.hasRows }) != nil) }
            try await client.execute(uri: "/live/all", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(String(buffer: response.body).contains("maxSubscribers"))
            }
            try await withLiveSocket(client) { socket in
                try await socket.send(#"{"subscribe":"all"}"#)
                let frames = try await socket.wait { !$0.isEmpty }
                #expect(frames.first?.error?.contains("maxSubscribers") == true)
            }
            first.disconnect()
            try await waitUntil { server.subscriberCount == 1 }
            let third = try SSEClient(port: port, path: "/live/all")
            defer { third.disconnect() }
            #expect(await third.wait(until: { $0.replica.hasRows }) != nil)
        }
    }

    /// Clients that reset their connection once subscribed, before their
    /// response's head is written: the head's write fails and the
    /// response's body never runs (or, when the server has not read the
    /// reset yet, the body runs on a closed connection). Each slot comes
    /// back at once, before the next client comes (the subscription was
    /// released only by the body: 240 to 290 of 300 such clients kept
    /// theirs for ever). No keep-alive comes to find a closed connection:
    /// only the server's notice of the reset can give the slot back.
    ///
    /// Each response is held until its client has reset: a test that only
    /// raced its resets against the server's responses, then waited for no
    /// subscriber, saw none before the server had read a request (under
    /// load), and the late requests then took the slots the test's last
    /// client needed.
    @Test func connectionsResetBeforeTheirResponseGiveTheirSlotsBack() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.keepAliveInterval = .seconds(600)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all], options: options)
        let held = HeldResponses()
        try await withHeldResponses(of: server, held) { port in
            for number in 0..<50 {
                let connection = try RawConnection(port: port)
                connection.send("GET /held/\(number) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                try await waitUntil { held.isSubscribed(number) }
                #expect(server.subscriberCount == 1)
                connection.reset()
                held.letGo(number)
                try await waitUntil { server.subscriberCount == 0 }
            }
            let sse = try SSEClient(port: port, path: "/live/all")
            defer { sse.disconnect() }
            #expect(await sse.wait(until: { $0.replica.hasRows })?.status == 200)
        }
    }

    /// How a client leaves.
    enum Departure: String, CustomTestStringConvertible {
        /// A TCP reset, as a client that crashed or a middlebox sends.
        case reset
        /// A close, as a browser sends when a page closes its `EventSource`.
        case close

        var testDescription: String { rawValue }
    }

    /// Clients that leave while their stream waits for a change, after
    /// their first rows: each subscription ends, and gives its slot back,
    /// at once. (Noticed only at the next write, the keep-alive 15 s later
    /// by default, a reset client held its slot that long.)
    @Test(arguments: [Departure.reset, .close])
    func clientsThatLeaveAWaitingStreamGiveTheirSlotsBackAtOnce(departure: Departure) async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.keepAliveInterval = .seconds(600)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all], options: options)
        try await withLiveServer(server) { port, _ in
            var connections: [RawConnection] = []
            for _ in 0..<20 {
                let connection = try RawConnection(port: port)
                connection.send("GET /live/all HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
                let rows = Array("event: rows\n".utf8)
                let (bytes, _) = await connection.readOnItsOwnThread(timeout: .seconds(30)) { $0.firstRange(of: rows) != nil }
                #expect(bytes.firstRange(of: rows) != nil, "\(String(decoding: bytes, as: UTF8.self))")
                connections.append(connection)
            }
            #expect(server.subscriberCount == 20)
            for connection in connections {
                switch departure {
                case .reset: connection.reset()
                case .close: connection.close()
                }
            }
            try await waitUntil { server.subscriberCount == 0 }
        }
    }

    @Test func aResultWithTooManyRowsEndsItsSubscriptionsWithAReason() async throws {
        let database = try DatabaseKind.fileQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.maxRows = 3
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all], options: options)
        let failures = Recorder<LiveQueryFailure>()
        server.failureHandler = { failures.append($0) }
        try await withLiveServer(server) { port, _ in
            let sse = try SSEClient(port: port, path: "/live/all")
            #expect(await sse.wait(until: { $0.replica.rows.count == 3 }) != nil)
            try await database.writer.write { db in try db.execute(sql: "INSERT INTO player VALUES (4, 'David', 'red', 10)") }
            let ended = try #require(await sse.wait(until: { $0.isClosed }))
            #expect(ended.events.last?.name == "error")
            #expect(ended.events.last?.data.contains("returned more than the server's limit of 3 rows") == true)
            // The application hears of it too, once.
            let failure = try #require(try await failures.wait(for: 1).first)
            #expect(failure.queryName == "all")
            guard case .tooManyRows(count: 4, limit: 3) = failure.reason else {
                Issue.record("\(failure.reason)")
                return
            }
            try await waitUntil { server.subscriberCount == 0 && server.observationCount == 0 }

            // The next subscription observes again.
            try await database.writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id = 4") }
            let again = try SSEClient(port: port, path: "/live/all")
            defer { again.disconnect() }
            #expect(await again.wait(until: { $0.replica.rows.count == 3 }) != nil)
            #expect(failures.values.count == 1)
        }
    }

    /// The database file is deleted under the server: its subscribers are
    /// told, the application gets a `LiveQueryFailure` with SQLite's
    /// SQLITE_READONLY_DBMOVED, and a new subscription is ended the same way
    /// (without it, every client would keep the old rows for ever).
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func aDeletedDatabaseFileEndsTheSubscriptionsAndTellsTheApplication(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.externalChangePollInterval = .milliseconds(20)
        let database = try kind.make(configuration: configuration, sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all])
        let failures = Recorder<LiveQueryFailure>()
        server.failureHandler = { failures.append($0) }
        try await withLiveServer(server) { port, _ in
            let sse = try SSEClient(port: port, path: "/live/all")
            #expect(await sse.wait(until: { $0.replica.hasRows }) != nil)
            let path = try #require(database.path)
            #expect(unlink(path) == 0)
            let ended = try #require(await sse.wait(until: { $0.isClosed }))
            #expect(ended.events.last?.name == "error")
            #expect(ended.events.last?.data.contains("was deleted or moved away") == true)
            let failure = try #require(try await failures.wait(for: 1).first)
            guard case .error(let error as DatabaseError) = failure.reason else {
                Issue.record("\(failure.reason)")
                return
            }
            #expect(error.extendedResultCode == .SQLITE_READONLY_DBMOVED)

            let again = try SSEClient(port: port, path: "/live/all")
            defer { again.disconnect() }
            let refused = try #require(await again.wait(until: { $0.isClosed }))
            #expect(refused.events.last?.data.contains("was deleted or moved away") == true)
            #expect(!refused.replica.hasRows)
        }
    }

    @Test func aMessageLargerThanTheQueueLimitEndsTheSubscriptionWithAReason() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.maxQueuedBytes = 300
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all], options: options)
        try await withLiveServer(server) { port, _ in
            let sse = try SSEClient(port: port, path: "/live/all")
            #expect(await sse.wait(until: { $0.replica.hasRows }) != nil)
            try await database.writer.write { db in
                try db.execute(sql: "UPDATE player SET name = ? WHERE id = 1", arguments: [String(repeating: "x", count: 400)])
            }
            let ended = try #require(await sse.wait(until: { $0.isClosed }))
            #expect(ended.events.last?.name == "error")
            #expect(ended.events.last?.data.contains("maxQueuedBytes") == true)
            #expect(ended.replica.rows.count == 3)
        }
    }

    @Test func aSlowClientIsSentMergedDifferencesAndDelaysNobody() async throws {
        let database = try DatabaseKind.pool.make(sql: playersSQL)
        // 300 rows of 1 KB; each change rewrites 60 of them: 120 KB per
        // difference, 12 MB in all, more than the socket buffers hold.
        try await database.writer.write { db in
            for id in 10..<310 {
                try db.execute(
                    sql: "INSERT INTO player VALUES (?, ?, 'red', ?)",
                    arguments: [id, String(repeating: "n", count: 1000), id])
            }
        }
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all])
        try await withLiveServer(server) { port, _ in
            let fast = try SSEClient(port: port, path: "/live/all", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            // 400 KB/s at most.
            let slow = try SSEClient(
                port: port, path: "/live/all", replica: JSONRowReplica(keys: ["id"], isOrdered: true),
                readPause: .milliseconds(20))
            defer { fast.disconnect(); slow.disconnect() }
            #expect(await fast.wait(until: { $0.replica.hasRows }) != nil)
            #expect(await slow.wait(until: { $0.replica.hasRows }) != nil)
            // The slow client stops reading: the socket buffers hold a few
            // differences for it, then the server keeps one merged message.
            // (Counting the events of a client that only reads slowly made
            // the test depend on the machine's load: starved, the fast
            // client fell behind and was sent merged differences too.)
            slow.pauseReading()
            let eventsBeforePause = slow.state.value.events.count
            for step in 0..<100 {
                try await database.writer.write { db in
                    try db.execute(
                        sql: "UPDATE player SET score = score + 1000, name = ? WHERE id BETWEEN ? AND ?",
                        arguments: [String(repeating: "\(step % 10)", count: 1000), 10 + step % 240, 69 + step % 240])
                }
            }
            let expected = try freshReplica(database.writer, sql: Self.all.sql, keys: ["id"], isOrdered: true)
            // Nobody waits for the slow client: the fast one is up to date
            // while it does not read at all.
            let fastStream = try await waitForReplica(fast, toEqual: expected)
            #expect(slow.state.value.replica.comparableRows != expected.comparableRows)
            slow.resumeReading()
            let slowStream = try await waitForReplica(slow, toEqual: expected, timeout: .seconds(90))
            #expect(fastStream.replica.inconsistency == nil && slowStream.replica.inconsistency == nil)
            // Merged: fewer differences than commits. The slow client got
            // what the socket buffers held, then merged differences (29
            // events for the 100 commits, 12 MB, here).
            let slowDifferences = slowStream.events.count - eventsBeforePause
            #expect(slowDifferences < 100, "\(slowDifferences) differences for 100 commits")
        }
    }

    @Test func anObservationOutlivesItsLastSubscriberForItsIdleLifetime() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.keepAliveInterval = .milliseconds(50)
        options.idleLifetime = .seconds(600)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all], options: options)
        try await withLiveServer(server) { port, _ in
            let first = try SSEClient(port: port, path: "/live/all", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            let seen = try #require(await first.wait(until: { $0.replica.hasRows }))
            first.disconnect()
            try await waitUntil { server.subscriberCount == 0 }
            #expect(server.observationCount == 1)
            let resumed = try SSEClient(
                port: port, path: "/live/all", headers: ["Last-Event-ID": try #require(seen.lastEventID)],
                replica: seen.replica)
            defer { resumed.disconnect() }
            try await waitUntil { server.subscriberCount == 1 }
            try await database.writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id = 2") }
            let stream = try await waitForReplica(
                resumed, toEqual: try freshReplica(database.writer, sql: Self.all.sql, keys: ["id"], isOrdered: true))
            #expect(stream.events.map(\.name) == ["diff"])
        }
    }

    /// Clients that subscribe with ever new arguments, then leave: the
    /// server keeps at most `maxIdleObservations` observations without
    /// subscribers, stopping the one idle the longest, and an idle one that
    /// gets a subscriber again is kept.
    @Test func idleObservationsAreBounded() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let team = LiveQuery(
            name: "team", sql: "SELECT * FROM player WHERE team = :team", parameters: [.init("team", .text)])
        var options = LiveQueryServerOptions()
        // A departed Server-Sent Events client is noticed at the next write.
        options.keepAliveInterval = .milliseconds(50)
        options.idleLifetime = .seconds(600)
        options.maxIdleObservations = 2
        let server = try LiveQueryServer(reader: database.writer, queries: [team], options: options)
        try await withLiveServer(server) { port, _ in
            func visit(_ name: String) async throws {
                let client = try SSEClient(port: port, path: "/live/team?team=\(name)")
                #expect(await client.wait(until: { $0.replica.hasRows }) != nil)
                client.disconnect()
                try await waitUntil { server.subscriberCount == 0 }
            }
            try await visit("a")
            try await visit("b")
            #expect(server.observationCount == 2)
            try await visit("a")  // "a" is idle the shortest now
            try await visit("c")  // stops "b"
            #expect(server.observationCount == 2)
            for index in 0..<20 { try await visit("t\(index)") }
            #expect(server.observationCount == 2)
        }
    }

    @Test func shuttingDownEndsEverySubscriptionWithAReason() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.all])
        try await withLiveServer(server) { port, _ in
            let sse = try SSEClient(port: port, path: "/live/all")
            #expect(await sse.wait(until: { $0.replica.hasRows }) != nil)
            server.shutDown()
            let ended = try #require(await sse.wait(until: { $0.isClosed }))
            #expect(ended.events.last?.data.contains("the server is shutting down") == true)
            #expect(server.observationCount == 0)
        }
    }
}

/// The subscriptions of `GET /held/{number}` (to `all`), whose responses
/// are held before their head is written until the test lets them go.
private final class HeldResponses: Sendable {
    private struct State {
        /// The connections whose subscription is open, and response held.
        var subscribed: Set<Int> = []
        /// The connections whose response may be written.
        var released: Set<Int> = []
    }

    private let state = Locked(State())

    /// Whether connection `number`'s subscription is open.
    func isSubscribed(_ number: Int) -> Bool { state.withLock { $0.subscribed.contains(number) } }

    /// Lets connection `number`'s response be written.
    func letGo(_ number: Int) { state.withLock { _ = $0.released.insert(number) } }

    /// Records that connection `number` is subscribed, then waits until
    /// the test lets its response go.
    func hold(_ number: Int) async throws {
        state.withLock { _ = $0.subscribed.insert(number) }
        try await waitUntil { [state] in state.withLock { $0.released.contains(number) } }
    }
}

/// Serves `server`'s event streams at `/live`, and at `/held/{number}`
/// subscriptions to `all` whose responses `held` holds, on a loopback port
/// for the duration of `body`.
private func withHeldResponses(
    of server: LiveQueryServer, _ held: HeldResponses, _ body: @Sendable @escaping (_ port: Int) async throws -> Void
) async throws {
    let router = Router()
    server.addEventStreamRoutes(to: router)
    router.get("/held/:number") { request, context in
        let number = try context.parameters.require("number", as: Int.self)
        let response = server.eventStreamResponse(query: "all", request: request)
        try await held.hold(number)
        return response
    }
    try await Application(router: router).test(.live) { client in
        guard let port = client.port else { throw SSEClientError("no port") }
        try await body(port)
    }
}
#endif
