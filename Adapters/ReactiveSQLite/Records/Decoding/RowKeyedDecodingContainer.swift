/// The keyed container of a row: each key reads the leftmost column of the
/// same name, ASCII case-insensitively.
///
/// A class, so that it remembers where the next column probably is: each
/// found column moves the hint to the column after it, so decoding keys in
/// the order of the columns costs one string comparison per key instead of a
/// hash. Values are read from the row without any allocation per key.
final class RowKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row
    /// The column the next key probably names.
    private var columnHint = 0

    init(row: Row) {
        self.row = row
    }

    var codingPath: [any CodingKey] { [] }

    /// The keys named by the row's columns (the leftmost of duplicate names).
    var allKeys: [Key] { row.layout.distinctColumnNames.compactMap { Key(stringValue: $0) } }

    /// Whether the row has a column for the key.
    func contains(_ key: Key) -> Bool {
        row.layout.index(ofColumn: key.stringValue, hint: columnHint) != nil
    }

    // MARK: - Finding columns

    /// The index of the key's column, or nil when the row has none.
    @inline(__always)
    private func columnIndex(forKey key: Key) -> Int? {
        guard let index = row.layout.index(ofColumn: key.stringValue, hint: columnHint) else { return nil }
        columnHint = index + 1
        return index
    }

    /// The index of the key's column.
    ///
    /// - Throws: `RowDecodingError.columnNotFound` when the row has none.
    @inline(__always)
    private func existingColumnIndex(forKey key: Key) throws -> Int {
        guard let index = columnIndex(forKey: key) else { throw row.columnNotFound(key.stringValue) }
        return index
    }

    // MARK: - Decoding

    /// Whether the key's column is NULL.
    ///
    /// - Throws: `RowDecodingError.columnNotFound` when the row has no such
    ///   column (use `contains(_:)` or `decodeIfPresent` for optional columns).
    func decodeNil(forKey key: Key) throws -> Bool {
        row.isNull(at: try existingColumnIndex(forKey: key))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try row.decodeUnsigned(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try row.decode(type, at: existingColumnIndex(forKey: key))
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try row.decodeUnsigned(type, at: existingColumnIndex(forKey: key))
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try row.decodeDecodable(type, at: existingColumnIndex(forKey: key), key: key)
    }

    // Optional properties: one lookup each, nil for a missing column or NULL.

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        guard let index = columnIndex(forKey: key), !row.isNull(at: index) else { return nil }
        return try row.decodeUnsigned(type, at: index)
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        guard let index = columnIndex(forKey: key) else { return nil }
        return try row.decodeIfPresent(type, at: index)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        guard let index = columnIndex(forKey: key), !row.isNull(at: index) else { return nil }
        return try row.decodeUnsigned(type, at: index)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = columnIndex(forKey: key), !row.isNull(at: index) else { return nil }
        return try row.decodeDecodable(type, at: index, key: key)
    }

    // MARK: - Nested containers

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(
            KeyedDecodingContainer<NestedKey>.self,
            DecodingError.Context(
                codingPath: [key],
                debugDescription: "nested containers are not supported in a row: decode a Decodable type "
                    + "for the key \(key.stringValue) instead, which is read from the JSON of its column"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            DecodingError.Context(
                codingPath: [key],
                debugDescription: "nested containers are not supported in a row: decode an array type "
                    + "for the key \(key.stringValue) instead, which is read from the JSON of its column"))
    }

    /// A decoder of the same row: a superclass reads its columns from the
    /// row of its subclass.
    func superDecoder() throws -> any Decoder {
        RowDecoder(row: row)
    }

    /// A decoder of the same row, as `superDecoder()`.
    func superDecoder(forKey key: Key) throws -> any Decoder {
        RowDecoder(row: row)
    }
}
