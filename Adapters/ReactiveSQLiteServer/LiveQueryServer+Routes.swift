#if Server
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import ReactiveSQLite
import ServiceLifecycle

extension LiveQueryServer {
    /// Adds the live-query endpoints under `path`:
    /// - `GET {path}/{name}?arg=value`: Server-Sent Events of one query
    ///   (`event: rows`, then `event: diff`, `event: error` before a close);
    /// - `GET {path}` with a WebSocket upgrade: one socket for any number of
    ///   subscriptions (see `serveWebSocket(inbound:outbound:subscribing:)`).
    ///
    /// The application must be served with WebSocket upgrades:
    /// `Application(router: router, server: .http1WebSocketUpgrade(webSocketRouter: router))`.
    public func addRoutes<Context: WebSocketRequestContext>(to router: Router<Context>, at path: String = "/live") {
        let base = addEventStreamRoutes(to: router, at: path)
        router.ws(RouterPath(base.isEmpty ? "/" : base)) { [self] inbound, outbound, _ in
            try await serveWebSocket(inbound: inbound, outbound: outbound)
        }
    }

    /// Adds the Server-Sent Events endpoint only, `GET {path}/{name}?arg=value`,
    /// for an application without WebSocket upgrades.
    ///
    /// - Returns: The path, without a final `/`.
    @discardableResult
    public func addEventStreamRoutes<Context: RequestContext>(to router: Router<Context>, at path: String = "/live") -> String {
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        router.get(RouterPath(base + "/:name")) { [self] request, context in
            eventStreamResponse(query: context.parameters.get("name") ?? "", request: request)
        }
        return base
    }

    // MARK: - Server-Sent Events

    /// A name or value of a URL query as a form encodes it: `+` is a
    /// space, then percent-decoded; nil when the escapes are not valid
    /// UTF-8 (or a `%` is not followed by two hexadecimal digits).
    static func formDecoded(_ text: Substring) -> String? {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        guard spaced.contains("%") else { return spaced }
        return spaced.removingPercentEncoding
    }

