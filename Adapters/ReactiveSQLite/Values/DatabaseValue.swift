#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value stored in a SQLite database: NULL, an integer, a real, a text or a blob.
///
/// Equality, hashing and ordering follow SQLite's `BINARY` collation on raw
/// values, never Swift's `String` comparison: NULL first, then numbers (an
/// integer and a real compare by their exact numeric values, so `1` equals
/// `1.0`), then texts by their UTF-8 bytes, then blobs by their bytes. Two
/// texts that Swift considers equal because they are canonically equivalent
/// (`"e\u{301}"` and `"\u{e9}"`) are different database values, as they are
/// different keys in a SQLite index.
///
/// A text read from the database that is not valid UTF-8 keeps its exact
/// bytes (`textBytes`): it equals only the same bytes, binds back as them,
/// and `storage` shows it with its invalid bytes replaced by U+FFFD.
public struct DatabaseValue: Sendable, CustomStringConvertible {
    /// The five storage classes of SQLite.
    public enum Storage: Sendable {
        /// NULL.
        case null
        /// A 64-bit signed integer.
        case integer(Int64)
        /// A 64-bit floating point number.
        case real(Double)
        /// A text. For a text that is not valid UTF-8, read from the
        /// database, the string has its invalid bytes replaced by U+FFFD;
        /// the value itself keeps its exact bytes (see `textBytes`).
        case text(String)
        /// A blob of bytes.
        case blob(Data)
    }

    /// How a value is held: its storage, or the exact bytes of a text that
    /// is not valid UTF-8 (which no `String` can hold).
    @usableFromInline
    enum Representation: Sendable {
        case storage(Storage)
        case invalidUTF8Text(Data)
    }

    @usableFromInline
    let representation: Representation

    /// The value's storage class and payload. Never a real NaN (see
    /// `init(storage:)`). A text that is not valid UTF-8 is `.text` with
    /// its invalid bytes replaced by U+FFFD: compare values with `==`, or
    /// read `textBytes`, to tell such texts apart.
    @inlinable
    public var storage: Storage {
        switch representation {
        case .storage(let storage): storage
        case .invalidUTF8Text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Creates a value from its storage.
    ///
    /// A real NaN becomes NULL, as SQLite stores it: so a value always reads
    /// back as it was written, and equality and ordering stay total.
    @inlinable @inline(__always)
    public init(storage: Storage) {
        if case .real(let value) = storage, value.isNaN {
            representation = .storage(.null)
        } else {
            representation = .storage(storage)
        }
    }

    /// A text value with exactly these bytes: a `.text` value when they
    /// are valid UTF-8, else a text that keeps them (SQLite stores any bytes
    /// in a TEXT value: a Latin-1 `café`, a truncated sequence).
    ///
    /// - Complexity: O(n), where n is the number of bytes (they are validated).
    public init(textBytes bytes: some Collection<UInt8>) {
        let contiguous = Array(bytes)
        if let text = contiguous.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) {
            representation = .storage(.text(text))
        } else {
            representation = .invalidUTF8Text(Data(contiguous))
        }
    }

    /// Reads a text from `count` bytes at `bytes`: a `String` when they are
    /// valid UTF-8 (almost always), else the bytes.
    ///
    /// `String(decoding:as:)` makes the string: the standard library has it
    /// specialized for UTF-8 buffers, while `String(validating:as:)` is
    /// generic and looks up generic metadata at each call (a third of the
    /// cost of reading a short text). It repairs invalid UTF-8 with
    /// U+FFFD, so the bytes are valid UTF-8 exactly when the string's UTF-8
    /// is the bytes themselves: a repair changes them (a repaired string is
    /// valid UTF-8, the bytes were not). ASCII bytes, the most common
    /// texts, are valid without that comparison.
    @usableFromInline
    init(textBytes bytes: UnsafeBufferPointer<UInt8>) {
        var text = String(decoding: bytes, as: UTF8.self)
        let isValid =
            Self.isASCII(bytes)
            || (text.utf8.count == bytes.count
                && text.withUTF8 { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
        if isValid {
            representation = .storage(.text(text))
        } else {
            representation = .invalidUTF8Text(Data(buffer: bytes))
        }
    }

    /// Whether every byte is ASCII (below 0x80): 8 bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var highBits: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            highBits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            highBits |= UInt64(base[offset])
            offset += 1
        }
        return highBits & 0x8080_8080_8080_8080 == 0
    }

    /// The integer of an integer value, nil for other values: read in place,
    /// without making a `Storage` (a hot path of the diffs, which compare
    /// rowids).
    @inline(__always)
    var integerPayload: Int64? {
        if case .storage(.integer(let integer)) = representation { return integer }
        return nil
    }

    /// The exact bytes of a text value (UTF-8 when the text is valid UTF-8,
    /// else the bytes as stored); nil for other storage classes.
    public var textBytes: Data? {
        switch representation {
        case .storage(.text(let text)): Data(text.utf8)
        case .storage: nil
        case .invalidUTF8Text(let bytes): bytes
        }
    }

    /// The text of a text that is not valid UTF-8, its invalid bytes
    /// replaced by U+FFFD (as `storage` shows it); nil for other values.
    @inline(never)
    var repairedText: String? {
        if case .invalidUTF8Text(let bytes) = representation { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    /// Whether the value is a text that is not valid UTF-8 (its `storage`
    /// shows U+FFFD in place of the invalid bytes).
    public var isInvalidUTF8Text: Bool {
        if case .invalidUTF8Text = representation { return true }
        return false
    }

    /// The NULL value.
    public static let null = DatabaseValue(storage: .null)

    /// Whether the value is NULL.
    @inlinable
    public var isNull: Bool {
        if case .storage(.null) = representation { return true }
        return false
    }

    /// The value as SQL text would show it: `NULL`, `1`, `1.5`, `'text'`,
    /// `X'00FF'`, and `CAST(X'636166E9' AS TEXT)` for a text that is not
    /// valid UTF-8.
    public var description: String {
        if case .invalidUTF8Text(let bytes) = representation {
            return "CAST(" + DatabaseValue(storage: .blob(bytes)).description + " AS TEXT)"
        }
        return switch storage {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): SQLLexer.quote(value, delimiter: "'")
        case .blob(let value): "X'" + value.map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return byte < 16 ? "0" + hex : hex
            }.joined() + "'"
        }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }

    /// The value itself: decoding a `DatabaseValue` never fails.
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> DatabaseValue? { databaseValue }
}
