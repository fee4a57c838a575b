import DatabaseRegions
import Differences

// Uses both core modules, enough to link what they need.
let difference = SetDifference(inserted: [3], updated: [2], deleted: [1])
let region = DatabaseRegion.fullDatabase
print("core consumer: \(difference.inserted.count) inserted, full database: \(region.isFullDatabase)")
