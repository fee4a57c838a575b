/// A result of an observed query, and how it differs from the previous
/// one: the value of `ValueObservation.trackingRowDifferences(sql:arguments:identifiedBy:isOrdered:initialRows:)`.
public struct RowsWithDifference: Sendable, Hashable {
    /// How the rows relate to the previous value.
    public enum Change: Sendable, Hashable {
        /// The first value: the rows start anew.
        case initial
        /// The result has other columns than the previous one (a schema
        /// change under `SELECT *`), or another identity: rows cannot be
        /// compared, and the rows start anew.
        case columnsChanged
        /// What changed since the previous value (never empty).
        case difference(RowDifference)
    }

    /// The whole result, in the query's order. Rows identified by one
    /// integer column in an unordered observation are kept as compact
    /// bytes, and made into `Row` values as they are read (see
    /// ``ResultRows``).
    public var rows: ResultRows
    /// The result's columns (known even when there is no row).
    public var columnNames: [String]
    /// How rows are identified (the inferred primary key, or the given
    /// identity). When a key column is not in `columnNames`, rows are
    /// compared by all their values.
    public var identity: RowIdentity
    /// How the rows relate to the previous value.
    public var change: Change

    /// The difference from the previous value; nil when the rows start anew.
    public var difference: RowDifference? {
        if case .difference(let difference) = change { return difference }
        return nil
    }
}
