#if Server
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL

/// The first handler of a guarded connection: it counts the connection,
/// holds each request head until it is complete and checked (see
/// `RequestHeadCheck`), then passes it on; after a WebSocket upgrade it
/// passes the socket's frames on, once checked (see `WebSocketFrameCheck`).
/// A refused request gets its response and the connection closes; nothing
/// more is read from it. A refused request pipelined after accepted ones
/// gets its response after theirs: the handler tells the server that the
/// input ended (as a client that half-closes its connection does), and
/// writes the refusal when the server, done with the earlier requests,
/// closes the connection.
final class RequestGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let connectionGuard: ConnectionGuard
    private let check: RequestHeadCheck
    private let isSecure: Bool
    /// The bytes of the head being read (and of what follows it).
    private var pending: [UInt8] = []
    /// Where the search for the head's end stopped.
    private var searched = 0
    private var deadline: Scheduled<Void>?
    private var isAdmitted = false
    private var isRefused = false
    /// Whether a request was passed on: the server may be answering it.
    private var hasPassedRequestOn = false
    /// A refusal to send when the server closes the connection, after the
    /// responses to the requests before it.
    private var deferredRefusal: RequestHeadCheck.Refusal?
    /// After a WebSocket upgrade: the socket's frames are not HTTP.
    private var passesThrough = false
    /// Where the client's frames begin and end, after an upgrade.
    private var frameCheck = WebSocketFrameCheck()

    init(connectionGuard: ConnectionGuard, isSecure: Bool) {
        self.connectionGuard = connectionGuard
        self.check = RequestHeadCheck(options: connectionGuard.options)
        self.isSecure = isSecure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !isAdmitted, !isRefused else { return }
        guard connectionGuard.admit() else {
            refuse(context, RequestHeadCheck.Refusal(
                status: 503,
                message: "the server has \(connectionGuard.options.maxConnections) connections open, its limit: try again later"))
            return
        }
        isAdmitted = true
        let connectionGuard = connectionGuard
        context.channel.closeFuture.whenComplete { _ in connectionGuard.release() }
        startDeadline(context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if passesThrough {
            forwardFrames(context, unwrapInboundIn(data))
            return
        }
        guard !isRefused else { return }
        let buffer = unwrapInboundIn(data)
        pending += buffer.readableBytesView
        if deadline == nil { startDeadline(context) }
        processPending(context)
    }

    private func processPending(_ context: ChannelHandlerContext) {
        while !pending.isEmpty {
            guard let length = RequestHeadCheck.headLength(in: pending, searchingFrom: searched) else {
                searched = pending.count
                if let refusal = check.checkPartial(pending) { refuse(context, refusal) }
                return
            }
            let head = Array(pending[..<length])
            pending.removeFirst(length)
            searched = 0
            switch check.check(head, isSecure: isSecure) {
            case .failure(let refusal):
                refuse(context, refusal)
                return
            case .success(let accepted):
                deadline?.cancel()
                deadline = nil
                hasPassedRequestOn = true
                context.fireChannelRead(wrapInboundOut(ByteBuffer(bytes: head)))
                if accepted.isUpgrade {
                    passesThrough = true
                    if !pending.isEmpty {
                        let rest = pending
                        pending = []
                        forwardFrames(context, ByteBuffer(bytes: rest))
                    }
                    return
                }
                if !pending.isEmpty { startDeadline(context) }
            }
        }
    }

    /// Passes the client's WebSocket frames on, unless one is not masked,
    /// or has a reserved opcode or bit: RFC 6455 (5.1, 5.2) has the server
    /// fail the connection then, with status 1002 (protocol error).
    /// Hummingbird's handler does not check the mask, and for a reserved
    /// opcode or bit sends its close frame but goes on reading, and never
    /// ends the socket's inbound stream.
    private func forwardFrames(_ context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        guard !isRefused else { return }
        guard frameCheck.receive(buffer.readableBytesView) else {
            isRefused = true
            // A close frame (FIN, opcode 8), unmasked as a server's are,
            // with its two-byte status: 1002.
            let close = ByteBuffer(bytes: [0x88, 0x02, 0x03, 0xEA])
            let channel = context.channel
            context.writeAndFlush(NIOAny(close)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.fireChannelRead(wrapInboundOut(buffer))
    }

    private func startDeadline(_ context: ChannelHandlerContext) {
        guard deadline == nil, !isRefused, !passesThrough else { return }
        let timeout = connectionGuard.options.headerTimeout
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            deadline = nil
            refuse(context, RequestHeadCheck.Refusal(
                status: 408, message: "the request's head did not arrive within \(timeout)"))
        }
    }

    /// Answers `refusal` and closes the connection; after the responses to
    /// the requests passed on before, if any.
    private func refuse(_ context: ChannelHandlerContext, _ refusal: RequestHeadCheck.Refusal) {
        guard !isRefused else { return }
        isRefused = true
        deadline?.cancel()
        deadline = nil
        pending = []
        if hasPassedRequestOn {
            // The server finishes the requests it has, then closes: see
            // `close(context:mode:promise:)`.
            deferredRefusal = refusal
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            return
        }
        let channel = context.channel
        context.writeAndFlush(NIOAny(Self.response(refusal))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The response of a refusal, which closes the connection.
    private static func response(_ refusal: RequestHeadCheck.Refusal) -> ByteBuffer {
        let body = refusal.message + "\n"
        var text = "HTTP/1.1 \(refusal.status) \(refusal.reasonPhrase)\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in refusal.extraHeaders { text += "\(name): \(value)\r\n" }
        text += "\r\n" + body
        return ByteBuffer(string: text)
    }

    /// The server closes the connection (or its output), its responses
    /// written: a deferred refusal goes last, then the connection closes.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode != .input, let refusal = deferredRefusal else {
            context.close(mode: mode, promise: promise)
            return
        }
        deferredRefusal = nil
        let channel = context.channel
        context.writeAndFlush(NIOAny(Self.response(refusal))).whenComplete { _ in channel.close(promise: promise) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A connection reset, or the like: nothing more to say on it.
        context.close(promise: nil)
    }
}

/// Follows the frames a WebSocket client sends, from their headers, and
/// tells when one is not masked (every client frame must be: RFC 6455,
/// 5.1), has a reserved opcode (3 to 7, 11 to 15), or a reserved bit (RSV1
/// to RSV3: the guarded server negotiates no extension that would give
/// them a meaning) (5.2). O(1) memory: it keeps a frame header at most (14
/// bytes) and skips payloads without reading them.
struct WebSocketFrameCheck {
    /// The bytes of the frame header being read.
    private var header: [UInt8] = []
    /// The bytes of the current frame's payload still to come.
    private var payloadLeft: UInt64 = 0

    /// Takes the next bytes of the stream; false once a frame that is not
    /// masked, or has a reserved opcode or bit, began.
    mutating func receive(_ bytes: some Collection<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if payloadLeft > 0 {
                let skipped = min(UInt64(bytes.distance(from: index, to: bytes.endIndex)), payloadLeft)
                index = bytes.index(index, offsetBy: Int(skipped))
                payloadLeft -= skipped
                continue
            }
            header.append(bytes[index])
            index = bytes.index(after: index)
            if header.count == 1 {
                // FIN, RSV1 to RSV3, then the opcode: continuation, text,
                // binary, close, ping or pong.
                guard header[0] & 0x70 == 0, [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(header[0] & 0x0F) else {
                    return false
                }
                continue
            }
            // The mask bit, first bit of the second byte.
            guard header[1] & 0x80 != 0 else { return false }
            let shortLength = header[1] & 0x7F
            let lengthBytes = shortLength == 126 ? 2 : shortLength == 127 ? 8 : 0
            // Two bytes, the extended length, the 4-byte masking key.
            guard header.count == 2 + lengthBytes + 4 else { continue }
            payloadLeft = lengthBytes == 0
                ? UInt64(shortLength) : header[2..<(2 + lengthBytes)].reduce(0) { $0 << 8 | UInt64($1) }
            header.removeAll(keepingCapacity: true)
        }
        return true
    }
}

/// A child channel behind a `RequestGuardHandler`: TLS first when the
/// server has it (the guard reads requests, not records), then the guard,
/// then `inner`'s handlers.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let connectionGuard: ConnectionGuard
    let tls: NIOSSLContext?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let connectionGuard = connectionGuard
        let tls = tls
        return channel.eventLoop.makeCompletedFuture {
            if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
            try channel.pipeline.syncOperations.addHandler(
                RequestGuardHandler(connectionGuard: connectionGuard, isSecure: tls != nil))
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with WebSocket upgrades (as `http1WebSocketUpgrade`), each
    /// connection behind `connectionGuard`: its limits, timeouts and
    /// `Host` and `Origin` checks apply before Hummingbird reads a request.
    ///
    /// - Parameters:
    ///   - webSocketRouter: The router of the WebSocket routes.
    ///   - connectionGuard: The checks, shared by every connection.
    ///   - tlsConfiguration: TLS for every connection (HTTPS and `wss:`),
    ///     or nil for clear text. Under TLS, `Origin` must be the server's
    ///     `https:` origin, and the token's cookie is `Secure`. The
    ///     connection limit and the header timeout count the handshake.
    ///   - idleTimeout: How long a connection may stay idle between two
    ///     requests (a streaming response is not idle).
    ///   - maxFrameSize: The largest WebSocket frame a client may send.
    /// - Throws: `NIOSSLError` when `tlsConfiguration` cannot make a context
    ///   (a certificate and key that do not match, for instance).
    public static func guardedHTTP1WebSocketUpgrade<WSResponderBuilder: HTTPResponderBuilder & _HB_SendableMetatype>(
        webSocketRouter: WSResponderBuilder, connectionGuard: ConnectionGuard, tlsConfiguration: TLSConfiguration? = nil,
        idleTimeout: Duration = .seconds(60), maxFrameSize: Int = 1 << 14
    ) throws -> HTTPServerBuilder where WSResponderBuilder.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = webSocketRouter.buildResponder()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: TimeAmount(idleTimeout)),
            ws: .init(maxFrameSize: maxFrameSize, validateUTF8: true))
        let tls = try tlsConfiguration.map { try NIOSSLContext(configuration: $0) }
        return HTTPServerBuilder { responder in
            GuardedChildChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                connectionGuard: connectionGuard, tls: tls)
        }
    }
}
#endif
