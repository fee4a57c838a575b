// `import GRDBDifferences` is enough to name the values its observations
// deliver: `SetDifference`, `ElementsWithDifference`, `OrderedDifference`.
@_exported import Differences
