#if Server
import ReactiveSQLite

/// A value a client gives for a parameter: text from a URL's query, or a
/// JSON scalar in a WebSocket message. It becomes a `DatabaseValue` only
/// through `LiveQuery.Parameter.Kind`'s checks.
enum ClientValue: Decodable, Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case null
    /// An array or an object: never a valid argument.
    case composite

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .boolean(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .real(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .composite
        }
    }
}

extension LiveQuery {
    /// The arguments of a subscription: every given value checked against
    /// its declared parameter, defaults for the others.
    ///
    /// - Throws: `LiveRequestError.badRequest` naming the argument at fault.
    func resolveArguments(_ given: [String: ClientValue]) throws(LiveRequestError) -> [String: DatabaseValue] {
        var resolved: [String: DatabaseValue] = [:]
        for name in given.keys.sorted() where !parameters.contains(where: { $0.name == name }) {
            let known = parameters.map(\.name)
            throw .badRequest(
                "unknown argument '\(name)' for live query '\(self.name)'"
                    + (known.isEmpty ? " (it has no parameters)" : " (parameters: \(known.joined(separator: ", ")))"))
        }
        for parameter in parameters {
            if let value = given[parameter.name] {
                resolved[parameter.name] = try parameter.databaseValue(value, query: name)
            } else if let value = parameter.defaultValue {
                resolved[parameter.name] = value
            } else {
                throw .badRequest("missing argument '\(parameter.name)' for live query '\(name)'")
            }
        }
        return resolved
    }
}

extension LiveQuery.Parameter {
    fileprivate func databaseValue(_ value: ClientValue, query: String) throws(LiveRequestError) -> DatabaseValue {
        let refusal = LiveRequestError.badRequest(
            "argument '\(name)' of live query '\(query)' must be \(kind.description), not \(value.description)")
        switch (kind, value) {
        case (.integer, .integer(let integer)):
            return integer.databaseValue
        case (.integer, .string(let text)):
            guard let integer = Int64(text.trimmingASCIISpaces()) else { throw refusal }
            return integer.databaseValue
        case (.real, .integer(let integer)):
            return Double(integer).databaseValue
        case (.real, .real(let real)):
            return real.databaseValue
        case (.real, .string(let text)):
            let text = text.trimmingASCIISpaces()
            guard Self.isDecimalNumber(text), let real = Double(text), real.isFinite else { throw refusal }
            return real.databaseValue
        case (.text, .string(let text)):
            return text.databaseValue
        default:
            throw refusal
        }
    }
}

extension LiveQuery.Parameter {
    /// Whether `text` is a number in decimal notation, as SQLite reads a
    /// real from text: an optional sign, digits with an optional decimal
    /// point (at least one digit), and an optional exponent (`-1.5`, `.5`,
    /// `2.`, `1e-3`). Not hexadecimal (`0x1p4`, which `Double` reads), nor
    /// `nan` or `inf`.
    ///
    /// - Complexity: O(n), where n is the length of `text`.
    static func isDecimalNumber(_ text: Substring) -> Bool {
        var bytes = text.utf8[...]
        func skipDigits() -> Int {
            let count = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        var digits = skipDigits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            digits += skipDigits()
        }
        guard digits > 0 else { return false }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard skipDigits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

extension LiveQuery.Parameter.Kind: CustomStringConvertible {
    /// `an integer`, `a finite number`, `a string`: words of error messages.
    public var description: String {
        switch self {
        case .integer: "an integer"
        case .real: "a finite number"
        case .text: "a string"
        }
    }
}

extension ClientValue: CustomStringConvertible {
    var description: String {
        switch self {
        case .string(let text): "the string \"\(text.prefix(40))\""
        case .integer(let integer): "the integer \(integer)"
        case .real(let real): "the number \(real)"
        case .boolean(let boolean): "\(boolean)"
        case .null: "null"
        case .composite: "an array or object"
        }
    }
}

extension String {
    fileprivate func trimmingASCIISpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return self[start...end]
    }
}
#endif
