#if Server
import Foundation
import HummingbirdWSClient
import Logging
import Testing
import TestSupport

/// `sqlite-watch --serve` under a minute of load, as a busy deployment meets
/// it: 30 000 rows, another process committing as fast as it can, 150
/// clients that read their Server-Sent Events, 50 that never read a byte,
/// 10 WebSocket clients.
///
/// `REACTIVESQLITE_SOAK_SECONDS` sets the length (60 by default).
@Suite(.timeLimit(.minutes(5)), .onItsOwnThread)
struct ServeSoakTests {
    /// The bound the README states for the server's resident memory under
    /// this load, above its size once the first clients have their rows.
    static let residentGrowthBound = 300

    @Test func aMinuteOfCommitsAndClientsKeepsTheServerSmallAndEveryReaderExact() async throws {
        let seconds = ProcessInfo.processInfo.environment["REACTIVESQLITE_SOAK_SECONDS"].flatMap(Int.init) ?? 60
        let database = try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE item (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, t TEXT NOT NULL);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)
            INSERT INTO item SELECT x, 0, printf('item %d', x) FROM c;
            """)
        let sql = "SELECT * FROM item"
        let served = try await ServedWatch(database, sql: sql)
        let pid = served.process.processIdentifier
        let port = served.port

        let readers = try (0..<150).map { _ in
            try SSEClient(port: port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        }
        defer { readers.forEach { $0.disconnect() } }
        for reader in readers { #expect(await reader.wait(timeout: .seconds(60), until: { $0.replica.hasRows }) != nil) }
        let baseline = try #require(residentMegabytes(pid))
        // Clients that ask for the stream, then never read: the server
        // must not keep what it cannot send them.
        let silent = try (0..<50).map { _ in
            let connection = try RawConnection(port: port)
            connection.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            return connection
        }
        defer { silent.forEach { $0.close() } }
        let sockets = (0..<10).map { _ in WebSocketReplica(port: port) }
        defer { sockets.forEach { $0.stop() } }
        for socket in sockets { #expect(await socket.replica.wait(until: { $0.hasRows }, timeout: .seconds(60)) != nil) }

        // A shell that commits one statement after another, each its own
        // transaction, until stopped.
        let writer = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", """
                i=0
                while :; do
                  i=$((i + 1))
                  echo "UPDATE item SET v = v + 1 WHERE id = $(( (i * 7919) % 30000 + 1 ));"
                  echo "UPDATE item SET v = v + 1, t = 'batch $i' WHERE id BETWEEN $(( i % 29000 + 1 )) AND $(( i % 29000 + 200 ));"
                done | "$0" "$1"
                """, database.shell[0], database.path])
        var peak = baseline
        let clock = ContinuousClock()
        let end = clock.now + .seconds(seconds)
        while clock.now < end {
            if let megabytes = residentMegabytes(pid) { peak = max(peak, megabytes) }
            try await Task.sleep(for: .milliseconds(200))
        }
        writer.signal(SIGTERM)
        _ = try await writer.waitForExit()
        let stopped = clock.now
        let expected = try await database.currentRows(sql, ordered: false, keys: ["id"])
        #expect(expected.comparableRows != JSONRowReplica(keys: ["id"], isOrdered: false).comparableRows)

        for (index, reader) in readers.enumerated() {
            let stream = try await waitForReplica(reader, toEqual: expected, timeout: .seconds(60))
            #expect(stream.replica.inconsistency == nil, "reader \(index)")
        }
        for (index, socket) in sockets.enumerated() {
            let rows = expected.comparableRows
            let replica = await socket.replica.wait(until: { $0.comparableRows == rows }, timeout: .seconds(60))
            #expect(replica != nil, "WebSocket \(index): \(socket.failure.value ?? "open")")
            #expect(replica?.inconsistency == nil, "WebSocket \(index)")
        }
        // The time for every reader to hold the last state, from the
        // writer's end (a fresh fetch of 30 000 rows included).
        let lag = clock.now - stopped
        if let megabytes = residentMegabytes(pid) { peak = max(peak, megabytes) }
        print("soak: \(seconds) s, resident \(baseline) MB then at most \(peak) MB, all readers exact \(lag) after the writer stopped")
        #expect(peak - baseline < Self.residentGrowthBound, "resident memory grew from \(baseline) MB to \(peak) MB")
        #expect(lag < .seconds(5), "the readers held the last state \(lag) after the writer stopped")
        // The server still serves: the silent clients cost it nothing lasting.
        let late = try SSEClient(port: port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { late.disconnect() }
        _ = try await waitForReplica(late, toEqual: expected, timeout: .seconds(30))
        try await served.stop()
    }
}

/// A WebSocket client of `/ws` that applies every message to a replica.
final class WebSocketReplica: Sendable {
    let replica = ObservedState(JSONRowReplica(keys: ["id"], isOrdered: false))
    let failure = ObservedState<String?>(nil)
    private let task: Task<Void, Never>

    init(port: Int) {
        let replica = self.replica
        let failure = self.failure
        task = Task {
            var logger = Logger(label: "ws")
            logger.logLevel = .critical
            do {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/ws", logger: logger) { inbound, _, _ in
                    var messages = inbound.messages(maxSize: 64 << 20).makeAsyncIterator()
                    while let message = try await messages.next() {
                        guard case .text(let text) = message,
                            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                            let event = object["event"] as? String, let data = object["data"],
                            let dataText = try? JSONSerialization.data(withJSONObject: data)
                        else { continue }
                        replica.update { $0.apply(event: event, data: String(decoding: dataText, as: UTF8.self)) }
                    }
                }
            } catch {
                failure.update { $0 = "\(error)" }
            }
        }
    }

    func stop() { task.cancel() }
}
#endif
