import Foundation
import ReactiveSQLite

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
            if error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN, isWALInFolderNotWritable(path) {
                throw WatchError.walInReadOnlyFolder(path, error)
            }
            throw WatchError.cannotOpen(path, error)
        }
    }

    /// Whether `path` is a database in WAL mode (its header's read and
    /// write versions are 2) in a folder this user cannot write: SQLite
    /// then cannot create the `-shm` and `-wal` files it needs to read it.
    private static func isWALInFolderNotWritable(_ path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 20), header.count == 20, header[18] == 2, header[19] == 2 else {
            return false
        }
        let folder = (path as NSString).deletingLastPathComponent
        return access(folder.isEmpty ? "." : folder, W_OK) != 0
    }
}
