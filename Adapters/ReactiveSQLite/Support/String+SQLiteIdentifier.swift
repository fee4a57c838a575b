import DatabaseRegions

extension String {
    /// The identifier with ASCII letters lowercased, other characters
    /// unchanged: one spelling per identifier, as SQLite compares them (see
    /// `SQLiteIdentifier`).
    var lowercasedIdentifier: String { SQLiteIdentifier.lowercased(self) }

    /// Whether two identifiers name the same thing for SQLite: ASCII
    /// letters compare without regard to case (see `SQLiteIdentifier`).
    func isSameIdentifier(as other: String) -> Bool { SQLiteIdentifier.areEqual(self, other) }
}
