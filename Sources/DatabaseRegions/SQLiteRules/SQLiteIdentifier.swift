/// SQLite's rule for identifiers (table, column and function names): ASCII
/// letters compare without regard to case, every other byte exactly.
/// `"Player"` and `"PLAYER"` name one table; `"é"` and `"É"` two.
///
/// The one implementation of the rule in the package: the regions, the
/// rows' name lookups, the adapters and the tool all call it.
package enum SQLiteIdentifier {
    /// Whether two identifiers name the same thing for SQLite.
    ///
    /// - Complexity: O(n), where n is the length of the names in UTF-8 bytes.
    package static func areEqual(_ lhs: String, _ rhs: String) -> Bool {
        // Bytes, never `String.==`, for which canonically equivalent names
        // ("é" precomposed and decomposed) are equal and SQLite's are not.
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return CaseInsensitiveName(lhs) == CaseInsensitiveName(rhs)
    }

    /// The identifier with its ASCII letters lowercased, other bytes
    /// unchanged: one spelling per identifier, for dictionary keys.
    ///
    /// - Complexity: O(n), where n is the length of the name in UTF-8 bytes;
    ///   no allocation when the name has no uppercase ASCII letter.
    package static func lowercased(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 &- 0x41 < 26 }) else { return name }
        return CaseInsensitiveName(name).lowercased
    }

    /// The byte with an ASCII uppercase letter lowercased.
    @inline(__always)
    package static func lowercased(_ byte: UInt8) -> UInt8 {
        CaseInsensitiveName.foldCase(byte)
    }
}
