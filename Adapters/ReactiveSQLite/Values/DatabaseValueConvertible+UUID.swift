#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UUID: DatabaseValueConvertible {
    /// The UUID as a 16-byte blob, in the order of its textual form
    /// (`E621E1F8-C36C-495A-...` stores the bytes `E6 21 E1 F8 C3 6C 49 5A ...`).
    public var databaseValue: DatabaseValue {
        DatabaseValue(storage: .blob(withUnsafeBytes(of: uuid) { Data($0) }))
    }

    /// Decodes a UUID from a 16-byte blob, or from text: the usual 36
    /// characters with dashes (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`), or
    /// the 32 hexadecimal digits without dashes, in any case. Anything else
    /// (a blob of another length, other text, a number) gives nil.
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> UUID? {
        switch databaseValue.storage {
        case .blob(let data):
            guard data.count == 16 else { return nil }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { _ = data.copyBytes(to: $0) }
            return UUID(uuid: uuid)
        case .text(let text):
            return UUID(databaseText: text)
        case .null, .integer, .real:
            return nil
        }
    }

    /// Parses 36 characters with dashes at offsets 8, 13, 18 and 23, or 32
    /// hexadecimal digits, by hand (case-insensitive).
    private init?(databaseText text: String) {
        let utf8 = text.utf8
        let hasDashes: Bool
        switch utf8.count {
        case 36: hasDashes = true
        case 32: hasDashes = false
        default: return nil
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let isValid = withUnsafeMutableBytes(of: &uuid) { output -> Bool in
            var byteIndex = 0
            var high: UInt8?
            for (offset, character) in utf8.enumerated() {
                if hasDashes, offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = Self.hexadecimalValue(character) else { return false }
                if let value = high {
                    output[byteIndex] = value << 4 | nibble
                    byteIndex += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return byteIndex == 16
        }
        guard isValid else { return nil }
        self.init(uuid: uuid)
    }

    private static func hexadecimalValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
