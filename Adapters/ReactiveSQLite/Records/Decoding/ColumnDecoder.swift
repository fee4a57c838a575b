/// The `Decoder` of one column's value, for `Decodable` properties whose
/// type is not `DatabaseValueConvertible`.
///
/// Its single value container reads the column (so a `RawRepresentable` enum
/// or a wrapper type decodes from the value itself). Asking it for a keyed or
/// unkeyed container means the type is a structure: it throws
/// `JSONRequired`, and `Row.decodeDecodable` decodes the column's JSON instead.
struct ColumnDecoder: Decoder, SingleValueDecodingContainer {
    /// Thrown when the decoded type needs a container: its value is JSON.
    /// Always caught by `Row.decodeDecodable`.
    struct JSONRequired: Error, CustomStringConvertible {
        var description: String { "the value is decoded from JSON" }
    }

    let row: Row
    let index: Int
    let codingPath: [any CodingKey]

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw JSONRequired()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw JSONRequired()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { row.isNull(at: index) }

    func decode(_ type: Bool.Type) throws -> Bool { try row.decode(type, at: index) }
    func decode(_ type: String.Type) throws -> String { try row.decode(type, at: index) }
    func decode(_ type: Double.Type) throws -> Double { try row.decode(type, at: index) }
    func decode(_ type: Float.Type) throws -> Float { try row.decode(type, at: index) }
    func decode(_ type: Int.Type) throws -> Int { try row.decode(type, at: index) }
    func decode(_ type: Int8.Type) throws -> Int8 { try row.decode(type, at: index) }
    func decode(_ type: Int16.Type) throws -> Int16 { try row.decode(type, at: index) }
    func decode(_ type: Int32.Type) throws -> Int32 { try row.decode(type, at: index) }
    func decode(_ type: Int64.Type) throws -> Int64 { try row.decode(type, at: index) }
    func decode(_ type: UInt.Type) throws -> UInt { try row.decodeUnsigned(type, at: index) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try row.decode(type, at: index) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try row.decode(type, at: index) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try row.decode(type, at: index) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try row.decodeUnsigned(type, at: index) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try row.decodeDecodable(type, at: index, codingPath: codingPath)
    }
}
