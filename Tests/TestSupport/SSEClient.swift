import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Server-Sent Events client over a plain socket, on a thread of its own
/// (never a cooperative thread): it sends one `GET`, reads the response,
/// decodes chunked bodies, and records the events, applying `rows` and
/// `diff` events to a `JSONRowReplica` as they arrive.
///
/// With `readPause`, it reads 8 KB at a time with that pause between reads,
/// from a small receive buffer: a slow client, which the server's writes
/// wait for once the socket buffers are full.
public final class SSEClient: Sendable {
    public struct Event: Sendable, Equatable {
        public var id: String?
        public var name: String
        public var data: String
    }

    public struct Stream: Sendable {
        /// The response's status, once read.
        public var status: Int?
        /// Header names lowercased.
        public var headers: [String: String] = [:]
        /// The events received, unless the client keeps none (see `init`).
        public var events: [Event] = []
        /// How many events were received.
        public var eventCount = 0
        /// The last event received, and when.
        public var lastEvent: Event?
        public var lastEventTime: ContinuousClock.Instant?
        /// When the last `rows` or `diff` event came: the replica holds what
        /// the stream says from then on.
        public var lastRowsEventTime: ContinuousClock.Instant?
        /// The client's state in its `ReplicaMemo`, if it has one.
        public var memoState: Int?
        public var replica: JSONRowReplica
        /// The body of a response that is not an event stream.
        public var body = ""
        /// Whether the server closed the stream (or `disconnect()` was called).
        public var isClosed = false
        /// Why the stream closed: the last chunk, the end of the stream, or
        /// a read error (its errno).
        public var closeReason: String?
        /// The id of the last event that had one.
        public var lastEventID: String?
    }

    public let state: ObservedState<Stream>
    /// The socket, while it is open: the reading thread closes it and sets
    /// nil under the lock, and `disconnect()` shuts it down under the same
    /// lock, only while it is open. (Shut down after its close, the number
    /// may name another socket of the process by then, the lowest free
    /// number being reused: another client's stream would end, seen as
    /// "end of stream" after its first event.)
    private let openDescriptor: Locked<Int32?>
    /// The socket's number, for tests that check its reuse.
    public let socketNumber: Int32
    /// Holds the reading thread between `pauseReading()` and `resumeReading()`.
    private let gate = ReadingGate()

    /// Connects to `127.0.0.1:port` and requests `path`.
    ///
    /// - Parameter keepsEvents: Whether `events` keeps every event; without,
    ///   only the replica, the count and the last event are kept (a soak's
    ///   hundreds of clients would otherwise hold gigabytes of history), and
    ///   the last event's data is cut to its first 2 000 characters.
    /// - Parameter memo: Where the client records its `rows` and `diff`
    ///   events instead of applying them (see `ReplicaMemo`): `replica` then
    ///   stays as it is, and `memoState` is the client's state in the memo.
    public init(
        port: Int, path: String, headers: [String: String] = [:], replica: JSONRowReplica = .init(keys: [], isOrdered: false),
        readPause: Duration? = nil, keepsEvents: Bool = true, memo: ReplicaMemo? = nil
    ) throws {
        var stream = Stream(replica: replica)
        stream.memoState = memo?.start
        let state = ObservedState(stream)
        self.state = state
        let descriptor = try connectToLoopback(port: port) { descriptor in
            guard readPause != nil else { return }
            var size: Int32 = 8192
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            Glibc.close(descriptor)
            throw SSEClientError("could not send the request")
        }
        let openDescriptor = Locked<Int32?>(descriptor)
        self.openDescriptor = openDescriptor
        socketNumber = descriptor
        let gate = self.gate
        let thread = Thread {
            var reader = ResponseReader(state: state, keepsEvents: keepsEvents, memo: memo)
            var buffer = [UInt8](repeating: 0, count: readPause == nil ? 65536 : 8192)
            while true {
                gate.waitWhilePaused()
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                // A signal (SIGCHLD of the tests' child processes) may
                // interrupt the read: that ends nothing.
                if count < 0, errno == EINTR { continue }
                if count <= 0 {
                    let ending = count == 0 ? "end of stream" : "read error: errno \(errno)"
                    state.update { $0.closeReason = $0.closeReason ?? ending }
                    break
                }
                reader.consume(buffer[0..<count])
                if let readPause {
                    let nanoseconds = readPause.components.seconds * 1_000_000_000 + readPause.components.attoseconds / 1_000_000_000
                    usleep(UInt32(nanoseconds / 1000))
                }
            }
            openDescriptor.withLock { open in
                Glibc.close(descriptor)
                open = nil
            }
            state.update { $0.isClosed = true }
        }
        thread.start()
    }

