#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB

/// The primary key of a row: its raw values, compared in SQLite's `BINARY`
/// order, column after column.
///
/// Texts compare by UTF-8 bytes, never as Swift strings: two canonically
/// equivalent texts are two keys, as they are for SQLite. A key column
/// declared `COLLATE NOCASE` still gives a consistent order: its values are
/// unique case-insensitively, hence unique byte by byte.
struct RowKey: Hashable, Comparable, CustomStringConvertible {
    /// The value of the first key column.
    let first: DatabaseValue
    /// The values of the other key columns, if any (no allocation for a
    /// single-column key).
    let rest: [DatabaseValue]

    /// The key of `row`, whose key columns are at `indices`.
    init(row: Row, indices: [Int]) {
        first = row.databaseValue(at: indices[0])
        rest = indices.count == 1 ? [] : indices.dropFirst().map { row.databaseValue(at: $0) }
    }

    static func == (lhs: RowKey, rhs: RowKey) -> Bool {
        compare(lhs, rhs) == 0
    }

    static func < (lhs: RowKey, rhs: RowKey) -> Bool {
        compare(lhs, rhs) < 0
    }

    func hash(into hasher: inout Hasher) {
        RawValueComparison.hash(first, into: &hasher)
        for value in rest { RawValueComparison.hash(value, into: &hasher) }
    }

    private static func compare(_ lhs: RowKey, _ rhs: RowKey) -> Int {
        let result = RawValueComparison.compare(lhs.first, rhs.first)
        if result != 0 || lhs.rest.isEmpty { return result }
        for (l, r) in zip(lhs.rest, rhs.rest) {
            let result = RawValueComparison.compare(l, r)
            if result != 0 { return result }
        }
        return 0
    }

    var description: String {
        rest.isEmpty ? first.description : "(" + ([first] + rest).map(\.description).joined(separator: ", ") + ")"
    }
}

extension Row {
    /// The value at column `index`.
    func databaseValue(at index: Int) -> DatabaseValue {
        self[self.index(startIndex, offsetBy: index)].1
    }

    /// The indices of `columns` in this row (case-insensitive names).
    ///
    /// - Throws: `DifferencesObservationError.Kind.missingPrimaryKeyColumn`
    ///   when a column is missing.
    func indices(ofKeyColumns columns: [String], table: String, source: String) throws -> [Int] {
        let names = Array(columnNames)
        return try columns.map { column in
            guard let index = names.firstIndex(where: { Self.columnNamesAreEqual($0, column) }) else {
                throw DifferencesObservationError(
                    kind: .missingPrimaryKeyColumn,
                    message: "trackingSetDifferences: \(source) lacks the primary key column \"\(column)\" of "
                        + "table \"\(table)\"; include every primary key column (\(columns.joined(separator: ", "))).")
            }
            return index
        }
    }
}

#endif
