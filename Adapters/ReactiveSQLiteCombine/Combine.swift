#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
// The one place where the adapter chooses its reactive framework: Apple's
// Combine where it exists, OpenCombine (the same API, open source)
// elsewhere. Nothing is re-exported: an app imports the framework it
// subscribes with (`import Combine`, or `import OpenCombine` on Linux).
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// A namespace for the publishers of ReactiveSQLite observations.
///
/// Make them with `ValueObservation.publisher(in:scheduling:)`,
/// `RecordObservation.publisher(in:scheduling:)` and
/// `DatabaseRegionObservation.publisher(in:)`.
public enum DatabasePublishers {}

#endif