    /// Stops reading after the read under way: what the server sends then
    /// fills the socket buffers, and waits.
    public func pauseReading() { gate.set(paused: true) }

    /// Reads again after `pauseReading()`.
    public func resumeReading() { gate.set(paused: false) }

    /// Ends the connection (the reading thread closes the socket); nothing
    /// once the socket is closed.
    public func disconnect() {
        openDescriptor.withLock { open in
            guard let descriptor = open else { return }
            state.update { $0.closeReason = $0.closeReason ?? "disconnected by the client" }
            shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    /// Waits until `condition` holds for the stream; nil after `timeout`.
    public func wait(
        timeout: Duration = .seconds(30), until condition: @escaping @Sendable (Stream) -> Bool
    ) async -> Stream? {
        await state.wait(until: condition, timeout: timeout)
    }
}

/// Waits until the client holds `expected`; throws with what it holds after the timeout.
public func waitForReplica(
    _ client: SSEClient, toEqual expected: JSONRowReplica, timeout: Duration = .seconds(30)
) async throws -> SSEClient.Stream {
    let rows = expected.comparableRows
    guard let stream = await client.wait(timeout: timeout, until: { $0.replica.hasRows && $0.replica.comparableRows == rows })
    else {
        let stream = client.state.value
        throw SSEClientError("""
            the client does not hold the expected rows after \(timeout) (closed: \(stream.isClosed) \
            (\(stream.closeReason ?? "open")), \
            \(stream.eventCount) events, inconsistency: \(stream.replica.inconsistency ?? "none"))
            holds: \(stream.replica.comparableRows)
            expected: \(rows)
            last event: \(stream.lastEvent.map { "\($0.name) \($0.data)" } ?? "none")
            """)
    }
    return stream
}
public struct SSEClientError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Parses an HTTP/1.1 response carrying an event stream.
private struct ResponseReader {
    let state: ObservedState<SSEClient.Stream>
    private var pending: [UInt8] = []
    private var headersDone = false
    private var isChunked = false
    private var isEventStream = false
    /// Decoded body bytes not yet parsed as lines.
    private var body: [UInt8] = []
    private var chunkRemaining = 0
    /// Whether the last chunk of a chunked body arrived.
    private var hasEnded = false
    private var eventID: String?
    private var eventName = ""
    private var eventData: [String] = []

    private let keepsEvents: Bool
    /// Where events are recorded instead of applied.
    private let memo: ReplicaMemo?

    init(state: ObservedState<SSEClient.Stream>, keepsEvents: Bool, memo: ReplicaMemo?) {
        self.state = state
        self.keepsEvents = keepsEvents
        self.memo = memo
    }

    mutating func consume(_ bytes: ArraySlice<UInt8>) {
        pending += bytes
        if !headersDone {
            guard let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            pending.removeSubrange(..<end.upperBound)
            headersDone = true
            var lines = head.components(separatedBy: "\r\n")
            let status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "")
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            isChunked = headers["transfer-encoding"]?.lowercased() == "chunked"
            isEventStream = headers["content-type"]?.hasPrefix("text/event-stream") == true
            state.update { $0.status = status; $0.headers = headers }
        }
        decodeBody()
        if isEventStream { parseEvents() } else if !body.isEmpty {
            let text = String(decoding: body, as: UTF8.self)
            body.removeAll()
            state.update { $0.body += text }
        }
        if hasEnded { state.update { $0.isClosed = true; $0.closeReason = $0.closeReason ?? "last chunk" } }
    }

    /// The index of the first `byte` in `bytes[from...]` (`memchr`: a
    /// soak's 150 clients each read megabytes, in a debug build).
    private static func index(of byte: UInt8, in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let found = memchr(buffer.baseAddress! + start, Int32(byte), buffer.count - start) else { return nil }
            return buffer.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    private mutating func decodeBody() {
        guard isChunked else {
            body += pending
            pending.removeAll()
            return
        }
        // Consumed bytes are removed once, at the end.
        var cursor = 0
        defer { pending.removeSubrange(..<cursor) }
        while true {
            if chunkRemaining > 0 {
                let count = min(chunkRemaining, pending.count - cursor)
                body += pending[cursor..<cursor + count]
                cursor += count
                chunkRemaining -= count
                if chunkRemaining > 0 { return }
                // The chunk's CRLF follows.
                chunkRemaining = -2
            }
            if chunkRemaining < 0 {
                guard pending.count - cursor >= 2 else { return }
                cursor += 2
                chunkRemaining = 0
            }
            guard let newline = Self.index(of: UInt8(ascii: "\n"), in: pending, from: cursor) else { return }
            var sizeEnd = newline
            if sizeEnd > cursor, pending[sizeEnd - 1] == UInt8(ascii: "\r") { sizeEnd -= 1 }
            let sizeText = String(decoding: pending[cursor..<sizeEnd], as: UTF8.self).split(separator: ";").first ?? ""
            cursor = newline + 1
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return }
            if size == 0 {
                // The last chunk: the response, and so the stream, ends
                // (once the events before it are parsed).
                hasEnded = true
                return
            }
            chunkRemaining = size
        }
    }

    private mutating func parseEvents() {
        // Parsed lines are removed once, at the end.
        var cursor = 0
        defer { body.removeSubrange(..<cursor) }
        while let newline = Self.index(of: UInt8(ascii: "\n"), in: body, from: cursor) {
            var line = String(decoding: body[cursor..<newline], as: UTF8.self)
            cursor = newline + 1
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty {
                dispatch()
            } else if line.hasPrefix(":") {
                continue
            } else {
                let field: Substring
                var value: Substring = ""
                if let colon = line.firstIndex(of: ":") {
                    field = line[..<colon]
                    value = line[line.index(after: colon)...]
                    if value.hasPrefix(" ") { value = value.dropFirst() }
                } else {
                    field = Substring(line)
                }
                switch field {
                case "id": eventID = String(value)
                case "event": eventName = String(value)
                case "data": eventData.append(String(value))
                default: break
                }
            }
        }
    }

    private mutating func dispatch() {
        defer {
            eventID = nil
            eventName = ""
            eventData = []
        }
        guard !eventData.isEmpty else { return }
        let event = SSEClient.Event(id: eventID, name: eventName.isEmpty ? "message" : eventName, data: eventData.joined(separator: "\n"))
        let keepsEvents = self.keepsEvents
        let now = ContinuousClock.now
        let memo = self.memo
        state.update { stream in
            if keepsEvents {
                stream.events.append(event)
                stream.lastEvent = event
            } else {
                stream.lastEvent = SSEClient.Event(id: event.id, name: event.name, data: String(event.data.prefix(2000)))
            }
            stream.eventCount += 1
            stream.lastEventTime = now
            if event.name == "rows" || event.name == "diff" { stream.lastRowsEventTime = now }
            if let id = event.id { stream.lastEventID = id }
            if let memo {
                // Only these two change a replica (`JSONRowReplica.apply`).
                if let from = stream.memoState, event.name == "rows" || event.name == "diff" {
                    stream.memoState = memo.record(event.name + "\n" + event.data, from: from)
                }
            } else {
                stream.replica.apply(event: event.name, data: event.data)
            }
        }
    }
}

/// Whether a client's reading thread may read.
///
/// `@unchecked Sendable`: `isPaused` is only read and written with
/// `condition` locked.
private final class ReadingGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isPaused = false

    func set(paused: Bool) {
        condition.lock()
        isPaused = paused
        condition.broadcast()
        condition.unlock()
    }

    func waitWhilePaused() {
        condition.lock()
        while isPaused { condition.wait() }
        condition.unlock()
    }
}
