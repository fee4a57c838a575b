#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ReactiveSQLite

/// How a PostgreSQL column is kept in the replica: its SQLite type, and
/// the conversion of its text representation (what the type's output
/// function writes, which pgoutput sends and the initial copy reads, in a
/// session with `TimeZone` UTC, `DateStyle` ISO and `bytea_output` hex).
///
/// | PostgreSQL | SQLite |
/// | --- | --- |
/// | `smallint`, `integer`, `bigint`, `oid` | `INTEGER` |
/// | `boolean` | `INTEGER` (0 or 1) |
/// | `real`, `double precision` | `REAL` (a non-finite value as its text) |
/// | `numeric` | no declared type (no affinity, which would round a long value to a real): an integer when it fits in 64 bits, a real when it has at most 15 significant digits, else its exact text |
/// | `bytea` | `BLOB` |
/// | everything else (text, varchar, timestamps, dates, uuid, json, enums) | `TEXT`, as PostgreSQL writes it |
public enum PostgresColumnType: Sendable, Equatable {
    case integer, boolean, real, numeric, bytea, text

    /// The type of a column from its type OID.
    public init(oid: UInt32) {
        switch oid {
        case 20, 21, 23, 26: self = .integer
        case 16: self = .boolean
        case 700, 701: self = .real
        case 1700: self = .numeric
        case 17: self = .bytea
        default: self = .text
        }
    }

    /// The declared SQLite type.
    public var sqliteType: String {
        switch self {
        case .integer, .boolean: "INTEGER"
        case .real: "REAL"
        case .numeric: ""
        case .bytea: "BLOB"
        case .text: "TEXT"
        }
    }

    /// The value of the replica from PostgreSQL's text representation.
    /// Never fails: a text that does not parse as the type is kept as text.
    public func value(fromText text: String) -> DatabaseValue {
        switch self {
        case .integer:
            if let integer = Int64(text) { return DatabaseValue(storage: .integer(integer)) }
        case .boolean:
            switch text {
            case "t", "true": return DatabaseValue(storage: .integer(1))
            case "f", "false": return DatabaseValue(storage: .integer(0))
            default: break
            }
        case .real:
            if let real = Double(text), real.isFinite { return DatabaseValue(storage: .real(real)) }
        case .numeric:
            if let integer = Int64(text) { return DatabaseValue(storage: .integer(integer)) }
            let digits = text.utf8.drop { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") }
                .filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if digits.count <= 15, !text.contains("e"), !text.contains("E"), let real = Double(text), real.isFinite {
                return DatabaseValue(storage: .real(real))
            }
        case .bytea:
            if let bytes = Self.hexBytes(text) { return DatabaseValue(storage: .blob(bytes)) }
        case .text:
            break
        }
        return DatabaseValue(storage: .text(text))
    }

    /// The bytes of `\x0a1b...`; nil when the text is not that.
    private static func hexBytes(_ text: String) -> Data? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            return nil
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = hexDigit(utf8[index]), let low = hexDigit(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return Data(bytes)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
