import DatabaseRegions

/// A type that can tell which region of the database it depends on: a
/// request, or a `DatabaseRegion` itself.
///
/// Observations use it to know which commits may change a value.
public protocol DatabaseRegionConvertible: Sendable {
    /// The region of the database this value depends on.
    ///
    /// - Throws: A `DatabaseError` when a request's SQL does not compile.
    func databaseRegion(_ db: Database) throws -> DatabaseRegion
}

extension DatabaseRegion: DatabaseRegionConvertible {
    /// The region itself.
    public func databaseRegion(_ db: Database) throws -> DatabaseRegion { self }
}
