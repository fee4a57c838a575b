import DatabaseRegions
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

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

    /// The region to register for an observation of `regions`: their union,
    /// plus the views their statements read, as tables, so that dropping or
    /// redefining such a view reaches the observation.
    ///
    /// - Throws: The error of a region that cannot be computed.
    func observedRegion(of regions: [any DatabaseRegionConvertible]) throws -> DatabaseRegion {
        let previous = readViewsRecorder
        readViewsRecorder = []
        defer { readViewsRecorder = previous }
        var region = try regions.reduce(into: DatabaseRegion()) { $0.formUnion(try $1.databaseRegion(self)) }
        for view in readViewsRecorder ?? [] { region.formUnion(DatabaseRegion(table: view)) }
        return region
    }

    /// Notes the views a statement reads, while `observedRegion(of:)` runs.
    func recordReadViews(of statement: Statement) {
        guard readViewsRecorder != nil, !statement.readViews.isEmpty else { return }
        readViewsRecorder!.append(contentsOf: statement.readViews)
    }
}
