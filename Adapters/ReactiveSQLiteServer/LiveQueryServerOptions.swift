#if Server
/// The limits of a `LiveQueryServer`, and its timings.
///
/// Every limit ends only what exceeds it, with a reason the client receives
/// (an HTTP status and text, or an `error` event or frame): the server and
/// the other clients go on.
public struct LiveQueryServerOptions: Sendable, Hashable {
    /// The most subscriptions at once, over every transport and query. One
    /// more is refused: `503 Service Unavailable` for Server-Sent Events, an
    /// error frame on a WebSocket.
    public var maxSubscribers = 1_000
    /// The most subscriptions one WebSocket may hold at once.
    public var maxSubscriptionsPerSocket = 32
    /// The most rows a live query may return. A result with more ends the
    /// subscriptions of that query (and its arguments) with a reason; a new
    /// subscription tries again. The server stops reading a result at row
    /// `maxRows + 1`: arguments that select millions of rows cost no more
    /// than the limit.
    public var maxRows = 100_000
    /// The most bytes waiting to be written to one client. A subscriber is
    /// sent one message at a time (the next one is computed when the
    /// previous one is written, merging every change made meanwhile), so a
    /// client holds at most one message in the server's memory: a message
    /// larger than this ends the subscription with a reason.
    public var maxQueuedBytes = 16 << 20
    /// The largest WebSocket message a client may send, in bytes (its
    /// subscribe and unsubscribe messages are small). A larger one, in one
    /// frame or in several, closes the socket with status 1009 (message too
    /// big).
    public var maxClientMessageBytes = 64 << 10
    /// How often an idle Server-Sent Events stream gets a comment line, so
    /// that proxies keep it open and a departed client is noticed.
    public var keepAliveInterval: Duration = .seconds(15)
    /// How long the observation of a query stays alive after its last
    /// subscriber left, so that a client that reconnects with the last
    /// event id it received is sent nothing until the next change.
    public var idleLifetime: Duration = .seconds(30)
    /// The most observations kept without subscribers (for their
    /// `idleLifetime`). One more stops the one idle the longest at once, so
    /// that clients that subscribe with ever new arguments cannot make the
    /// server keep an observation for each.
    public var maxIdleObservations = 100

    /// The default limits.
    public init() {}
}
#endif