    /// The Server-Sent Events response of a subscription to `query`, its
    /// arguments taken from the request's URL query (`?team=red`), decoded
    /// as browsers encode them (`application/x-www-form-urlencoded`, as
    /// `URLSearchParams` writes them): `+` is a space, and names and values
    /// are percent-decoded (`?%C3%A9quipe=red+team` gives `équipe` =
    /// `red team`; a `+` itself is `%2B`). A name or value that is not
    /// valid percent-encoded UTF-8 is refused (400). Resuming
    /// from its `Last-Event-ID` header. A request the server refuses gets a
    /// 4xx or 503 response whose text says why.
    ///
    /// The stream ends when the client closes or resets its connection
    /// (noticed at once, by reading the request's connection), when the
    /// subscription fails or exceeds a limit (after an `error` event), and
    /// when the server shuts down gracefully. The connection closes with
    /// the stream.
    ///
    /// Public so that an application can serve a query at a path of its own.
    /// `request` is the request as the server received it: its body is read
    /// to notice the client's close (Hummingbird's
    /// `RequestBody.consumeWithInboundCloseHandler`, which traps on a
    /// request the application built with a body of its own, as
    /// `Request(head:body: RequestBody(buffer:))`).
    public func eventStreamResponse(query name: String, request: Request) -> Response {
        var arguments: [String: ClientValue] = [:]
        for item in (request.uri.query ?? "").split(separator: "&") {
            // Hummingbird's `queryParameters` decodes the values only, and
            // keeps `+`: the raw query is decoded here.
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = Self.formDecoded(parts[0]), let value = Self.formDecoded(parts.count > 1 ? parts[1] : "")
            else {
                return Self.refusal(.badRequest("the argument '\(item.prefix(64))' is not valid percent-encoded UTF-8"))
            }
            guard arguments[key] == nil else {
                return Self.refusal(.badRequest("the argument '\(key.prefix(64))' is given twice"))
            }
            arguments[key] = .string(value)
        }
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!]
        let subscription: LiveSubscription
        do {
            subscription = try subscribe(query: name, arguments: arguments, lastEventID: lastEventID)
        } catch {
            return Self.refusal(error)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        let keepAlive = options.keepAliveInterval
        // The body may never run (the head's write fails on a connection
        // reset at once): the lease, owned by the body, releases the slot
        // when the body ends or when it is dropped unrun.
        let lease = SubscriptionLease(server: self, subscription: subscription)
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let pings = Task {
                while !Task.isCancelled {
                    try await Task.sleep(for: keepAlive)
                    subscription.requestPing()
                }
            }
            defer {
                pings.cancel()
                lease.release()
            }
            // A client that closed its side of the connection (a reset, or a
            // close: an event stream's client sends nothing after its
            // request) has left: its stream ends at once. A write alone
            // would notice it only at the next change or keep-alive (15 s
            // by default), and its slot would be held until then.
            try await request.body.consumeWithInboundCloseHandler { _ in
                try await withGracefulShutdownHandler {
                    // Reconnect after a second (the browser's default is longer).
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    events: for await _ in subscription.wakeups {
                        while let event = subscription.nextEvent() {
                            try await writer.write(ByteBuffer(string: event.serverSentEvent))
                            if event.isFinal { break events }
                        }
                    }
                } onGracefulShutdown: {
                    subscription.end(reason: "the server is shutting down")
                }
            } onInboundClosed: {
                subscription.finish()
            }
            try await writer.finish(nil)
        })
    }

    /// The answer to a plain `GET` of a WebSocket's path: `426 Upgrade
    /// Required`, with `Upgrade: websocket`, and a text that says so.
    public static func upgradeRequired(path: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.upgrade] = "websocket"
        headers[.connection] = "Upgrade"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(
            status: .upgradeRequired, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: "\(path) is a WebSocket: open it with an upgrade (ws://)\n")))
    }

    static func refusal(_ error: LiveRequestError) -> Response {
        let status: HTTPResponse.Status = switch error.kind {
        case .badRequest: .badRequest
        case .notFound: .notFound
        case .unavailable: .serviceUnavailable
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: error.message + "\n")))
    }

    // MARK: - WebSocket

    /// Serves one WebSocket until it closes.
    ///
    /// Client messages (text frames, JSON):
    /// - `{"subscribe":"leaderboard","id":"s1","arguments":{"team":"red"},"lastEventID":"…"}`
    ///   (`id` defaults to the query's name; `arguments` and `lastEventID`
    ///   are optional);
    /// - `{"unsubscribe":"s1"}`.
    ///
    /// Server messages: `{"subscription":"s1","event":"rows"|"diff","id":"…","data":{...}}`,
    /// `{"subscription":"s1","event":"error","data":{"error":"…"}}` when a
    /// subscription ends, and `{"event":"error","data":{"error":"…"}}` for a
    /// message the server cannot take (the socket stays open). A message
    /// larger than `LiveQueryServerOptions.maxClientMessageBytes`, in one
    /// frame or in several, closes the socket with status 1009 (message
    /// too big), and ends its subscriptions.
    ///
    /// The messages of one socket are written one at a time (the frames of
    /// each are contiguous), each subscription's when it is ready for it:
    /// the server holds at most one message per socket.
    ///
    /// - Parameters:
    ///   - inbound: The client's messages.
    ///   - outbound: Where the server's messages go.
    ///   - initial: A query to subscribe to at once (its id is its name),
    ///     with text arguments: `sqlite-watch --serve`'s `/ws`.
    public func serveWebSocket(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        subscribing initial: (query: String, arguments: [String: String])? = nil
    ) async throws {
        let socket = LiveSocket(server: self, outbound: outbound)
        try await withThrowingDiscardingTaskGroup { group in
            defer { socket.closeAll() }
            if let initial {
                await socket.subscribe(
                    ClientMessage(subscribe: initial.query, arguments: initial.arguments.mapValues { .string($0) }),
                    in: &group)
            }
            let maxSize = options.maxClientMessageBytes
            for try await message in inbound.messages(maxSize: maxSize) {
                // The stream checks the size of fragmented messages only.
                let size = switch message {
                case .text(let text): text.utf8.count
                case .binary(let buffer): buffer.readableBytes
                }
                guard size <= maxSize else {
                    await socket.close(
                        .messageTooLarge,
                        reason: "a message is larger than the server's limit (\(maxSize) bytes, maxClientMessageBytes)")
                    break
                }
                guard case .text(let text) = message else {
                    await socket.reject("binary messages are not supported: send JSON text")
                    continue
                }
                let clientMessage: ClientMessage
                do {
                    clientMessage = try JSONDecoder().decode(ClientMessage.self, from: Data(text.utf8))
                } catch {
                    await socket.reject("malformed message: expected {\"subscribe\":NAME,...} or {\"unsubscribe\":ID}")
                    continue
                }
                if clientMessage.subscribe != nil {
                    await socket.subscribe(clientMessage, in: &group)
                } else if let id = clientMessage.unsubscribe {
                    socket.unsubscribe(id)
                } else {
                    await socket.reject("a message has \"subscribe\" or \"unsubscribe\"")
                }
            }
            socket.closeAll()
        }
    }
}

/// Releases a subscription's slot once: when its owner calls `release()`,
/// or when the owner is dropped without calling it.
final class SubscriptionLease: Sendable {
    private let server: LiveQueryServer
    private let subscription: LiveSubscription
    private let isReleased = LockedState(false)

    init(server: LiveQueryServer, subscription: LiveSubscription) {
        self.server = server
        self.subscription = subscription
    }

    func release() {
        let isFirst = isReleased.withLock { isReleased in
            defer { isReleased = true }
            return !isReleased
        }
        if isFirst { server.unsubscribe(subscription) }
    }

    deinit { release() }
}

/// A WebSocket client's message.
struct ClientMessage: Decodable, Sendable {
    var subscribe: String?
    var unsubscribe: String?
    var id: String?
    var arguments: [String: ClientValue]?
    var lastEventID: String?
}
#endif
