#if Server
import DatabaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReactiveSQLite
import ReactiveSQLiteServer
import Testing
import TestSupport

@Suite struct ServerSentEventsTests {
    static let leaderboard = LiveQuery(
        name: "leaderboard", sql: "SELECT * FROM player ORDER BY score DESC, id", isOrdered: true)
    static let team = LiveQuery(
        name: "team", sql: "SELECT id, name, score FROM player WHERE team = :team",
        parameters: [.init("team", .text)])

    @Test(arguments: DatabaseKind.allCases)
    func rowsThenDifferencesKeepAClientExact(kind: DatabaseKind) async throws {
        let database = try kind.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard, Self.team])
        try await withLiveServer(server) { port, _ in
            let ordered = try SSEClient(
                port: port, path: "/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            let red = try SSEClient(
                port: port, path: "/live/team?team=red", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
            defer { ordered.disconnect(); red.disconnect() }
            let first = try await waitForReplica(
                ordered, toEqual: try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true))
            #expect(first.status == 200)
            #expect(first.headers["content-type"] == "text/event-stream; charset=utf-8")
            #expect(first.events.first?.name == "rows")
            #expect(first.events.first?.id != nil)

            try database.writer.writeSQL("UPDATE player SET score = 200 WHERE id = 3")
            try database.writer.writeSQL("INSERT INTO player VALUES (4, 'David', 'red', 90)")
            try database.writer.writeSQL("DELETE FROM player WHERE id = 1")
            let stream = try await waitForReplica(
                ordered, toEqual: try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true))
            #expect(stream.events.dropFirst().allSatisfy { $0.name == "diff" && $0.id != nil })
            #expect(Set(stream.events.compactMap(\.id)).count == stream.events.count, "each event has its own id")
            let redRows = try freshReplica(
                database.writer, sql: Self.team.sql, arguments: ["team": "red"], keys: ["id"], isOrdered: false)
            _ = try await waitForReplica(red, toEqual: redRows)
            #expect(redRows.rows.count == 2)
        }
    }

    @Test func seededRandomChangesReachEveryClientExactly() async throws {
        let database = try DatabaseKind.pool.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard])
        try await withLiveServer(server) { port, _ in
            let clients = try (0..<8).map { _ in
                try SSEClient(port: port, path: "/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            }
            defer { clients.forEach { $0.disconnect() } }
            var random = SplitMix64(seed: 20_261_127)
            for step in 0..<300 {
                var statements: [(String, StatementArguments)] = []
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let id = Int.random(in: 1...40, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        statements.append(("DELETE FROM player WHERE id = ?", [id]))
                    case 1:
                        // Ties in the ordering, broken by id.
                        statements.append((
                            "INSERT OR REPLACE INTO player VALUES (?, ?, 'red', ?)",
                            [id, "P\(id)", Int.random(in: 0...20, using: &random) * 10]))
                    default:
                        statements.append((
                            "UPDATE player SET score = ?, name = name || '.' WHERE id = ?",
                            [Int.random(in: 0...20, using: &random) * 10, id]))
                    }
                }
                let batch = statements
                try await database.writer.write { db in
                    for (sql, arguments) in batch { try db.execute(sql: sql, arguments: arguments) }
                }
                if step == 150 { clients[0].disconnect() }
            }
            let expected = try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true)
            for client in clients.dropFirst() {
                let stream = try await waitForReplica(client, toEqual: expected)
                #expect(stream.replica.inconsistency == nil)
            }
        }
    }

    /// The cause of the streams lost under load (issue 29): a client
    /// disconnected after its socket was closed shut down whatever socket
    /// had taken its number since, another client's, whose stream then
    /// ended after its first event. A disconnect after the close now does
    /// nothing.
    @Test func disconnectingAClosedClientLeavesTheSocketThatReusedItsNumberAlone() async throws {
        let database = try DatabaseKind.fileQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard])
        try await withLiveServer(server) { port, _ in
            let expected = try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true)
            let first = try SSEClient(port: port, path: "/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            _ = try await waitForReplica(first, toEqual: expected)
            first.disconnect()
            #expect(await first.wait(until: { $0.isClosed }) != nil)
            let second = try SSEClient(port: port, path: "/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            defer { second.disconnect() }
            _ = try await waitForReplica(second, toEqual: expected)
            // Usually the same number: the lowest free one.
            first.disconnect()
            try database.writer.writeSQL("UPDATE player SET score = 7 WHERE id = 1")
            let after = try await waitForReplica(
                second, toEqual: try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true))
            #expect(after.closeReason == nil)
        }
    }

    @Test func aClientThatResumesFromTheLatestEventIsSentNothingUntilTheNextChange() async throws {
        let database = try DatabaseKind.fileQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard])
        try await withLiveServer(server) { port, _ in
            let first = try SSEClient(port: port, path: "/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            try database.writer.writeSQL("UPDATE player SET score = 1 WHERE id = 1")
            let expected = try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true)
            let seen = try await waitForReplica(first, toEqual: expected)
            let lastID = try #require(seen.lastEventID)
            first.disconnect()

            // Same id: nothing until the next change, then a difference from those rows.
            let resumed = try SSEClient(
                port: port, path: "/live/leaderboard", headers: ["Last-Event-ID": lastID],
                replica: seen.replica)
            defer { resumed.disconnect() }
            #expect(await resumed.wait(until: { $0.status == 200 }) != nil)
            try database.writer.writeSQL("UPDATE player SET score = 2 WHERE id = 1")
            let after = try await waitForReplica(
                resumed, toEqual: try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true))
            #expect(after.events.map(\.name) == ["diff"])

            // Another id: the rows.
            let stale = try SSEClient(
                port: port, path: "/live/leaderboard", headers: ["Last-Event-ID": "not-an-id"],
                replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            defer { stale.disconnect() }
            let fresh = try await waitForReplica(
                stale, toEqual: try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true))
            #expect(fresh.events.map(\.name) == ["rows"])
        }
    }

    @Test func oneObservationPerQueryAndArguments() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.idleLifetime = .zero
        options.keepAliveInterval = .milliseconds(50)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard, Self.team], options: options)
        try await withLiveServer(server) { port, _ in
            let paths = ["/live/team?team=red", "/live/team?team=red", "/live/team?team=blue", "/live/leaderboard"]
            let clients = try paths.map { try SSEClient(port: port, path: $0) }
            for client in clients { #expect(await client.wait(until: { $0.replica.hasRows }) != nil) }
            #expect(server.subscriberCount == 4)
            #expect(server.observationCount == 3)
            // Departures are seen at the next keep-alive, and each
            // observation stops with its last subscriber (idleLifetime 0).
            for client in clients { client.disconnect() }
            try await waitUntil { server.subscriberCount == 0 && server.observationCount == 0 }
        }
    }

    @Test func anApplicationWithoutWebSocketsServesTheEventStreams() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard])
        let router = Router()
        server.addEventStreamRoutes(to: router, at: "/api/live/")
        try await Application(router: router).test(.live) { client in
            let port = try #require(client.port)
            let sse = try SSEClient(port: port, path: "/api/live/leaderboard", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            defer { sse.disconnect() }
            _ = try await waitForReplica(
                sse, toEqual: try freshReplica(database.writer, sql: Self.leaderboard.sql, keys: ["id"], isOrdered: true))
            try await client.execute(uri: "/api/live/nope", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func refusedRequestsSayWhy() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [Self.leaderboard, Self.team])
        try await withLiveServer(server) { _, client in
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("/live/nope", .notFound, "no live query named 'nope'"),
                ("/live/team", .badRequest, "missing argument 'team'"),
                ("/live/team?team=red&color=blue", .badRequest, "unknown argument 'color'"),
                ("/live/team?team=red&team=blue", .badRequest, "given twice"),
                ("/live/leaderboard?limit=3", .badRequest, "it has no parameters"),
                ("/live/team?team=red%27%3B%20DROP%20TABLE%20player", .ok, ""),
            ]
            for (path, status, reason) in cases where status != .ok {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == status, "\(path)")
                    #expect(String(buffer: response.body).contains(reason), "\(path): \(String(buffer: response.body))")
                }
            }
            let count = try await database.writer.read { db in
                try SQLRequest<Int>(sql: "SELECT count(*) FROM player").fetchOne(db)
            }
            #expect(count == 3)
        }
    }

    /// Arguments are decoded as browsers encode a query
    /// (`URLSearchParams`, forms): `+` is a space, `%2B` a plus, names are
    /// percent-decoded as values are; bad escapes are refused.
    @Test func argumentsAreDecodedAsBrowsersEncodeThem() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL + """
            INSERT INTO player VALUES (4, 'Dora', 'red team', 50), (5, 'Eve', 'red+team', 40);
            """)
        let query = LiveQuery(
            name: "team", sql: "SELECT id FROM player WHERE team = :équipe ORDER BY id",
            parameters: [.init("équipe", .text)], isOrdered: true)
        let server = try LiveQueryServer(reader: database.writer, queries: [query])
        try await withLiveServer(server) { port, client in
            for (path, ids) in [
                ("/live/team?%C3%A9quipe=red+team", [4]), ("/live/team?%C3%A9quipe=red%20team", [4]),
                ("/live/team?%C3%A9quipe=red%2Bteam", [5]),
            ] {
                let sse = try SSEClient(port: port, path: path, replica: JSONRowReplica(keys: ["id"], isOrdered: true))
                defer { sse.disconnect() }
                let stream = try await waitForReplica(sse, toEqual: try freshReplica(
                    database.writer, sql: "SELECT id FROM player WHERE id IN (\(ids.map(String.init).joined(separator: ",")))",
                    keys: ["id"], isOrdered: true))
                #expect(stream.status == 200, "\(path)")
            }
            for path in ["/live/team?%C3%A9quipe=%E9", "/live/team?%ZZ=red"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .badRequest, "\(path)")
                }
            }
        }
    }

    @Test func typedParametersCheckClientValues() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let query = LiveQuery(
            name: "best", sql: "SELECT * FROM player WHERE score >= :minimum ORDER BY score DESC LIMIT :limit",
            parameters: [.init("minimum", .real), .init("limit", .integer, default: 2)], isOrdered: true)
        let server = try LiveQueryServer(reader: database.writer, queries: [query])
        try await withLiveServer(server) { port, client in
            for path in ["/live/best?minimum=abc", "/live/best?minimum=1&limit=2.5", "/live/best?minimum=inf"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .badRequest, "\(path)")
                }
            }
            let sse = try SSEClient(port: port, path: "/live/best?minimum=70", replica: JSONRowReplica(keys: ["id"], isOrdered: true))
            defer { sse.disconnect() }
            let stream = try await waitForReplica(sse, toEqual: try freshReplica(
                database.writer, sql: query.sql, arguments: ["minimum": 70.0, "limit": 2], keys: ["id"], isOrdered: true))
            #expect(stream.replica.rows.count == 2)
        }
    }
}

#endif
