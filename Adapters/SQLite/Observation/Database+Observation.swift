import Foundation
import DatabaseRegions
internal import CSQLite

extension Database {
    /// Records what the statement being compiled may change, and answers the
    /// authorizer: `SQLITE_IGNORE` for deletions from user tables (which turns
    /// off SQLite's truncate optimization, so that `DELETE FROM t` reaches
    /// the hooks row by row), `SQLITE_OK` otherwise.
    func recordEffects(
        action: Int32, _ argument1: UnsafePointer<CChar>?, _ argument2: UnsafePointer<CChar>?
    ) -> Int32 {
        if effectsRecorder != nil {
            return effectsRecorder!.record(action: action, argument1, argument2)
        }
        // A statement recompiled by SQLite itself after a schema change:
        // keep the truncate optimization off.
        if action == SQLITE_DELETE, let argument1, strncasecmp(argument1, "sqlite_", 7) != 0 {
            return SQLITE_IGNORE
        }
        return SQLITE_OK
    }

    /// Runs `fetch` and returns its result with the union of the regions of
    /// the statements it ran.
    func recordingSelection<T>(_ fetch: () throws -> T) throws -> (T, DatabaseRegion) {
        let previous = selectionRegion
        selectionRegion = DatabaseRegion()
        defer { selectionRegion = previous.map { $0.union(selectionRegion!) } }
        let value = try fetch()
        return (value, selectionRegion!)
    }
}
