#if Server
import HummingbirdWebSocket
import NIOWebSocket
import ReactiveSQLite

/// The subscriptions of one WebSocket, each served by its own task.
///
/// Messages are written with `writeTextMessage`, in frames no larger than
/// the socket's maximum frame size, which clients reassemble. They are
/// written one at a time, under `writing`: the frames of one message are
/// contiguous on the wire (RFC 6455, 5.4), whichever task writes it. A
/// subscription computes its next message once it holds the socket, so
/// the server holds at most one message per socket (the one being
/// written), and a subscription that waits sends the newest rows when its
/// turn comes.
final class LiveSocket: Sendable {
    let server: LiveQueryServer
    let outbound: WebSocketOutboundWriter
    private let subscriptions = LockedState<[String: LiveSubscription]>([:])
    /// Held while a message is written.
    private let writing = AsyncLock()

    init(server: LiveQueryServer, outbound: WebSocketOutboundWriter) {
        self.server = server
        self.outbound = outbound
    }

    /// Opens a subscription and starts its task, or answers an error frame.
    func subscribe(_ message: ClientMessage, in group: inout ThrowingDiscardingTaskGroup<any Error>) async {
        guard let name = message.subscribe else { return }
        let id = message.id ?? name
        let limit = server.options.maxSubscriptionsPerSocket
        enum Admission { case admitted, duplicate, full }
        let admission: Admission = subscriptions.withLock { subscriptions in
            if subscriptions[id] != nil { return .duplicate }
            return subscriptions.count >= limit ? .full : .admitted
        }
        switch admission {
        case .duplicate:
            await send(.error("a subscription with id '\(id.prefix(128))' is open on this socket"), subscription: id)
            return
        case .full:
            await send(
                .error("this socket has \(limit) subscriptions, the server's limit (maxSubscriptionsPerSocket)"),
                subscription: id)
            return
        case .admitted:
            break
        }
        let subscription: LiveSubscription
        do {
            subscription = try server.subscribe(
                query: name, arguments: message.arguments ?? [:], lastEventID: message.lastEventID)
        } catch {
            await send(.error(error.message), subscription: id)
            return
        }
        subscriptions.withLock { $0[id] = subscription }
        group.addTask { [self] in
            defer {
                subscriptions.withLock { if $0[id] === subscription { $0[id] = nil } }
                server.unsubscribe(subscription)
            }
            enum Written { case message, nothing, last }
            events: for await _ in subscription.wakeups {
                while true {
                    // A closed socket (or a cancelled task): the inbound loop ends too.
                    let written: Written? = try? await writing.withLock {
                        // Computed now, from the newest revision.
                        guard let event = subscription.nextEvent() else { return .nothing }
                        // Keep-alives are for Server-Sent Events.
                        if event.kind == .ping { return .message }
                        try await outbound.writeTextMessage(event.webSocketText(subscription: id))
                        return event.isFinal ? .last : .message
                    }
                    switch written {
                    case .message: continue
                    case .nothing: continue events
                    case .last, nil: break events
                    }
                }
            }
        }
    }

    /// Ends the subscription `id`, at once: the id is free for a new
    /// subscription (its task, when it ends, leaves the new one in place).
    func unsubscribe(_ id: String) {
        subscriptions.withLock { $0.removeValue(forKey: id) }?.cancel()
    }

    /// A message the server cannot take: an error frame, the socket stays open.
    func reject(_ reason: String) async {
        await write("{\"event\":\"error\",\"data\":{\"error\":\(JSONText.string(reason))}}")
    }

    private func send(_ event: LiveEvent, subscription id: String) async {
        await write(event.webSocketText(subscription: id))
    }

    /// Writes `text` as one message, after the message being written.
    private func write(_ text: String) async {
        try? await writing.withLock { try await outbound.writeTextMessage(text) }
    }

    /// Closes the socket with `code`, after the message being written
    /// (a close frame ends the messages: it must not cut one).
    func close(_ code: WebSocketErrorCode, reason: String) async {
        try? await writing.withLock { try await outbound.close(code, reason: reason) }
    }

    /// Ends every subscription (the socket closed).
    func closeAll() {
        for subscription in subscriptions.withLock({ Array($0.values) }) { subscription.cancel() }
    }
}
#endif
