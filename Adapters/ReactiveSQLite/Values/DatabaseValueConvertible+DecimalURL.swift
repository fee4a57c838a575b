#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Decimal: DatabaseValueConvertible {
    /// The decimal as text, in the POSIX format (`3.14`, `-0.001`): no digit
    /// is lost, as a REAL would lose some. A column of NUMERIC affinity may
    /// store the text as a number; it reads back all the same.
    public var databaseValue: DatabaseValue {
        DatabaseValue(storage: .text(description))
    }

    /// Decodes an integer; a finite real, by its shortest decimal form (the
    /// real `3.14` gives the decimal 3.14, not its binary approximation); or
    /// a text that is a number in the POSIX format (an optional sign,
    /// digits with an optional `.` fraction, an optional exponent), as
    /// written by this conversion or another tool. Anything else (a blob,
    /// other text, a real that is not finite) gives nil.
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Decimal? {
        switch databaseValue.storage {
        case .integer(let value):
            return Decimal(value)
        case .real(let value):
            guard value.isFinite else { return nil }
            return Decimal(numberText: value.description)
        case .text(let text):
            return Decimal(numberText: text)
        case .null, .blob:
            return nil
        }
    }

    /// A decimal from the whole of `text`, when it is a number in the POSIX
    /// format (`Decimal(string:)` alone accepts a number followed by other
    /// characters, and reads its prefix).
    private init?(numberText text: String) {
        var bytes = text.utf8[...]
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        let integerDigits = bytes.prefix { Self.isDigit($0) }.count
        bytes = bytes.dropFirst(integerDigits)
        var fractionDigits = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fractionDigits = bytes.prefix { Self.isDigit($0) }.count
            bytes = bytes.dropFirst(fractionDigits)
        }
        guard integerDigits + fractionDigits > 0 else { return nil }
        if let marker = bytes.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                bytes = bytes.dropFirst()
            }
            let exponentDigits = bytes.prefix { Self.isDigit($0) }.count
            guard exponentDigits > 0 else { return nil }
            bytes = bytes.dropFirst(exponentDigits)
        }
        guard bytes.isEmpty, let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
            !value.isNaN
        else { return nil }
        self = value
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

extension URL: DatabaseValueConvertible {
    /// The URL as text: its `absoluteString` (`https://example.com/a?b=1`),
    /// which `WHERE url = 'https://example.com/a?b=1'` matches.
    public var databaseValue: DatabaseValue {
        DatabaseValue(storage: .text(absoluteString))
    }

    /// Decodes a text that `URL(string:)` accepts. Anything else (a blob, a
    /// number, text that is not a URL) gives nil.
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> URL? {
        guard case .text(let text) = databaseValue.storage else { return nil }
        return URL(string: text)
    }
}
