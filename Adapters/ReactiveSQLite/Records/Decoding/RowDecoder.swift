/// The `Decoder` of a record decoded from a row: it offers a keyed container
/// whose keys name columns.
///
/// A struct of two references, so it fits the inline storage of `any Decoder`
/// without allocating.
struct RowDecoder: Decoder {
    let row: Row

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedDecodingContainer<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            DecodingError.Context(
                codingPath: [],
                debugDescription: "a record is decoded from a row through a keyed container whose coding keys "
                    + "name columns; an unkeyed container of a whole row is not supported"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Any.self,
            DecodingError.Context(
                codingPath: [],
                debugDescription: "a record is decoded from a row through a keyed container whose coding keys "
                    + "name columns; a single value container of a whole row is not supported (fetch the "
                    + "value type itself, or decode a property of a keyed container)"))
    }
}
