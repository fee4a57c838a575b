#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes an `Encodable` record into its database columns: the inverse of
/// the decoding of `Decodable` records (`FetchableRecord+Decodable.swift`).
/// The one encoder of records, for their writes (`EncodableRecord`) and for
/// the initial records of difference observations.
///
/// - `DatabaseValueConvertible` values (integers, `Double`, `Bool`,
///   `String`, `Data`, `Date`, `UUID`, your own conversions) give their
///   `databaseValue`: a `Date` is the text, and a `UUID` the 16-byte blob,
///   that the decoding side reads;
/// - a value that encodes itself into a single value container (a
///   `RawRepresentable` enum, a wrapper) gives that value;
/// - any other value (a structure, an array, a dictionary) gives the JSON
///   text `JSONEncoder` makes of it, with sorted keys, so that equal values
///   always give equal texts (dates inside as milliseconds since 1970, data
///   as base 64, as GRDB writes them);
/// - nil gives NULL (`encodeIfPresent` included).
///
/// ```swift
/// var container = PersistenceContainer()
/// try DatabaseColumnEncoder.encode(player, into: &container)
/// // [id: 1, name: 'Arthur']
/// ```
struct DatabaseColumnEncoder {
    /// Appends the encoded columns of `record` to `container`, in the order
    /// the record encodes them. A column encoded twice appears twice: see
    /// `PersistenceContainer.deduplicateColumns()`.
    ///
    /// - Throws: An `EncodingError` when the record does not encode into a
    ///   keyed container, or when a value has no database representation
    ///   (an unsigned integer above `Int64.max`), or its JSON fails.
    /// - Complexity: O(c), where c is the number of columns, plus the JSON
    ///   of structured values.
    static func encode(_ record: some Encodable, into container: inout PersistenceContainer) throws {
        let storage = ColumnStorage()
        swap(&storage.container, &container)
        defer { swap(&storage.container, &container) }
        do {
            try record.encode(to: RecordEncoder(storage: storage))
        } catch {
            // A container that is not supported records why, then throws.
            throw storage.error ?? error
        }
        if let error = storage.error { throw error }
    }

    /// The encoded columns of `record`, in the order it encodes them; a
    /// column encoded twice keeps its last value, at its first place.
    ///
    /// - Throws: See `encode(_:into:)`.
    static func columns(of record: some Encodable) throws -> [(name: String, value: DatabaseValue)] {
        var container = PersistenceContainer()
        try encode(record, into: &container)
        container.deduplicateColumns()
        return container.map { ($0.column, $0.value) }
    }

    /// The database value of one encodable value, as a column of a record.
    static func databaseValue<T: Encodable>(of value: T, codingPath: [any CodingKey]) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible {
            return convertible.databaseValue
        }
        let encoder = SingleColumnEncoder(codingPath: codingPath)
        do {
            try value.encode(to: encoder)
        } catch is SingleColumnEncoder.JSONRequired {
            return try jsonValue(of: value, codingPath: codingPath)
        }
        if encoder.needsJSON { return try jsonValue(of: value, codingPath: codingPath) }
        guard let result = encoder.value else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: codingPath, debugDescription: "the value encodes nothing"))
        }
        return result
    }

    private static func jsonValue<T: Encodable>(of value: T, codingPath: [any CodingKey]) throws -> DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // As GRDB writes them, so that either library reads the other's JSON.
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.dataEncodingStrategy = .base64
        let data = try encoder.encode(value)
        return DatabaseValue(storage: .text(String(decoding: data, as: UTF8.self)))
    }

    static func integer<T: BinaryInteger>(_ value: T, codingPath: [any CodingKey]) throws -> DatabaseValue {
        guard let integer = Int64(exactly: value) else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "\(value) does not fit a database integer (Int64)"))
        }
        return DatabaseValue(storage: .integer(integer))
    }
}

/// The container an encoding fills, and its first error.
private final class ColumnStorage {
    var container = PersistenceContainer()
    var error: (any Error)?

    @inline(__always)
    func set(_ value: DatabaseValue, forColumn name: String) {
        container.append(value, forColumn: name)
    }

    /// Records a misuse that `Encoder`'s non-throwing methods cannot throw.
    func fail(_ error: any Error) {
        if self.error == nil { self.error = error }
    }
}

