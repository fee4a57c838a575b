import DatabaseRegions

/// The column names shared by every row of a statement, with a name lookup
/// built once.
@usableFromInline
final class RowLayout: Sendable {
    let columnNames: [String]
    /// The SQL that produced the rows, for error messages.
    let sql: String?
    /// Name to leftmost index, compared as SQLite compares identifiers
    /// (bytes, ASCII letters without regard to case: never `String.==`,
    /// for which canonically equivalent names are equal).
    private let indexByName: [CaseInsensitiveName: Int]
    /// Whether each column is the leftmost one with its name.
    private let isLeftmost: [Bool]

    init(columnNames: [String], sql: String?) {
        self.columnNames = columnNames
        self.sql = sql
        var index: [CaseInsensitiveName: Int] = [:]
        for (offset, name) in columnNames.enumerated() where index[CaseInsensitiveName(name)] == nil {
            index[CaseInsensitiveName(name)] = offset
        }
        self.indexByName = index
        self.isLeftmost = columnNames.indices.map { index[CaseInsensitiveName(columnNames[$0])] == $0 }
    }

    /// The leftmost column with this name, ASCII case-insensitive.
    @usableFromInline
    func index(ofColumn name: String) -> Int? {
        indexByName[CaseInsensitiveName(name)]
    }

    /// The index of `name`, trying `hint` first: decoding a record usually
    /// reads columns in order, so the hint is usually right and costs one
    /// byte comparison instead of a hash.
    ///
    /// Gives the same answer as `index(ofColumn:)`, whatever the hint.
    @inline(__always)
    func index(ofColumn name: String, hint: Int) -> Int? {
        if hint >= 0, hint < columnNames.count, isLeftmost[hint] {
            let column = columnNames[hint]
            if column.isSameIdentifier(as: name) { return hint }
        }
        return index(ofColumn: name)
    }

    /// The names of the columns that are the leftmost ones with their name,
    /// in order: the names a lookup can find.
    var distinctColumnNames: [String] {
        columnNames.indices.filter { isLeftmost[$0] }.map { columnNames[$0] }
    }
}
