#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// An error thrown by SQLite, or by ReactiveSQLite on SQLite's behalf (arguments
/// that do not fit a statement, a closed connection).
///
/// It carries everything needed to understand a failure: the extended result
/// code, SQLite's message, the SQL that failed and its arguments, and the label
/// of the connection.
///
/// ```swift
/// do {
///     try db.execute(sql: "INSERT INTO player (id) VALUES (?)", arguments: [1])
/// } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
///     // a duplicate id
/// }
/// ```
public struct DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_PRIMARYKEY`, `SQLITE_BUSY_SNAPSHOT`...).
    public let extendedResultCode: ResultCode
    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`...).
    public var resultCode: ResultCode { extendedResultCode.primaryResultCode }
    /// SQLite's error message, or ReactiveSQLite's when it raised the error itself.
    public let message: String?
    /// The SQL that failed, when the error comes from a statement.
    public let sql: String?
    /// A description of the arguments of the failed statement, if any.
    public let arguments: String?
    /// The label of the connection (`Configuration.label`, followed by its role
    /// such as `writer` or `reader.2`).
    public let connectionLabel: String?

    /// Creates an error.
    public init(
        resultCode: ResultCode = .SQLITE_ERROR,
        message: String? = nil,
        sql: String? = nil,
        arguments: StatementArguments? = nil,
        connectionLabel: String? = nil
    ) {
        self.extendedResultCode = resultCode
        self.message = message
        self.sql = sql
        self.arguments = arguments.flatMap { $0.isEmpty ? nil : $0.description }
        self.connectionLabel = connectionLabel
    }

    /// `SQLite error 19 (constraint failed): UNIQUE constraint failed: player.id - while executing `INSERT ...` with arguments [1] (connection main.writer)`.
    public var description: String {
        var text = "SQLite error \(extendedResultCode)"
        if let message { text += ": \(message)" }
        if let sql { text += " - while executing `\(sql)`" }
        if let arguments { text += " with arguments \(arguments)" }
        if let connectionLabel { text += " (connection \(connectionLabel))" }
        return text
    }
}

extension DatabaseError {
    /// Whether the error means that another connection held a lock for
    /// longer than the busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED`):
    /// waiting and trying again can succeed.
    public var isLockContention: Bool {
        resultCode == .SQLITE_BUSY || resultCode == .SQLITE_LOCKED
    }
}
