extension DatabaseRegion {
    /// Returns a region that contains both this region and `other`.
    ///
    /// The full database absorbs everything, and the empty region is the
    /// identity. On a table that both regions contain, "all columns" absorbs
    /// any set of columns, "all rows" absorbs any set of rows, and sets
    /// otherwise unite:
    ///
    /// ```swift
    /// let a = DatabaseRegion(table: "player", columns: ["name"], rowIDs: [1])
    /// let b = DatabaseRegion(table: "player", columns: ["score"], rowIDs: [2])
    /// let c = DatabaseRegion(table: "team")
    /// print(a.union(b).union(c)) // player(name,score)[1,2], team(*)
    /// ```
    ///
    /// Since a region keeps one product of columns and rows per table, the
    /// union may contain more than its operands (above, the score of row 1),
    /// but whatever modifies an operand modifies the union.
    ///
    /// - Parameter other: Another region.
    /// - Returns: The union of both regions.
    /// - Complexity: O(n), where n is the size of both regions (tables, columns and rowids).
    public func union(_ other: DatabaseRegion) -> DatabaseRegion {
        var result = self
        result.formUnion(other)
        return result
    }

    /// Adds `other` to this region, as `union(_:)` describes.
    ///
    /// - Parameter other: Another region.
    /// - Complexity: O(n), where n is the size of both regions (tables, columns and rowids).
    public mutating func formUnion(_ other: DatabaseRegion) {
        guard let otherTables = other.tableRegions else {
            tableRegions = nil
            return
        }
        // Taking the dictionary out keeps it uniquely referenced while it changes.
        guard var tables = tableRegions.take() else { return }
        for (name, otherTable) in otherTables {
            if let index = tables.index(forKey: name) {
                tables.values[index] = tables.values[index].union(otherTable)
            } else {
                tables[name] = otherTable
            }
        }
        tableRegions = tables
    }

    /// Returns the part of this region that `other` also contains.
    ///
    /// The full database is the identity, and the empty region absorbs
    /// everything. On a table that both regions contain, columns intersect and
    /// rows intersect, "all" being the identity; tables whose intersection has
    /// no column or no row are dropped:
    ///
    /// ```swift
    /// let a = DatabaseRegion(table: "player", columns: ["id", "name"]).union(DatabaseRegion(table: "team"))
    /// let b = DatabaseRegion(table: "player", rowIDs: [1, 2])
    /// print(a.intersection(b)) // player(id,name)[1,2]
    /// ```
    ///
    /// Whatever modifies the intersection modifies both operands.
    ///
    /// - Parameter other: Another region.
    /// - Returns: The intersection of both regions.
    /// - Complexity: O(n), where n is the size of the smaller region (tables, columns and rowids).
    public func intersection(_ other: DatabaseRegion) -> DatabaseRegion {
        guard let tables = tableRegions else { return other }
        guard let otherTables = other.tableRegions else { return self }
        let (smaller, larger) = tables.count <= otherTables.count ? (tables, otherTables) : (otherTables, tables)
        var result: [CaseInsensitiveName: TableRegion] = [:]
        for (name, table) in smaller {
            if let otherTable = larger[name], let common = table.intersection(otherTable) {
                result[name] = common
            }
        }
        return DatabaseRegion(tableRegions: result)
    }
}
