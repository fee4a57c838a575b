// `import ReactiveSQLite` is enough to name the types of its public API that
// come from the core modules: `DatabaseRegion` and `DatabaseEvent` (regions
// and transaction observers), `SetDifference` and `ElementsWithDifference`
// (diff observations).
@_exported import DatabaseRegions
@_exported import Differences
