import DatabaseRegions

/// How an observation learns which region it depends on.
enum ObservationTracking: Sendable {
    /// Recorded from the statements of every fetch.
    case recorded
    /// Recorded from the statements of the first fetch.
    case constantRegion
    /// Given explicitly, computed when the observation starts.
    case regions([any DatabaseRegionConvertible])
}
