#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ReactiveSQLite

/// How database values are written in the table output (JSON values are
/// `RowJSON`'s).
///
/// `NULL`; integers and reals as SQLite prints them (`Inf` for an infinite
/// real); texts without quotes, control characters escaped (`\n`, `\t`,
/// `\u{1B}`), so a row stays on one line and a value cannot send escape
/// sequences to the terminal; blobs as SQL literals (`X'00FF'`), the first
/// 32 bytes of longer ones followed by their size. A text that is not valid
/// UTF-8 (a Latin-1 `café`) keeps its bytes: its invalid bytes are shown as
/// `\xE9`. Whether a value changed is decided on its bytes.
enum ValueText {
    /// The longest blob shown whole in a table.
    static let tableBlobPrefix = 32

    static func table(_ value: DatabaseValue) -> String {
        if value.isInvalidUTF8Text, let bytes = value.textBytes { return escapingInvalidUTF8(bytes) }
        return switch value.storage {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): realText(real, infinity: "Inf")
        case .text(let text): escapingControlCharacters(text)
        case .blob(let data):
            data.count <= tableBlobPrefix
                ? "X'\(hex(data))'"
                : "X'\(hex(data.prefix(tableBlobPrefix)))'… (\(data.count) bytes)"
        }
    }

    /// Whether the value is shown as a number (aligned to the right in tables).
    static func isNumeric(_ value: DatabaseValue) -> Bool {
        switch value.storage {
        case .integer, .real, .null: true
        case .text, .blob: false
        }
    }

    // MARK: - Helpers

    private static func realText(_ real: Double, infinity: String) -> String {
        if real.isInfinite { return real < 0 ? "-" + infinity : infinity }
        return String(real)
    }

    /// The text with its control characters escaped, as in tables: `\n`,
    /// `\t`, `\u{1B}`. Also for column names, which a query chooses.
    static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return text.unicodeScalars.map { scalar in
            guard isControl(scalar) else { return String(scalar) }
            return namedEscapes[scalar] ?? "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }.joined()
    }

    /// The valid UTF-8 parts of `bytes` as text (control characters
    /// escaped), each byte that starts no valid sequence as `\xHH`.
    private static func escapingInvalidUTF8(_ bytes: Data) -> String {
        let bytes = Array(bytes)
        var result = ""
        var valid: [UInt8] = []
        var index = 0
        while index < bytes.count {
            // The shortest valid sequence at `index`, if any (1 to 4 bytes).
            let length = (1...4).first { length in
                index + length <= bytes.count
                    && String(validating: bytes[index..<(index + length)], as: UTF8.self) != nil
            }
            if let length {
                valid.append(contentsOf: bytes[index..<(index + length)])
                index += length
            } else {
                result += escapingControlCharacters(String(decoding: valid, as: UTF8.self))
                valid.removeAll()
                result += "\\x" + hex(CollectionOfOne(bytes[index]))
                index += 1
            }
        }
        return result + escapingControlCharacters(String(decoding: valid, as: UTF8.self))
    }

    /// The control characters written as in Swift and C literals.
    private static let namedEscapes: [Unicode.Scalar: String] = ["\n": "\\n", "\r": "\\r", "\t": "\\t"]

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hex(_ data: some Collection<UInt8>) -> String {
        RowJSON.hexadecimal(data)
    }
}
