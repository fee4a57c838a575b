import DatabaseRegions
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// A term `column = constant` or `column IN (constant, ...)` of a
/// `RowFilter`'s `WHERE` clause that the whole clause requires (one of the
/// terms joined by `AND` at its top level, with no `OR`): a row that holds
/// none of the constants in the column does not match the clause.
///
/// The region index finds the observations pinned to a changed row's
/// values in time proportional to their number (`ValuePin`), so that
/// 10 000 observations of `owner = ?` cost a change of one owner's row
/// what one observation costs.
struct PinnedColumn: Sendable, Hashable {
    /// A constant of the term: a literal as written (a number, a string or
    /// a blob), or the value of a parameter.
    enum Constant: Sendable, Hashable {
        case literal(String)
        case value(DatabaseValue)
    }

    /// The column, as written (unquoted).
    let column: String
    let constants: [Constant]

    /// How the pinned values of a column compare: its collation.
    enum Collation: Sendable {
        case binary, noCase, rightTrim

        /// The collation SQLite names so; nil for another one, whose
        /// comparisons the index cannot tell.
        init?(name: String) {
            switch name.uppercased() {
            case "BINARY": self = .binary
            case "NOCASE": self = .noCase
            case "RTRIM": self = .rightTrim
            default: return nil
            }
        }
    }

    /// The value a row or a constant holds, as the index compares it: the
    /// values SQLite finds equal under `collation` give equal keys (numbers
    /// by value, texts under the collation, blobs by bytes); nil when it
    /// cannot be read (SQLite out of memory): unknown.
    static func indexedValue(_ value: OpaquePointer, collation: Collation) -> IndexedValue? {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            return .number(Double(sqlite3_value_int64(value)))
        case SQLITE_FLOAT:
            return .number(sqlite3_value_double(value))
        case SQLITE_TEXT:
            guard let text = sqlite3_value_text(value) else { return nil }
            let count = Int(sqlite3_value_bytes(value))
            var bytes = Array(UnsafeBufferPointer(start: text, count: count))
            switch collation {
            case .binary: break
            case .noCase:
                // SQLite's NOCASE folds ASCII letters only, stops comparing
                // at the first NUL byte, and then compares the lengths:
                // the bytes up to that NUL, and the length, decide.
                for index in bytes.indices where bytes[index] &- 0x41 < 26 { bytes[index] |= 0x20 }
                if let nul = bytes.firstIndex(of: 0) {
                    bytes.removeSubrange((nul + 1)...)
                    withUnsafeBytes(of: UInt64(count).littleEndian) { bytes += $0 }
                }
            case .rightTrim:
                while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
            }
            return .text(bytes)
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0 else { return .blob([]) }
            guard let blob = sqlite3_value_blob(value) else { return nil }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }

