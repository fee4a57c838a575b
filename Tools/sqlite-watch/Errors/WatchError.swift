import ReactiveSQLite

/// An error that ends `sqlite-watch`: a message for standard error and the
/// exit status that goes with it.
struct WatchError: Error, CustomStringConvertible {
    var status: ExitStatus
    /// One or more lines, without the `sqlite-watch: error:` prefix.
    var message: String

    var description: String { message }
}

extension WatchError {
    static func missingFile(_ path: String) -> WatchError {
        WatchError(status: .databaseError, message: "no such file: \(path) (sqlite-watch never creates a database)")
    }

    static func directory(_ path: String) -> WatchError {
        WatchError(status: .databaseError, message: "\(path) is a directory, not a database file")
    }

    static func notADatabase(_ path: String) -> WatchError {
        WatchError(status: .databaseError, message: "\(path) is not a database (SQLITE_NOTADB: file is not a database)")
    }

    static func wrongPassphrase(_ path: String) -> WatchError {
        WatchError(
            status: .databaseError,
            message: "\(path) cannot be read with this passphrase: the passphrase is wrong, or the file is not a "
                + "database (SQLITE_NOTADB: file is not a database)")
    }

    static func unreadablePassphraseFile(_ path: String, reason: String, kind: String = "passphrase") -> WatchError {
        WatchError(status: .usageError, message: "cannot read the \(kind) file \(path): \(reason)")
    }

    static func cannotOpen(_ path: String, _ error: DatabaseError) -> WatchError {
        WatchError(status: .databaseError, message: "cannot read \(path): \(error.summary)")
    }

    /// A database in WAL mode in a folder this user cannot write, whose
    /// `-shm` file SQLite could neither create nor use.
    static func walInReadOnlyFolder(_ path: String, _ error: DatabaseError) -> WatchError {
        WatchError(
            status: .databaseError,
            message: "cannot read \(path): \(error.summary)\n"
                + "  It is in WAL mode, in a folder this user cannot write: SQLite reads such a database only "
                + "when its \(path)-shm and \(path)-wal files exist and are readable (they do while a program "
                + "that writes it has it open), or when it may create them. Watch it as a user who can write "
                + "the folder, or watch a copy (cp \(path) /tmp/), or have its owner switch it out of WAL mode "
                + "(PRAGMA journal_mode = DELETE).")
    }

    static func deleted(_ path: String) -> WatchError {
        WatchError(status: .databaseError, message: "\(path) was deleted while watched")
    }

    static func notARegularFile(_ path: String, kind: String) -> WatchError {
        WatchError(status: .databaseError, message: "\(path) is \(kind), not a database file")
    }

    static func noLongerADatabase(_ path: String, reason: String) -> WatchError {
        WatchError(status: .databaseError, message: "\(path) is no longer a database: \(reason)")
    }

    static func walLost(_ path: String, reason: String) -> WatchError {
        WatchError(
            status: .databaseError,
            message: "the write-ahead log \(path)-wal was \(reason) while watched: the commits it holds are lost "
                + "when the last connection closes, so the rows shown may no longer be in the database")
    }

    static func replaced(_ path: String) -> WatchError {
        WatchError(status: .databaseError, message: "\(path) was replaced by another file while watched")
    }

    static func invalidSQL(_ sql: String, _ error: DatabaseError) -> WatchError {
        // The library's own checks, reworded for the command line.
        var reason = error.summary
        if error.resultCode == .SQLITE_MISUSE, let message = error.message {
            if message.contains("more than one statement") {
                reason = "the SQL holds more than one statement: sqlite-watch watches one query"
            } else if message.contains("no statement") {
                reason = "the SQL holds no statement"
            }
        }
        return WatchError(status: .queryError, message: "invalid SQL: \(reason)\n  SQL: \(sql)")
    }

    static func notARead(_ sql: String) -> WatchError {
        WatchError(
            status: .queryError,
            message: "not a read: sqlite-watch watches statements that return rows and change nothing, "
                + "such as SELECT\n  SQL: \(sql)")
    }

    static func unknownKey(_ key: String, columns: [String]) -> WatchError {
        WatchError(
            status: .queryError,
            message: "--key \(key): no such column in the query's result (columns: \(columns.joined(separator: ", ")))")
    }

    /// A failure of the observation once watching started.
    static func outputFailed(_ reason: String) -> WatchError {
        WatchError(status: .outputError, message: "cannot write the output: \(reason); what was printed may be incomplete")
    }

    static func watchFailed(_ sql: String, _ error: any Error) -> WatchError {
        guard let error = error as? DatabaseError else {
            return WatchError(status: .databaseError, message: "the query failed: \(error)\n  SQL: \(sql)")
        }
        // SQLITE_ERROR: the query no longer compiles (a table was dropped or altered).
        let status: ExitStatus = error.resultCode == .SQLITE_ERROR ? .queryError : .databaseError
        return WatchError(status: status, message: "the query failed: \(error.summary)\n  SQL: \(sql)")
    }
}

extension DatabaseError {
    /// SQLite's message and result code, without the SQL and the connection label.
    var summary: String {
        "\(message ?? "error") (SQLite error \(extendedResultCode.rawValue))"
    }
}
