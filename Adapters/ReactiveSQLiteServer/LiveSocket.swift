#if Server
import HummingbirdWebSocket
import ReactiveSQLite

/// The subscriptions of one WebSocket, each written to by its own task.
///
/// Messages are written with `writeTextMessage`, in frames no larger than
/// the socket's maximum frame size, which clients reassemble.
final class LiveSocket: Sendable {
    let server: LiveQueryServer
    let outbound: WebSocketOutboundWriter
    private let subscriptions = LockedState<[String: LiveSubscription]>([:])

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
            events: for await _ in subscription.wakeups {
                while let event = subscription.nextEvent() {
                    if event.kind == .ping { continue }
                    // A closed socket: the inbound loop ends too.
                    guard (try? await outbound.writeTextMessage(event.webSocketText(subscription: id))) != nil else {
                        break events
                    }
                    if event.isFinal { break events }
                }
            }
        }
    }

    func unsubscribe(_ id: String) {
        subscriptions.withLock { $0[id] }?.cancel()
    }

    /// A message the server cannot take: an error frame, the socket stays open.
    func reject(_ reason: String) async {
        try? await outbound.writeTextMessage("{\"event\":\"error\",\"data\":{\"error\":\(JSONText.string(reason))}}")
    }

    private func send(_ event: LiveEvent, subscription id: String) async {
        try? await outbound.writeTextMessage(event.webSocketText(subscription: id))
    }

    /// Ends every subscription (the socket closed).
    func closeAll() {
        for subscription in subscriptions.withLock({ Array($0.values) }) { subscription.cancel() }
    }
}
#endif