    /// SQLite's affinity of a declared column type
    /// (https://www.sqlite.org/datatype3.html#determination_of_column_affinity);
    /// nil for `ANY`, which a STRICT table stores as given.
    static func affinity(ofDeclaredType type: String) -> String? {
        let type = type.uppercased()
        if type.split(separator: " ") == ["ANY"] { return nil }
        if type.contains("INT") { return "INTEGER" }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return "TEXT" }
        if type.contains("BLOB") || type.isEmpty { return "BLOB" }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return "REAL" }
        return "NUMERIC"
    }

    // MARK: - Finding the terms

    /// The pinned columns of a `WHERE` clause, in the order of its terms;
    /// empty when the clause has no such term, or a top-level `OR` or
    /// `CASE`.
    ///
    /// - Parameter argument: The value of the parameter as written
    ///   (`?`, `:name`...), given the number of `?` before it in the clause.
    static func terms(ofWhereClause bytes: ArraySlice<UInt8>, argument: (String, Int) -> DatabaseValue?) -> [PinnedColumn] {
        var terms: [[Token]] = [[]]
        var depth = 0
        var inBetween = false
        var positional = 0
        var tokens: [Token] = []
        guard tokenize(bytes, into: &tokens) else { return [] }
        for token in tokens {
            switch token {
            case .open: depth += 1
            case .close: depth -= 1
            case .word(let word) where depth == 0:
                switch word.uppercased() {
                case "OR", "CASE": return []
                case "BETWEEN": inBetween = true
                case "AND":
                    if inBetween {
                        inBetween = false
                    } else {
                        terms.append([])
                        continue
                    }
                default: break
                }
            default: break
            }
            if case .parameter(let name) = token {
                // Resolved now: the term keeps the value, not the position.
                terms[terms.count - 1].append(argument(name, positional).map { .value($0) } ?? .other)
                if name == "?" { positional += 1 }
                continue
            }
            terms[terms.count - 1].append(token)
        }
        return terms.compactMap(pinnedColumn(ofTerm:))
    }

    private enum Token: Equatable {
        case word(String)
        case identifier(String)
        case literal(String)
        case parameter(String)
        case value(DatabaseValue)
        case open, close, comma, dot, equals, minus, other
    }

    /// `column = constant`, `constant = column`, `column IN (constant, ...)`.
    private static func pinnedColumn(ofTerm tokens: [Token]) -> PinnedColumn? {
        func column(_ tokens: ArraySlice<Token>) -> String? {
            // `column`, `table.column`, `schema.table.column`.
            guard tokens.count % 2 == 1, tokens.count <= 5 else { return nil }
            var name: String?
            for (offset, token) in tokens.enumerated() {
                switch (offset % 2, token) {
                case (0, .word(let text)), (0, .identifier(let text)): name = text
                case (1, .dot): continue
                default: return nil
                }
            }
            return name
        }
        func constant(_ tokens: ArraySlice<Token>) -> Constant? {
            guard let last = tokens.last else { return nil }
            switch (tokens.count, tokens.first, last) {
            case (1, _, .literal(let text)): return .literal(text)
            case (1, _, .value(let value)): return .value(value)
            case (2, .minus?, .literal(let text)):
                guard let first = text.utf8.first, first == UInt8(ascii: ".") || (first >= 48 && first <= 57) else { return nil }
                return .literal("-" + text)
            default: return nil
            }
        }
        if let equals = tokens.firstIndex(of: .equals) {
            let left = tokens[..<equals]
            let right = tokens[(equals + 1)...]
            if let name = column(left), let value = constant(right) { return PinnedColumn(column: name, constants: [value]) }
            if let name = column(right), let value = constant(left) { return PinnedColumn(column: name, constants: [value]) }
            return nil
        }
        // column IN ( constant [, constant]* )
        guard let inIndex = tokens.firstIndex(where: { if case .word(let word) = $0 { word.uppercased() == "IN" } else { false } }),
            let name = column(tokens[..<inIndex]), inIndex + 2 < tokens.count,
            tokens[inIndex + 1] == .open, tokens.last == .close
        else { return nil }
        var constants: [Constant] = []
        for part in tokens[(inIndex + 2)..<(tokens.count - 1)].split(separator: .comma, omittingEmptySubsequences: false) {
            guard let value = constant(part) else { return nil }
            constants.append(value)
        }
        return constants.isEmpty ? nil : PinnedColumn(column: name, constants: constants)
    }

    /// The tokens of SQL text, operators included; false for text it cannot read.
    private static func tokenize(_ bytes: ArraySlice<UInt8>, into tokens: inout [Token]) -> Bool {
        var index = bytes.startIndex
        func isWordByte(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
        }
        func byte(at offset: Int) -> UInt8? { offset < bytes.endIndex ? bytes[offset] : nil }
        /// The end of a quoted text that starts at `start` (doubled terminators are escapes).
        func endOfQuoted(from start: Int, terminator: UInt8) -> Int? {
            var offset = start + 1
            while offset < bytes.endIndex {
                if bytes[offset] == terminator {
                    if terminator != UInt8(ascii: "]"), byte(at: offset + 1) == terminator {
                        offset += 2
                        continue
                    }
                    return offset + 1
                }
                offset += 1
            }
            return nil
        }
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        while index < bytes.endIndex {
            let current = bytes[index]
            let start = index
            switch current {
            case 0x09, 0x0A, 0x0C, 0x0D, 0x20:
                index += 1
            case UInt8(ascii: "-") where byte(at: index + 1) == UInt8(ascii: "-"):
                while index < bytes.endIndex, bytes[index] != 0x0A { index += 1 }
            case UInt8(ascii: "/") where byte(at: index + 1) == UInt8(ascii: "*"):
                index += 2
                while index < bytes.endIndex, !(bytes[index] == UInt8(ascii: "*") && byte(at: index + 1) == UInt8(ascii: "/")) {
                    index += 1
                }
                index = min(index + 2, bytes.endIndex)
            case UInt8(ascii: "'"):
                guard let end = endOfQuoted(from: index, terminator: current) else { return false }
                index = end
                tokens.append(.literal(text(start..<end)))
            case UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                let terminator = current == UInt8(ascii: "[") ? UInt8(ascii: "]") : current
                guard let end = endOfQuoted(from: index, terminator: terminator) else { return false }
                index = end
                var name = Array(bytes[(start + 1)..<(end - 1)])
                if terminator != UInt8(ascii: "]") {
                    // Doubled terminators stand for one.
                    var unescaped: [UInt8] = []
                    var offset = 0
                    while offset < name.count {
                        unescaped.append(name[offset])
                        offset += name[offset] == terminator ? 2 : 1
                    }
                    name = unescaped
                }
                tokens.append(.identifier(String(decoding: name, as: UTF8.self)))
            case UInt8(ascii: "("): index += 1; tokens.append(.open)
            case UInt8(ascii: ")"): index += 1; tokens.append(.close)
            case UInt8(ascii: ","): index += 1; tokens.append(.comma)
            case UInt8(ascii: "-"): index += 1; tokens.append(.minus)
            case UInt8(ascii: "="):
                index += byte(at: index + 1) == UInt8(ascii: "=") ? 2 : 1
                tokens.append(.equals)
            case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "!"), UInt8(ascii: "|"):
                // `<=`, `>=`, `!=`, `<>`, `<<`, `>>`, `||`: one operator.
                index += 1
                if let next = byte(at: index), [UInt8(ascii: "="), UInt8(ascii: ">"), UInt8(ascii: "<"), UInt8(ascii: "|")].contains(next) {
                    index += 1
                }
                tokens.append(.other)
            case UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "$"):
                index += 1
                while index < bytes.endIndex, isWordByte(bytes[index]) { index += 1 }
                tokens.append(.parameter(text(start..<index)))
            case UInt8(ascii: ".") where !(byte(at: index + 1).map { $0 >= 48 && $0 <= 57 } ?? false):
                index += 1
                tokens.append(.dot)
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
                // A number: digits, a point, an exponent and its sign, hexadecimal digits.
                index += 1
                while let next = byte(at: index) {
                    if isWordByte(next) || next == UInt8(ascii: ".") {
                        index += 1
                    } else if next == UInt8(ascii: "+") || next == UInt8(ascii: "-"),
                        bytes[index - 1] | 0x20 == UInt8(ascii: "e"), !(bytes[start..<index].contains { $0 | 0x20 == UInt8(ascii: "x") })
                    {
                        index += 1
                    } else {
                        break
                    }
                }
                tokens.append(.literal(text(start..<index)))
            case UInt8(ascii: "x") where byte(at: index + 1) == UInt8(ascii: "'"),
                UInt8(ascii: "X") where byte(at: index + 1) == UInt8(ascii: "'"):
                guard let end = endOfQuoted(from: index + 1, terminator: UInt8(ascii: "'")) else { return false }
                index = end
                tokens.append(.literal(text(start..<end)))
            default:
                guard isWordByte(current) else {
                    index += 1
                    tokens.append(.other)
                    continue
                }
                while index < bytes.endIndex, isWordByte(bytes[index]) { index += 1 }
                tokens.append(.word(text(start..<index)))
            }
        }
        return true
    }
}
