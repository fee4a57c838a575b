#if Server
import ReactiveSQLite

/// A query that remote clients may watch, by name: the SQL is the server's,
/// clients only choose the values of its declared parameters.
///
/// ```swift
/// let leaderboard = LiveQuery(
///     name: "leaderboard",
///     sql: "SELECT * FROM player WHERE team = :team ORDER BY score DESC LIMIT :limit",
///     parameters: [.init("team", .text), .init("limit", .integer, default: 10)],
///     isOrdered: true)
/// ```
///
/// A client subscribes with `GET /live/leaderboard?team=red` (Server-Sent
/// Events) or a `subscribe` message on the WebSocket. Arguments are checked
/// against the declared parameters before anything reaches SQLite: an
/// unknown name, a missing value without default, or a value of the wrong
/// type is refused with a 400 response or an error frame.
public struct LiveQuery: Sendable, Hashable {
    /// A named parameter of the query (`:team` is the parameter `team`).
    public struct Parameter: Sendable, Hashable {
        /// What a client's value must be, and how it is bound.
        public enum Kind: String, Sendable, Hashable {
            /// A 64-bit integer: a JSON integer, or a string of decimal digits.
            case integer
            /// A finite real: a JSON number, or a string SQLite would read as
            /// one: a decimal number with an optional exponent (`-1.5`, `.5`,
            /// `1e3`), spaces and tabs around it allowed; not hexadecimal
            /// (`0x1p4`), `nan` or `inf`.
            case real
            /// Any string (a JSON number is refused, to catch mistakes).
            case text
        }

        /// The name in the SQL, without its prefix (`team` for `:team`).
        public var name: String
        /// What a client's value must be.
        public var kind: Kind
        /// The value when a client gives none; nil makes the argument required.
        public var defaultValue: DatabaseValue?

        /// A parameter; `default` makes it optional for clients.
        public init(_ name: String, _ kind: Kind, default defaultValue: (any DatabaseValueConvertible)? = nil) {
            self.name = name
            self.kind = kind
            self.defaultValue = defaultValue?.databaseValue
        }
    }

    /// The name clients use: letters, digits, `-` and `_` (it is a URL path
    /// component).
    public var name: String
    /// One read-only statement; its named parameters must be `parameters`.
    public var sql: String
    /// The named parameters clients give values for, each once.
    public var parameters: [Parameter]
    /// The result columns that identify a row from one result to the next.
    /// Empty: the primary key of the only table the query reads, when the
    /// result has all its columns; otherwise the whole row (a changed row
    /// is then a deletion and an insertion).
    public var keyColumns: [String]
    /// Whether the order of the rows matters: differences then carry moves
    /// and positions (`moved`, `insertedAt`), as `sqlite-watch --ordered`.
    public var isOrdered: Bool

    /// A live query. See the type's documentation.
    public init(
        name: String, sql: String, parameters: [Parameter] = [], keyColumns: [String] = [],
        isOrdered: Bool = false
    ) {
        self.name = name
        self.sql = sql
        self.parameters = parameters
        self.keyColumns = keyColumns
        self.isOrdered = isOrdered
    }

    /// Whether `name` can be a query name (a URL path component without escapes).
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
    }
}
#endif
