import ReactiveSQLite
import SQLiteWatchKit

/// How `sqlite-watch` opens the watched file, whether it prints or serves.
enum WatchedDatabase {
    /// Opens `path` read-only, watching the commits of other processes.
    ///
    /// - Throws: `WatchError` for a file that is not a database or cannot
    ///   be opened; the `DatabaseError` itself while the database is locked,
    ///   so that the caller can wait and retry.
    static func open(path: String, busyTimeout: Duration, passphrase: String?) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.label = "sqlite-watch"
        configuration.readonly = true
        configuration.observesExternalChanges = true
        configuration.busyTimeout = busyTimeout
        if let passphrase {
            // Every connection: the queue's, and the one that watches external changes.
            configuration.prepareDatabase = { db in try db.usePassphrase(passphrase) }
        }
        do {
            return try DatabaseQueue(path: path, configuration: configuration)
        } catch let error as DatabaseError where !error.isLockContention {
            if error.resultCode == .SQLITE_NOTADB {
                throw passphrase == nil ? WatchError.notADatabase(path) : WatchError.wrongPassphrase(path)
            }
            throw WatchError.cannotOpen(path, error)
        }
    }
}
