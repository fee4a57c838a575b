#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Row {
    /// Decodes the `Decodable` value of the column at a valid index:
    /// - `Date`, `UUID`, `Data` and every other `DatabaseValueConvertible`
    ///   type through `fromDatabaseValue(_:)` (not their `Decodable`
    ///   implementation);
    /// - other types from the column's value through a single value
    ///   container, or, when they need a keyed or unkeyed container, from the
    ///   column's JSON text or blob.
    ///
    /// - Throws: `RowDecodingError`, naming the column.
    func decodeDecodable<T: Decodable>(
        _ type: T.Type, at index: Int, key: @autoclosure () -> any CodingKey
    ) throws -> T {
        // Most common first; comparing metatypes is a pointer comparison, and
        // once T is known to be the decoded type, the cast is the identity.
        if T.self == Date.self {
            return unsafeBitCast(try decode(Date.self, at: index), to: T.self)
        }
        if T.self == UUID.self {
            return unsafeBitCast(try decode(UUID.self, at: index), to: T.self)
        }
        if T.self == Data.self {
            return unsafeBitCast(try decode(Data.self, at: index), to: T.self)
        }
        return try decodeDecodable(type, at: index, codingPath: [key()])
    }

    /// See `decodeDecodable(_:at:key:)`.
    func decodeDecodable<T: Decodable>(
        _ type: T.Type, at index: Int, codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            // Checked cast: `decode` returns a value of type T.
            return try decode(convertible, at: index) as! T
        }
        do {
            return try T(from: ColumnDecoder(row: self, index: index, codingPath: codingPath()))
        } catch is ColumnDecoder.JSONRequired {
            return try decodeJSON(type, at: index)
        } catch let error as DecodingError {
            // The type's own decoding rejected the value (an unknown raw value).
            let value = value(at: index)
            let column = layout.columnNames[index]
            throw RowDecodingError(
                kind: .dataCorrupted, column: column, sql: layout.sql,
                message: "could not decode \(T.self) from \(value) in column \(column): "
                    + Self.summary(of: error))
        }
    }

    /// Decodes a value with `JSONDecoder` from the JSON text or blob of the
    /// column at a valid index (dates inside as milliseconds since 1970,
    /// data as base 64).
    ///
    /// - Throws: `RowDecodingError`: `.valueMismatch` when the column holds
    ///   NULL or a number, `.dataCorrupted` when the JSON does not decode.
    func decodeJSON<T: Decodable>(_ type: T.Type, at index: Int) throws -> T {
        let value = value(at: index)
        let column = layout.columnNames[index]
        let json: Data
        switch value.storage {
        case .text(let text): json = Data(text.utf8)
        case .blob(let blob): json = blob
        case .null, .integer, .real:
            throw RowDecodingError.valueMismatch(T.self, value: value, column: column, sql: layout.sql)
        }
        do {
            let decoder = JSONDecoder()
            // As `DatabaseColumnEncoder` and GRDB write them.
            decoder.dateDecodingStrategy = .millisecondsSince1970
            decoder.dataDecodingStrategy = .base64
            return try decoder.decode(type, from: json)
        } catch {
            throw RowDecodingError(
                kind: .dataCorrupted, column: column, sql: layout.sql,
                message: "could not decode \(T.self) from the JSON in column \(column): " + Self.summary(of: error))
        }
    }

    /// Decodes an unsigned integer type that is not `DatabaseValueConvertible`
    /// (`UInt`, `UInt64`) from an integer or an exact real, when it fits.
    func decodeUnsigned<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type, at index: Int) throws -> T {
        let value = value(at: index)
        let decoded: T? =
            switch value.storage {
            case .integer(let integer): T(exactly: integer)
            case .real(let real): T(exactly: real)
            case .null, .text, .blob: nil
            }
        guard let decoded else {
            throw RowDecodingError.valueMismatch(T.self, value: value, column: layout.columnNames[index], sql: layout.sql)
        }
        return decoded
    }

    /// A one-line account of a decoding error: the coding path, what went
    /// wrong, and the underlying error (for invalid JSON).
    private static func summary(of error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let errorContext), .valueNotFound(_, let errorContext),
            .keyNotFound(_, let errorContext), .dataCorrupted(let errorContext):
            context = errorContext
        @unknown default:
            return String(describing: error)
        }
        var summary = context.debugDescription
        let path = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
        if !path.isEmpty {
            summary = path.joined(separator: ".") + ": " + summary
        }
        if let underlying = context.underlyingError {
            summary += " (\(underlying))"
        }
        return summary
    }
}
