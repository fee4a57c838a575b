import Foundation
import DatabaseRegions
internal import CSQLite

extension Database {
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
