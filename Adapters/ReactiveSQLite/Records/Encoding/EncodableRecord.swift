/// A type that can encode itself into database columns: the values that
/// its writes (`PersistableRecord`'s `insert`, `update`, `upsert`...) store.
///
/// An `Encodable` type gets `encode(to:)` for free:
///
/// ```swift
/// struct Player: Encodable, PersistableRecord {
///     var id: Int64
///     var name: String
///     var score: Int?            // nil is NULL
///     var joinedAt: Date         // DatabaseValueConvertible: Date's own conversion
///     var address: Address       // other Encodable values: JSON text
/// }
/// ```
///
/// Or write it yourself, setting each column of the container:
///
/// ```swift
/// struct Player: EncodableRecord, PersistableRecord {
///     var id: Int64
///     var name: String
///
///     func encode(to container: inout PersistenceContainer) throws {
///         container["id"] = id
///         container["name"] = name
///     }
/// }
/// ```
public protocol EncodableRecord {
    /// Sets the record's columns in `container`, which is empty when the
    /// method is called.
    ///
    /// A record that encodes the same columns in the same order every time
    /// writes fastest: its statements are compiled once per connection.
    ///
    /// - Throws: Any error; the write that asked for the columns stops and
    ///   rethrows it, before anything runs.
    func encode(to container: inout PersistenceContainer) throws
}

extension EncodableRecord where Self: Encodable {
    /// Encodes the record through its `Encodable` conformance, with the
    /// conversions the decoding of `Decodable` records reverses.
    ///
    /// Each coding key is a column (`CodingKeys` raw values rename columns):
    /// - every `DatabaseValueConvertible` property (integers, `Double`,
    ///   `Bool`, `String`, `Data`, `Date`, `UUID`, your own conversions) is
    ///   encoded with its `databaseValue`, never with its own `Encodable`
    ///   implementation: a `Date` gives the text `"2024-02-29 13:14:15.123"`
    ///   (UTC), a `UUID` its 16 bytes, as the decoding side reads them;
    /// - a value that encodes itself as a single value (a `RawRepresentable`
    ///   enum, a wrapper) gives that value;
    /// - any other value (a structure, an array, a dictionary) gives the
    ///   JSON text `JSONEncoder` makes of it, with sorted keys;
    /// - nil gives NULL, also through `encodeIfPresent`: an optional
    ///   property is always a column.
    ///
    /// A superclass that encodes its properties through `superEncoder()`
    /// adds them as columns of the same row; a column encoded twice keeps its
    /// last value.
    ///
    /// - Throws: An `EncodingError` when the type does not encode a keyed
    ///   container (a record is a set of columns), asks for a nested
    ///   container (encode a nested `Encodable` value instead: it is stored
    ///   as JSON), or has a value with no database representation (an
    ///   unsigned integer above `Int64.max`).
    /// - Complexity: O(c), where c is the number of columns, plus the JSON
    ///   of structured values.
    public func encode(to container: inout PersistenceContainer) throws {
        try DatabaseColumnEncoder.encode(self, into: &container)
    }
}
