#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// A SQLite result code, primary (`SQLITE_BUSY`) or extended (`SQLITE_BUSY_SNAPSHOT`).
///
/// Compare a code with the constants below; `primaryResultCode` strips the
/// extended bits, so `error.extendedResultCode.primaryResultCode == .SQLITE_BUSY`
/// holds for every kind of busy error.
///
/// See <https://www.sqlite.org/rescode.html>.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The integer value SQLite uses for this code.
    public let rawValue: Int32

    /// Creates a result code from its integer value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code: the low eight bits of an extended code.
    public var primaryResultCode: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// SQLite's English description of the code (`sqlite3_errstr`).
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }

    /// Successful result.
    public static let SQLITE_OK = ResultCode(rawValue: 0)
    /// Generic error.
    public static let SQLITE_ERROR = ResultCode(rawValue: 1)
    /// Internal logic error in SQLite.
    public static let SQLITE_INTERNAL = ResultCode(rawValue: 2)
    /// Access permission denied.
    public static let SQLITE_PERM = ResultCode(rawValue: 3)
    /// Callback routine requested an abort.
    public static let SQLITE_ABORT = ResultCode(rawValue: 4)
    /// The database file is locked by another connection or process.
    public static let SQLITE_BUSY = ResultCode(rawValue: 5)
    /// A table in the database is locked.
    public static let SQLITE_LOCKED = ResultCode(rawValue: 6)
    /// A memory allocation failed.
    public static let SQLITE_NOMEM = ResultCode(rawValue: 7)
    /// Attempt to write a read-only database.
    public static let SQLITE_READONLY = ResultCode(rawValue: 8)
    /// Operation interrupted.
    public static let SQLITE_INTERRUPT = ResultCode(rawValue: 9)
    /// Disk I/O error.
    public static let SQLITE_IOERR = ResultCode(rawValue: 10)
    /// The database disk image is malformed.
    public static let SQLITE_CORRUPT = ResultCode(rawValue: 11)
    /// The database is full.
    public static let SQLITE_FULL = ResultCode(rawValue: 13)
    /// Unable to open the database file.
    public static let SQLITE_CANTOPEN = ResultCode(rawValue: 14)
    /// The database schema changed.
    public static let SQLITE_SCHEMA = ResultCode(rawValue: 17)
    /// A string or blob exceeds the size limit.
    public static let SQLITE_TOOBIG = ResultCode(rawValue: 18)
    /// A constraint (unique, foreign key, not null, check...) was violated.
    public static let SQLITE_CONSTRAINT = ResultCode(rawValue: 19)
    /// Data type mismatch.
    public static let SQLITE_MISMATCH = ResultCode(rawValue: 20)
    /// Library used incorrectly, or a closed connection.
    public static let SQLITE_MISUSE = ResultCode(rawValue: 21)
    /// Authorization denied.
    public static let SQLITE_AUTH = ResultCode(rawValue: 23)
    /// A bind parameter index or name is out of range, or arguments do not fit.
    public static let SQLITE_RANGE = ResultCode(rawValue: 25)
    /// The file is not a database.
    public static let SQLITE_NOTADB = ResultCode(rawValue: 26)
    /// Extended (`SQLITE_READONLY`): the database file was deleted, moved
    /// or replaced since the connection opened it. SQLite returns it to a
    /// write; an observation of external changes ends with it (see
    /// `Configuration.observesExternalChanges`).
    public static let SQLITE_READONLY_DBMOVED = ResultCode(rawValue: 1032)
    /// `sqlite3_step` has another row ready.
    public static let SQLITE_ROW = ResultCode(rawValue: 100)
    /// `sqlite3_step` has finished executing.
    public static let SQLITE_DONE = ResultCode(rawValue: 101)
}
