#if Server
/// Why a `LiveQueryServer` could not be created: a query that is not a
/// read, has invalid SQL, or whose declared parameters are not the
/// statement's.
public struct LiveQueryServerError: Error, CustomStringConvertible, Sendable {
    /// The query's name.
    public var queryName: String
    /// What is wrong with the query.
    public var message: String

    /// `live query NAME: MESSAGE`.
    public var description: String { "live query \(queryName): \(message)" }
}

/// A request a client cannot make: what it gets back, and why.
struct LiveRequestError: Error, Sendable {
    enum Kind: Sendable {
        /// 400: malformed, unknown argument, wrong type.
        case badRequest
        /// 404: no such query.
        case notFound
        /// 503: a limit is reached.
        case unavailable
    }

    var kind: Kind
    var message: String

    static func badRequest(_ message: String) -> LiveRequestError { .init(kind: .badRequest, message: message) }
}
#endif

#if Server
/// A live query whose observation ended: its subscribers were sent
/// `message` (an `error` event or frame), and the next subscription runs
/// the query anew. An application learns of it through
/// `LiveQueryServer.failureHandler`, to log it or to act (a database file
/// deleted or replaced under the server, a result over `maxRows`).
public struct LiveQueryFailure: Error, CustomStringConvertible, Sendable {
    /// What ended the observation.
    public enum Reason: Sendable {
        /// The result had more rows than `limit`
        /// (`LiveQueryServerOptions.maxRows`): the server stopped reading
        /// it at row `count`, `limit + 1`.
        case tooManyRows(count: Int, limit: Int)
        /// Reading the database failed: a `DatabaseError` (a file deleted,
        /// replaced, corrupt or unreadable, a changed schema that breaks the
        /// query), or another error of the observation.
        case error(any Error)
    }

    /// The query's name.
    public var queryName: String
    /// The arguments of the subscriptions that ended, by parameter name.
    public var arguments: [String: String]
    /// What ended the observation.
    public var reason: Reason
    /// What the subscribers were told.
    public var message: String

    /// `live query NAME: MESSAGE`.
    public var description: String { "live query \(queryName): \(message)" }
}
#endif
