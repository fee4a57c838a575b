#if Server
import ReactiveSQLite

/// What a server on an open network checks before its HTTP decoder sees a
/// byte: how many connections it holds, how long a request's head may
/// take, how large it may be, which `Host` it may name, and which pages
/// may open a WebSocket. `sqlite-watch --serve` runs behind one; an
/// application gets the same with `HTTPServerBuilder.guardedHTTP1WebSocketUpgrade`.
///
/// Every refusal is an HTTP response that says why, then a close: a
/// connection beyond the limit gets `503`, a head that takes too long
/// `408`, a request line too long `414`, too many or too large headers
/// `431`, a `Host` (or the host of an absolute target,
/// `GET http://host/path`) that is not allowed `421`, a cross-site
/// WebSocket `403`, an unsupported WebSocket version `426`, a request with
/// a body `413`, an HTTP/1.0 request `505` (HTTP/1.0 has no chunked
/// encoding, which event streams need), anything else that is not an
/// HTTP/1.1 request head `400`. A refused request that follows others
/// on its connection (pipelined) is answered after their responses: the
/// connection reads nothing more, finishes them, then sends the refusal.
public struct ConnectionGuardOptions: Sendable, Hashable {
    /// The most connections open at once. One more is answered `503` and
    /// closed at once; keep it below the process's descriptor limit (less
    /// what the database and the process need), so that `accept` never
    /// fails for want of a descriptor.
    public var maxConnections = 512
    /// How long the head of a request may take to arrive, from the
    /// connection's start for the first one, from its first byte for the
    /// next ones. A connection that sends nothing, or a head byte by byte
    /// (slowloris), is answered `408` and closed.
    public var headerTimeout: Duration = .seconds(10)
    /// The longest request line (method, target, version).
    public var maxRequestLineBytes = 8_192
    /// The most bytes of header fields in one request.
    public var maxHeaderBytes = 32_768
    /// The most header fields in one request.
    public var maxHeaderCount = 64
    /// The host names a request's `Host` may give (lowercased, without
    /// port), and the host of an absolute target (`GET http://host/path`),
    /// besides IP literals and `localhost` (always accepted: a page
    /// at an IP address or at localhost is the server's own origin). A
    /// request that names another host, as a page of another site does
    /// after rebinding its DNS name to this server's address, is refused
    /// (`421`). Nil accepts any name.
    public var allowedHostNames: Set<String>? = []
    /// Origins (`scheme://host[:port]`, lowercased) of pages that may open
    /// a WebSocket besides the server's own (the `Origin` that matches the
    /// request's `Host`). Browsers always send a page's `Origin` (`http`,
    /// `https`, or `null`) with a WebSocket; a request without one, or with
    /// another scheme, comes from a program and is accepted.
    public var allowedOrigins: Set<String> = []

    /// A secret every request must carry, or nil for none: as
    /// `Authorization: Bearer TOKEN`, or in the cookie a browser gets by
    /// opening any URL with `?token=TOKEN` once (answered `303` to the same
    /// URL without it, with the cookie: HttpOnly, SameSite=Strict). Other
    /// requests get `401`. Compared in constant time.
    public var accessToken: String?

    /// The default limits: loopback names only.
    public init() {}
}

/// The shared state of the guarded connections of one server: its options
/// and the count of connections open.
public final class ConnectionGuard: Sendable {
    /// The options the guard was created with.
    public let options: ConnectionGuardOptions
    private let openCount = LockedState(0)

    /// A guard with `options`.
    public init(options: ConnectionGuardOptions = .init()) {
        self.options = options
    }

    /// The number of connections open now.
    public var openConnections: Int { openCount.withLock { $0 } }

    /// Counts a new connection; false when the limit is reached.
    func admit() -> Bool {
        openCount.withLock { count in
            guard count < options.maxConnections else { return false }
            count += 1
            return true
        }
    }

    /// Uncounts a connection that `admit()` counted.
    func release() {
        openCount.withLock { $0 -= 1 }
    }
}
#endif
