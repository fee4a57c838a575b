import DatabaseRegions

/// An insertion into `table`, at `rowID` when given.
func insert(_ table: String, _ rowID: Int64? = nil) -> DatabaseEvent {
    DatabaseEvent(kind: .insert(tableName: table), rowID: rowID)
}

/// A deletion from `table`, at `rowID` when given.
func delete(_ table: String, _ rowID: Int64? = nil) -> DatabaseEvent {
    DatabaseEvent(kind: .delete(tableName: table), rowID: rowID)
}

/// An update of `columns` of `table`, at `rowID` when given.
func update(_ table: String, _ columns: Set<String>, _ rowID: Int64? = nil) -> DatabaseEvent {
    DatabaseEvent(kind: .update(tableName: table, columnNames: columns), rowID: rowID)
}
