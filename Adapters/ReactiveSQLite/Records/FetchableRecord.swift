/// A type that can be decoded from a database row.
///
/// ```swift
/// struct Player: FetchableRecord {
///     var id: Int64
///     var name: String
///     init(row: Row) throws {
///         id = try row["id"]
///         name = try row["name"]
///     }
/// }
/// let players = try SQLRequest<Player>(sql: "SELECT * FROM player").fetchAll(db)
/// ```
///
/// A `Decodable` type that declares `FetchableRecord` gets `init(row:)` for
/// free: each coding key reads the column of the same name (ASCII
/// case-insensitive), and a nested `Decodable` value is decoded from the JSON
/// text or blob of its column.
public protocol FetchableRecord {
    /// Decodes a record from a row.
    ///
    /// The row is only valid during the call: copy the values you need (a
    /// `Row` is a value, so storing it is safe, but costs a copy of its values).
    ///
    /// - Throws: Any error, typically a `RowDecodingError`; fetching stops and
    ///   rethrows it.
    init(row: Row) throws
}
