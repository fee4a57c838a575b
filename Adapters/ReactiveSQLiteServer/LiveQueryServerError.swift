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