/// The top-level encoder of a record: only a keyed container, whose keys
/// name columns.
private struct RecordEncoder: Encoder {
    let storage: ColumnStorage
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyedEncodingContainer(storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.fail(Self.notKeyed)
        return FailingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        storage.fail(Self.notKeyed)
        return SingleColumnEncoder(codingPath: [])
    }

    /// A record is a set of columns: its top-level container is keyed.
    static let notKeyed = EncodingError.invalidValue(
        (), EncodingError.Context(codingPath: [], debugDescription: "a record encodes its columns in a keyed container"))
}

/// The keyed container of a record: each key is a column.
private struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: ColumnStorage
    var codingPath: [any CodingKey] { [] }

    private func set(_ value: DatabaseValue, _ key: Key) {
        storage.set(value, forColumn: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        set(try DatabaseColumnEncoder.integer(value, codingPath: [key]), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(value.databaseValue, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        set(try DatabaseColumnEncoder.integer(value, codingPath: [key]), key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try DatabaseColumnEncoder.databaseValue(of: value, codingPath: [key]), key)
    }

    // nil is NULL: the default implementations would encode nothing, and a
    // missing column is not a NULL one.

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOptional(value, key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
        guard let value else {
            set(.null, key)
            return
        }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        storage.fail(Self.nested(key))
        return KeyedEncodingContainer(FailingKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        storage.fail(Self.nested(key))
        return FailingUnkeyedContainer()
    }

    /// The same columns: a superclass encodes its properties as columns of
    /// its subclass's row.
    mutating func superEncoder() -> any Encoder { RecordEncoder(storage: storage) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(storage: storage) }

    private static func nested(_ key: Key) -> EncodingError {
        EncodingError.invalidValue(
            (),
            EncodingError.Context(
                codingPath: [key],
                debugDescription: "nested containers are not supported in a row: encode a value of an Encodable "
                    + "type for the key \(key.stringValue), which is stored as JSON"))
    }
}

/// The encoder of one column's value: its single value container gives the
/// value; a keyed or unkeyed container means the value is JSON.
private final class SingleColumnEncoder: Encoder, SingleValueEncodingContainer {
    /// Thrown when the value needs a container: it is encoded as JSON.
    struct JSONRequired: Error {}

    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var value: DatabaseValue?
    /// Set when the value asked for a keyed or unkeyed container.
    var needsJSON = false

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        needsJSON = true
        return KeyedEncodingContainer(FailingKeyedContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsJSON = true
        return FailingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { value = .null }
    func encode(_ value: Bool) throws { self.value = value.databaseValue }
    func encode(_ value: String) throws { self.value = value.databaseValue }
    func encode(_ value: Double) throws { self.value = value.databaseValue }
    func encode(_ value: Float) throws { self.value = value.databaseValue }
    func encode(_ value: Int) throws { self.value = value.databaseValue }
    func encode(_ value: Int8) throws { self.value = value.databaseValue }
    func encode(_ value: Int16) throws { self.value = value.databaseValue }
    func encode(_ value: Int32) throws { self.value = value.databaseValue }
    func encode(_ value: Int64) throws { self.value = value.databaseValue }
    func encode(_ value: UInt) throws { self.value = try DatabaseColumnEncoder.integer(value, codingPath: codingPath) }
    func encode(_ value: UInt8) throws { self.value = value.databaseValue }
    func encode(_ value: UInt16) throws { self.value = value.databaseValue }
    func encode(_ value: UInt32) throws { self.value = value.databaseValue }
    func encode(_ value: UInt64) throws { self.value = try DatabaseColumnEncoder.integer(value, codingPath: codingPath) }
    func encode<T: Encodable>(_ value: T) throws {
        self.value = try DatabaseColumnEncoder.databaseValue(of: value, codingPath: codingPath)
    }
}

/// The containers of a value encoded as JSON: what they receive is dropped,
/// the value being encoded again by `JSONEncoder`.
private struct FailingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { throw SingleColumnEncoder.JSONRequired() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw SingleColumnEncoder.JSONRequired() }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FailingKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { FailingUnkeyedContainer() }
    mutating func superEncoder() -> any Encoder { SingleColumnEncoder(codingPath: []) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { SingleColumnEncoder(codingPath: []) }
}

private struct FailingUnkeyedContainer: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws { throw SingleColumnEncoder.JSONRequired() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw SingleColumnEncoder.JSONRequired() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FailingKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { FailingUnkeyedContainer() }
    mutating func superEncoder() -> any Encoder { SingleColumnEncoder(codingPath: []) }
}
