extension FetchableRecord where Self: Decodable {
    /// Decodes the record from a row through its `Decodable` conformance.
    ///
    /// Each coding key reads the leftmost column of the same name, ASCII
    /// case-insensitively (`CodingKeys` raw values rename columns):
    ///
    /// ```swift
    /// struct Player: Decodable, FetchableRecord {
    ///     var id: Int64
    ///     var name: String
    ///     var bonus: Int?            // NULL or a missing column gives nil
    ///     var createdAt: Date?       // DatabaseValueConvertible: Date's own conversion
    ///     var address: Address       // other Decodable values: the column's JSON
    /// }
    /// let players = try SQLRequest<Player>(sql: "SELECT * FROM player").fetchAll(db)
    /// ```
    ///
    /// - Every `DatabaseValueConvertible` property (integers, `Double`,
    ///   `Bool`, `String`, `Data`, `Date`, `UUID`, your own conversions) is
    ///   decoded with `fromDatabaseValue(_:)`, never with its own `Decodable`
    ///   implementation: a `Date` reads the text SQLite writes, a `UUID` reads
    ///   a 16-byte blob.
    /// - A type that decodes from a single value (a `RawRepresentable` enum,
    ///   a wrapper) reads the column's value; any other `Decodable` value
    ///   (struct, array, dictionary) is decoded with `JSONDecoder` from the
    ///   column's JSON text or blob.
    /// - Optional properties decode nil from NULL and from a missing column;
    ///   `decodeNil(forKey:)`, `contains(_:)` and `allKeys` see the row's columns.
    /// - The top-level decoder offers only the keyed container: a type that
    ///   asks for a single value or unkeyed container at the top level throws
    ///   a `DecodingError`.
    ///
    /// Decoding reads the columns in order of the coding keys: when they come
    /// in the order of the columns, each lookup costs one string comparison.
    ///
    /// - Throws: A `RowDecodingError` naming the column and the SQL: a missing
    ///   column (`.columnNotFound`), a NULL for a non-optional property or a
    ///   value that does not fit (`.valueMismatch`), invalid JSON or a value
    ///   the property type rejects (`.dataCorrupted`).
    public init(row: Row) throws {
        try self.init(from: RowDecoder(row: row))
    }
}
