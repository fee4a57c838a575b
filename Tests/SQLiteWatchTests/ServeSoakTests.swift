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
/// `REACTIVESQLITE_SOAK_SECONDS` sets the length (60 by default). Alone in
/// the process (`.isolated`): it measures memory and lag, and its 210
/// clients would starve other tests.
@Suite(.isolated, .timeLimit(.minutes(8)))
struct ServeSoakTests {
    /// The bound the README states for the server's resident memory under
    /// this load, in megabytes.
    static let residentBound = 400

    /// Applies a recorded event: `rows` or `diff` and the event's data
    /// (Server-Sent Events), or `ws` and a WebSocket message.
    @Sendable static func apply(_ replica: inout JSONRowReplica, _ event: String) {
        guard let newline = event.firstIndex(of: "\n") else { return }
        let kind = String(event[..<newline])
        let payload = String(event[event.index(after: newline)...])
        guard kind == "ws" else {
            replica.apply(event: kind, data: payload)
            return
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
            let name = object["event"] as? String, let data = object["data"],
            let dataText = try? JSONSerialization.data(withJSONObject: data)
        else { return }
        replica.apply(event: name, data: String(decoding: dataText, as: UTF8.self))
    }

    @Test func aMinuteOfCommitsAndClientsKeepsTheServerSmallAndEveryReaderExact() async throws {
        let seconds = ProcessInfo.processInfo.environment["REACTIVESQLITE_SOAK_SECONDS"].flatMap(Int.init) ?? 60
        let rowCount = 30_000
        let database = try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE item (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, t TEXT NOT NULL);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < \(rowCount))
            INSERT INTO item SELECT x, 0, printf('item %d', x) FROM c;
            """)
        let sql = "SELECT * FROM item"
        let served = try await ServedWatch(database, sql: sql)
        let pid = served.process.processIdentifier
        let port = served.port
        let clock = ContinuousClock()

        // Every client records the events it receives; each distinct
        // sequence of events is applied once, at the end (see `ReplicaMemo`).
        let memo = ReplicaMemo(JSONRowReplica(keys: ["id"], isOrdered: false), apply: Self.apply)
        let readers = try (0..<150).map { _ in
            try SSEClient(port: port, path: "/events", keepsEvents: false, memo: memo)
        }
        defer { readers.forEach { $0.disconnect() } }
        for (index, reader) in readers.enumerated() {
            #expect(await reader.wait(timeout: .seconds(60), until: { $0.memoState != memo.start }) != nil, "reader \(index)")
        }
        // Clients that ask for the stream, then never read: the server
        // must not keep what it cannot send them.
        let silent = try (0..<50).map { _ in
            let connection = try RawConnection(port: port)
            connection.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
            return connection
        }
        defer { silent.forEach { $0.close() } }
        let sockets = (0..<10).map { _ in WebSocketReplica(port: port, memo: memo) }
        defer { sockets.forEach { $0.stop() } }
        for (index, socket) in sockets.enumerated() {
            #expect(await socket.state.wait(until: { $0 != memo.start }, timeout: .seconds(60)) != nil, "WebSocket \(index)")
        }
        progress("clients connected")
        let baseline = try #require(residentMegabytes(pid))

        // The sqlite3 shell, fed statements as fast as it runs them, each
        // its own transaction; closing its input ends it.
        let writer = try SpawnedProcess(
            database.shell[0], ["-cmd", ".timeout 10000", database.path], standardInput: .pipe, standardError: .pipe)
        let input = try #require(writer.inputWriter)
        let isWriting = Locked(true)
        let statementCount = Locked(0)
        let feeder = Thread {
            // A shell that died gives EPIPE here, not a SIGPIPE to the tests.
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            var step = 0
            while isWriting.value {
                step += 1
                // A one-row update, and a 200-row one.
                let statements = "UPDATE item SET v = v + 1 WHERE id = \((step * 7919) % rowCount + 1);\n"
                    + "UPDATE item SET v = v + 1, t = 'batch \(step)' WHERE id BETWEEN \(step % (rowCount - 1000) + 1) "
                    + "AND \(step % (rowCount - 1000) + 200);\n"
                guard SpawnedProcess.writeAll(Array(statements.utf8), to: input) else { break }
                statementCount.withLock { $0 += 2 }
            }
            close(input)
        }
        feeder.start()
        progress("writer started")
        var peak = baseline
        let end = clock.now + .seconds(seconds)
        while clock.now < end {
            if let megabytes = residentMegabytes(pid) { peak = max(peak, megabytes) }
            try await Task.sleep(for: .milliseconds(200))
        }
        isWriting.withLock { $0 = false }
        progress("writer told to stop")
        let exit = await writer.waitForExit(timeout: .seconds(60))
        // The writer's last commit is behind us from here.
        let stopped = clock.now
        #expect(exit == .exit(0), "the writer: \(String(describing: exit))")
        progress("writer exited")
        let expected = try await database.currentRows(sql, ordered: false, keys: ["id"])
        #expect(expected.rows.count == rowCount)

        progress("expected rows read")
        // One minute for every client to hold the final state.
        let deadline = clock.now + .seconds(60)
        let remaining = { max(.seconds(1), deadline - clock.now) }
        // Whether the replica of each state reached is the expected one,
        // computed once per state.
        let rows = expected.comparableRows
        let verdicts = Locked<[Int: Bool]>([:])
        let isExpected: @Sendable (Int?) -> Bool = { state in
            guard let state else { return false }
            if let verdict = verdicts.value[state] { return verdict }
            let verdict = memo.replica(at: state).comparableRows == rows
            verdicts.withLock { $0[state] = verdict }
            return verdict
        }
        // The lag: from the writer's end to the last rows a client needed
        // (it holds the final state from then on).
        var lastNeeded = stopped
        for (index, reader) in readers.enumerated() {
            if let stream = await reader.wait(timeout: remaining(), until: { isExpected($0.memoState) }) {
                if let time = stream.lastRowsEventTime { lastNeeded = max(lastNeeded, time) }
                continue
            }
            let stream = reader.state.value
            let replica = memo.replica(at: stream.memoState ?? memo.start)
            let differing = zip(replica.comparableRows, rows).filter { $0 != $1 }.count
            Issue.record("""
                reader \(index): \(stream.eventCount) events, the last one \
                \(stream.lastEventTime.map { "\($0 - stopped)" } ?? "-") after the writer's end, closed: \
                \(stream.isClosed); \(replica.rows.count) rows, \(differing) differ from the expected; \
                \(replica.inconsistency ?? "consistent")
                """)
        }
        let streamsLag = lastNeeded - stopped
        progress("readers done")
        for (index, socket) in sockets.enumerated() {
            if await socket.state.wait(until: { isExpected($0) }, timeout: remaining()) != nil {
                if let time = socket.lastMessageTime.value { lastNeeded = max(lastNeeded, time) }
                continue
            }
            let replica = memo.replica(at: socket.state.value)
            Issue.record("""
                WebSocket \(index) (\(socket.failure.value ?? "open"), \(socket.messageCount.value) messages): \
                \(replica.rows.count) rows; \(replica.inconsistency ?? "consistent")
                """)
        }
        for state in verdicts.value.keys {
            #expect(memo.replica(at: state).inconsistency == nil)
        }
        progress("sockets done")
        let lag = lastNeeded - stopped
        if let megabytes = residentMegabytes(pid) { peak = max(peak, megabytes) }
        let events = readers.map { $0.state.value.eventCount }
        // The run's mean time between two events of a reader.
        let cycle = Duration.seconds(seconds) / max(1, events.min() ?? 1)
        print("""
            ServeSoakTests: \(seconds) s, \(statementCount.value) commits; server resident \(baseline) MB with every client \
            connected, at most \(peak) MB (bound \(Self.residentBound) MB); \(events.min() ?? 0) to \(events.max() ?? 0) \
            events per reader, \(memo.stateCount) distinct states; \
            every client held the last state \(lag) after the writer stopped (the event streams \(streamsLag)), \
            \(String(format: "%.1f", lag / cycle)) broadcast cycles
            """)
        #expect(peak < Self.residentBound, "resident memory grew from \(baseline) MB to \(peak) MB")
        // No backlog: when the writer stops, the server is in the middle
        // of a broadcast (at most one cycle left), then sends the final
        // state (one more), which 150 readers in this process then parse.
        // A cycle is 0.17 to 0.45 s here in a debug build on two shared
        // cores, so a bound in seconds (1 s) failed at 2.2 cycles without
        // a fault; seven runs gave 1.4 to 2.4 cycles. A server that queued
        // commits would be seconds behind, far above four cycles.
        #expect(lag < cycle * 4, "the clients held the last state \(lag) after the writer stopped; one cycle \(cycle)")
        // The server still serves a new client its first rows.
        let late = try SSEClient(port: port, path: "/events", replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { late.disconnect() }
        _ = try await waitForReplica(late, toEqual: expected, timeout: .seconds(30))
        progress("late client done")
        try await served.stop()
    }
}

private func progress(_ step: String) {
    FileHandle.standardError.write(Data("PROGRESS \(Date()) \(step)\n".utf8))
}

/// A WebSocket client of `/ws` that records every message in a memo.
final class WebSocketReplica: Sendable {
    /// The client's state in the memo.
    let state: ObservedState<Int>
    let failure = ObservedState<String?>(nil)
    /// When the last `rows` or `diff` message came.
    let lastMessageTime = Locked<ContinuousClock.Instant?>(nil)
    let messageCount = Locked(0)
    private let task: Task<Void, Never>

    init(port: Int, memo: ReplicaMemo) {
        let state = ObservedState(memo.start)
        self.state = state
        let failure = self.failure
        let lastMessageTime = self.lastMessageTime
        let messageCount = self.messageCount
        task = Task {
            var logger = Logger(label: "ws")
            logger.logLevel = .critical
            do {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/ws", logger: logger) { inbound, _, _ in
                    var messages = inbound.messages(maxSize: 64 << 20).makeAsyncIterator()
                    while let message = try await messages.next() {
                        guard case .text(let text) = message else { continue }
                        messageCount.withLock { $0 += 1 }
                        // A keep-alive or a notice leaves the rows as they are.
                        let head = text.prefix(80)
                        guard head.contains(#""event":"rows""#) || head.contains(#""event":"diff""#) else { continue }
                        state.update { $0 = memo.record("ws\n" + text, from: $0) }
                        lastMessageTime.withLock { $0 = .now }
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
