/// The column names shared by every row of a statement, with a name lookup
/// built once.
@usableFromInline
final class RowLayout: Sendable {
    let columnNames: [String]
    /// The SQL that produced the rows, for error messages.
    let sql: String?
    /// Lowercased name to leftmost index.
    private let indexByLowercasedName: [String: Int]
    /// Whether each column is the leftmost one with its name.
    private let isLeftmost: [Bool]

    init(columnNames: [String], sql: String?) {
        self.columnNames = columnNames
        self.sql = sql
        var index: [String: Int] = [:]
        for (offset, name) in columnNames.enumerated() where index[name.lowercasedIdentifier] == nil {
            index[name.lowercasedIdentifier] = offset
        }
        self.indexByLowercasedName = index
        self.isLeftmost = columnNames.indices.map { index[columnNames[$0].lowercasedIdentifier] == $0 }
    }

    /// The leftmost column with this name, ASCII case-insensitive.
    @usableFromInline
    func index(ofColumn name: String) -> Int? {
        indexByLowercasedName[name.lowercasedIdentifier]
    }

    /// The index of `name`, trying `hint` first: decoding a record usually
    /// reads columns in order, so the hint is usually right and costs one
    /// string comparison instead of a hash.
    ///
    /// Gives the same answer as `index(ofColumn:)`, whatever the hint.
    @inline(__always)
    func index(ofColumn name: String, hint: Int) -> Int? {
        if hint >= 0, hint < columnNames.count, isLeftmost[hint] {
            let column = columnNames[hint]
            if column == name || column.isSameIdentifier(as: name) { return hint }
        }
        return index(ofColumn: name)
    }

    /// The names of the columns that are the leftmost ones with their name,
    /// in order: the names a lookup can find.
    var distinctColumnNames: [String] {
        columnNames.indices.filter { isLeftmost[$0] }.map { columnNames[$0] }
    }
}
