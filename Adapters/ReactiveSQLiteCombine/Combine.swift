// The one place where the adapter chooses its reactive framework: Apple's
// Combine where it exists, OpenCombine (the same API, open source)
// elsewhere. Both are re-exported, so that `import ReactiveSQLiteCombine`
// gives `sink`, `AnyCancellable` and every operator on every platform,
// without a `#if` in the code of users.
#if canImport(Combine)
@_exported import Combine
#else
@_exported import OpenCombine
#endif

/// A namespace for the publishers of ReactiveSQLite observations.
///
/// Make them with `ValueObservation.publisher(in:scheduling:)`,
/// `RecordObservation.publisher(in:scheduling:)` and
/// `DatabaseRegionObservation.publisher(in:)`.
public enum DatabasePublishers {}
