extension DatabaseRegion: CustomStringConvertible {
    /// A stable, sorted description of the region.
    ///
    /// `empty`, `full database`, or the tables separated by `", "`, each as its
    /// lowercased name followed by its columns in parentheses (`*` for all
    /// columns) and, when restricted to some rows, its rowids in brackets.
    /// Tables, columns and rowids are sorted:
    ///
    /// ```
    /// empty
    /// full database
    /// player(*)
    /// player(id,name)
    /// player(*)[1,2]
    /// player(id,name)[1], team(*)
    /// ```
    ///
    /// - Complexity: O(n log n), where n is the size of the region (tables, columns and rowids).
    public var description: String {
        guard let tableRegions else { return "full database" }
        if tableRegions.isEmpty { return "empty" }
        return tableRegions
            .sorted { $0.key < $1.key }
            .map { name, table in name.lowercased + table.description }
            .joined(separator: ", ")
    }
}

extension TableRegion {
    /// `(*)`, `(id,name)`, `(*)[1,2]`: sorted lowercased columns, then sorted rowids if any.
    var description: String {
        var description = "("
        if let columns {
            description += columns.sorted().map(\.lowercased).joined(separator: ",")
        } else {
            description += "*"
        }
        description += ")"
        if let rowIDs {
            description += "[" + rowIDs.sorted().map(String.init).joined(separator: ",") + "]"
        }
        return description
    }
}
