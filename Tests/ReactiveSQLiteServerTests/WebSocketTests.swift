#if Server
import DatabaseTestSupport
import Foundation
import HummingbirdTesting
import ReactiveSQLite
import ReactiveSQLiteServer
import Testing
import TestSupport

@Suite struct WebSocketTests {
    static let queries = [
        LiveQuery(name: "leaderboard", sql: "SELECT * FROM player ORDER BY score DESC, id", isOrdered: true),
        LiveQuery(
            name: "team", sql: "SELECT id, name, score FROM player WHERE team = :team",
            parameters: [.init("team", .text)]),
    ]

    @Test(arguments: DatabaseKind.allCases)
    func subscriptionsOnOneSocketGetRowsThenDifferences(kind: DatabaseKind) async throws {
        let database = try kind.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: Self.queries)
        try await withLiveServer(server) { _, client in
            try await withLiveSocket(client) { socket in
                try await socket.send(#"{"subscribe":"leaderboard"}"#)
                try await socket.send(#"{"subscribe":"team","id":"reds","arguments":{"team":"red"}}"#)
                try await socket.wait { frames in
                    Set(frames.filter { $0.event == "rows" }.compactMap(\.subscription)) == ["leaderboard", "reds"]
                }
                try await database.writer.write { db in
                    try db.execute(sql: "UPDATE player SET score = 500 WHERE id = 3")
                    try db.execute(sql: "INSERT INTO player VALUES (4, 'David', 'red', 10)")
                }
                let leaderboard = try freshReplica(
                    database.writer, sql: Self.queries[0].sql, keys: ["id"], isOrdered: true)
                let reds = try freshReplica(
                    database.writer, sql: Self.queries[1].sql, arguments: ["team": "red"], keys: ["id"], isOrdered: false)
                try await socket.wait { frames in frames.filter { $0.event == "diff" }.count >= 2 }
                #expect(socket.replica(of: "leaderboard", keys: ["id"], isOrdered: true).comparableRows == leaderboard.comparableRows)
                #expect(socket.replica(of: "reds", keys: ["id"], isOrdered: false).comparableRows == reds.comparableRows)
                #expect(socket.frames.value.allSatisfy { $0.id != nil })

                // Unsubscribed: no more frames for it.
                try await socket.send(#"{"unsubscribe":"reds"}"#)
                try await waitUntil { server.subscriberCount == 1 }
                try await database.writer.write { db in try db.execute(sql: "UPDATE player SET score = 1") }
                try await socket.wait { frames in frames.filter { $0.event == "diff" }.count >= 3 }
                #expect(socket.frames.value.filter { $0.subscription == "reds" }.count == 2)
            }
        }
    }

    @Test func malformedMessagesGetAnErrorFrameAndTheSocketStaysOpen() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: Self.queries)
        try await withLiveServer(server) { _, client in
            try await withLiveSocket(client) { socket in
                let messages: [(String, String)] = [
                    ("not json", "malformed message"),
                    ("{}", "a message has \"subscribe\" or \"unsubscribe\""),
                    (#"{"subscribe":"nope"}"#, "no live query named 'nope'"),
                    (#"{"subscribe":"team","arguments":{"team":5}}"#, "must be a string, not the integer 5"),
                    (#"{"subscribe":"team","arguments":{"team":"red","extra":1}}"#, "unknown argument 'extra'"),
                    (#"{"subscribe":"team","arguments":{"team":["red"]}}"#, "not an array or object"),
                    (#"{"subscribe":"team"}"#, "missing argument 'team'"),
                    (#"{"subscribe":17}"#, "malformed message"),
                ]
                for (index, (message, reason)) in messages.enumerated() {
                    try await socket.send(message)
                    let frames = try await socket.wait { $0.count > index }
                    #expect(frames[index].error?.contains(reason) == true, "\(message): \(frames[index].data)")
                }
                try await socket.outbound.write(.binary(.init(string: "{}")))
                let afterBinary = try await socket.wait { $0.count > messages.count }
                #expect(afterBinary.last?.error?.contains("binary messages are not supported") == true)
                // Still open, still serving.
                try await socket.send(#"{"subscribe":"leaderboard","id":"a"}"#)
                try await socket.send(#"{"subscribe":"leaderboard","id":"a"}"#)
                let frames = try await socket.wait { frames in
                    frames.contains { $0.subscription == "a" && $0.event == "rows" }
                        && frames.contains { $0.subscription == "a" && $0.error?.contains("is open on this socket") == true }
                }
                #expect(frames.filter { $0.subscription == "a" && $0.event == "rows" }.count == 1)
                #expect(server.subscriberCount == 1)
            }
        }
    }

    @Test func largeMessagesArriveInFramesTheClientAccepts() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        try await database.writer.write { db in
            for id in 10..<110 {
                try db.execute(
                    sql: "INSERT INTO player VALUES (?, ?, 'red', ?)", arguments: [id, String(repeating: "n", count: 1000), id])
            }
        }
        let server = try LiveQueryServer(reader: database.writer, queries: Self.queries)
        try await withLiveServer(server) { _, client in
            // The test client accepts frames of 16 KB at most (its default).
            try await withLiveSocket(client) { socket in
                try await socket.send(#"{"subscribe":"leaderboard"}"#)
                try await socket.wait { $0.contains { $0.event == "rows" } }
                let expected = try freshReplica(database.writer, sql: Self.queries[0].sql, keys: ["id"], isOrdered: true)
                #expect(socket.replica(of: "leaderboard", keys: ["id"], isOrdered: true).comparableRows == expected.comparableRows)
                #expect(expected.rows.count == 103)
            }
        }
    }

    @Test func aSocketHoldsAtMostItsLimitOfSubscriptions() async throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        var options = LiveQueryServerOptions()
        options.maxSubscriptionsPerSocket = 2
        let server = try LiveQueryServer(reader: database.writer, queries: Self.queries, options: options)
        try await withLiveServer(server) { _, client in
            try await withLiveSocket(client) { socket in
                for id in ["a", "b", "c"] { try await socket.send(#"{"subscribe":"leaderboard","id":"\#(id)"}"#) }
                let frames = try await socket.wait { frames in
                    frames.filter { $0.event == "rows" }.count == 2 && frames.contains { $0.subscription == "c" }
                }
                #expect(frames.first { $0.subscription == "c" }?.error?.contains("maxSubscriptionsPerSocket") == true)
            }
        }
    }

    @Test func aSubscriptionResumesFromTheLastEventID() async throws {
        let database = try DatabaseKind.pool.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: Self.queries)
        try await withLiveServer(server) { _, client in
            let holder = ObservedState<String?>(nil)
            try await withLiveSocket(client) { socket in
                try await socket.send(#"{"subscribe":"leaderboard"}"#)
                let frames = try await socket.wait { $0.contains { $0.event == "rows" } }
                holder.update { $0 = frames.last?.id }
            }
            let lastID = try #require(holder.value)
            try await withLiveSocket(client) { socket in
                try await socket.send(#"{"subscribe":"leaderboard","lastEventID":"\#(lastID)"}"#)
                try await waitUntil { server.subscriberCount == 1 }
                try await database.writer.write { db in try db.execute(sql: "UPDATE player SET score = 7 WHERE id = 1") }
                let frames = try await socket.wait { !$0.isEmpty }
                #expect(frames.map(\.event) == ["diff"])
            }
        }
    }
}
#endif
