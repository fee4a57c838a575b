/// A lexer for SQL text: it tells keywords, parentheses and semicolons
/// apart from string literals, quoted identifiers and comments.
package enum SQLLexer {
    /// Keywords that make a row's presence in a result depend on other rows
    /// (a subquery, `x IN table`, a limit, a grouping, a window) or that
    /// start another clause or statement.
    private static let nonLocalKeywords: Set<String> = [
        "SELECT", "VALUES", "WITH", "FROM", "JOIN", "IN", "LIMIT", "OFFSET", "GROUP", "HAVING", "WINDOW", "OVER",
        "FILTER", "ORDER", "UNION", "EXCEPT", "INTERSECT", "RECURSIVE",
    ]

    /// Whether an SQL fragment given to a request (a filter, an ordering
    /// term) keeps whether a row belongs to the result a matter of that row
    /// alone: balanced parentheses (no clause smuggled out of its
    /// expression), no semicolon, and none of `nonLocalKeywords` outside
    /// string literals, quoted identifiers and comments. Conservative: `x IN
    /// (1, 2)` is row-local but refused.
    ///
    /// - Complexity: O(n), where n is the length of the fragment.
    static func isRowLocalFragment(_ sql: String) -> Bool {
        var depth = 0
        let completed = visitTokens(of: sql) { token in
            switch token {
            case .openingParenthesis:
                depth += 1
                return true
            case .closingParenthesis:
                depth -= 1
                return depth >= 0
            case .semicolon:
                return false
            case .word(let word):
                return !nonLocalKeywords.contains(word.uppercased())
            case .quotedIdentifier, .comma, .dot, .parameter:
                return true
            }
        }
        return completed && depth == 0
    }

    /// Whether `keyword` (uppercase) is one of the words of `sql`, outside
    /// string literals, quoted identifiers and comments.
    ///
    /// - Complexity: O(n), where n is the length of `sql`.
    static func containsKeyword(_ keyword: String, in sql: String) -> Bool {
        !visitTokens(of: sql) { token in
            if case .word(let word) = token, word.uppercased() == keyword { return false }
            return true
        }
    }

    /// The first `count` words of `sql` (uppercased), outside literals,
    /// quoted identifiers and comments; fewer when a parenthesis or a
    /// semicolon comes first.
    ///
    /// - Complexity: O(n), where n is the length of `sql`.
    static func leadingWords(of sql: String, count: Int) -> [String] {
        var words: [String] = []
        _ = visitTokens(of: sql) { token in
            guard case .word(let word) = token else { return false }
            words.append(word.uppercased())
            return words.count < count
        }
        return words
    }

    /// What `visitTokens(of:_:)` reports: the tokens that the scans look
    /// at. String literals, comments and other punctuation are skipped.
    enum Token {
        /// A keyword, a bare identifier or a number, as written.
        case word(String)
        /// An identifier in double quotes, backquotes or brackets, unquoted.
        case quotedIdentifier(String)
        case openingParenthesis
        case closingParenthesis
        case comma
        case semicolon
        /// The period between a schema and a table, or a table and a column.
        case dot
        /// A parameter as written: `?`, `?12`, `:name`, `@name` (`$name`
        /// reads as a word).
        case parameter(String)
    }

    /// Visits the tokens of `sql` in order until `visit` returns false.
    ///
    /// - Returns: Whether every token was visited.
    static func visitTokens(of sql: String, _ visit: (Token) -> Bool) -> Bool {
        visitTokens(of: Array(sql.utf8)) { token, _ in visit(token) }
    }

    /// Visits the tokens of the UTF-8 bytes of SQL in order, with the range
    /// of bytes each one takes, until `visit` returns false.
    ///
    /// - Returns: Whether every token was visited.
    static func visitTokens(of bytes: [UInt8], _ visit: (Token, Range<Int>) -> Bool) -> Bool {
        var index = 0
        func isWordByte(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
        }
        /// Skips to after the closing `terminator` (doubled: an escape),
        /// and returns the quoted text, escapes undone.
        func skipQuoted(_ terminator: UInt8) -> String {
            index += 1
            var text: [UInt8] = []
            while index < bytes.count {
                if bytes[index] == terminator {
                    if index + 1 < bytes.count, bytes[index + 1] == terminator, terminator != UInt8(ascii: "]") {
                        text.append(terminator)
                        index += 2
                        continue
                    }
                    index += 1
                    break
                }
                text.append(bytes[index])
                index += 1
            }
            return String(decoding: text, as: UTF8.self)
        }
        while index < bytes.count {
            let byte = bytes[index]
            let start = index
            switch byte {
            case UInt8(ascii: "'"):
                _ = skipQuoted(byte)
            case UInt8(ascii: "\""), UInt8(ascii: "`"):
                let text = skipQuoted(byte)
                if !visit(.quotedIdentifier(text), start..<index) { return false }
            case UInt8(ascii: "["):
                let text = skipQuoted(UInt8(ascii: "]"))
                if !visit(.quotedIdentifier(text), start..<index) { return false }
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index < bytes.count
                    && !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    index += 1
                }
                index += 2
            case UInt8(ascii: "("):
                index += 1
                if !visit(.openingParenthesis, start..<index) { return false }
            case UInt8(ascii: ")"):
                index += 1
                if !visit(.closingParenthesis, start..<index) { return false }
            case UInt8(ascii: ";"):
                index += 1
                if !visit(.semicolon, start..<index) { return false }
            case UInt8(ascii: ","):
                index += 1
                if !visit(.comma, start..<index) { return false }
            case UInt8(ascii: ".") where !(index + 1 < bytes.count && bytes[index + 1] >= UInt8(ascii: "0") && bytes[index + 1] <= UInt8(ascii: "9")):
                index += 1
                if !visit(.dot, start..<index) { return false }
            case UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                index += 1
                while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
                if !visit(.parameter(String(decoding: bytes[start..<index], as: UTF8.self)), start..<index) { return false }
            default:
                guard isWordByte(byte) else {
                    index += 1
                    continue
                }
                while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
                if !visit(.word(String(decoding: bytes[start..<index], as: UTF8.self)), start..<index) { return false }
            }
        }
        return true
    }

    /// Whether the NUL-terminated text holds only whitespace, semicolons and
    /// comments: no further statement.
    static func isBlank(_ text: UnsafePointer<CChar>) -> Bool {
        var pointer = text
        while true {
            switch UInt8(bitPattern: pointer.pointee) {
            case 0:
                return true
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0C, UInt8(ascii: ";"):
                pointer += 1
            case UInt8(ascii: "-") where UInt8(bitPattern: pointer[1]) == UInt8(ascii: "-"):
                while pointer.pointee != 0 && UInt8(bitPattern: pointer.pointee) != UInt8(ascii: "\n") {
                    pointer += 1
                }
            case UInt8(ascii: "/") where UInt8(bitPattern: pointer[1]) == UInt8(ascii: "*"):
                pointer += 2
                while pointer.pointee != 0
                    && !(UInt8(bitPattern: pointer.pointee) == UInt8(ascii: "*")
                        && UInt8(bitPattern: pointer[1]) == UInt8(ascii: "/"))
                {
                    pointer += 1
                }
                if pointer.pointee == 0 { return true }
                pointer += 2
            default:
                return false
            }
        }
    }

    /// `"name"`, with inner double quotes doubled: a safe SQL identifier;
    /// with `delimiter` `'`, a string literal.
    package static func quote(_ identifier: String, delimiter: Unicode.Scalar = "\"") -> String {
        // Byte by byte: a `"` followed by a combining mark is one Character,
        // which a search for the Character `"` would miss.
        let delimiter = UInt8(ascii: delimiter)
        var bytes: [UInt8] = [delimiter]
        bytes.reserveCapacity(identifier.utf8.count + 2)
        for byte in identifier.utf8 {
            bytes.append(byte)
            if byte == delimiter { bytes.append(byte) }
        }
        bytes.append(delimiter)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` without its leading and trailing white space (Unicode's
    /// `White_Space`, new lines included).
    static func trimmingWhitespace(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}

extension SQLLexer {
    /// The SQL without trailing whitespace and semicolons, ready to be
    /// wrapped in a subquery.
    static func trimmingTrailingSemicolons(_ sql: String) -> String {
        var end = sql.endIndex
        while end > sql.startIndex {
            let previous = sql.index(before: end)
            guard sql[previous] == ";" || sql[previous].isWhitespace else { break }
            end = previous
        }
        return String(sql[..<end])
    }
}
