/// The columns each generated column of a table is computed from, read from
/// the table's `CREATE TABLE` statement.
///
/// SQLite tells neither the hooks nor the authorizer which columns a
/// generated column reads (reading one is authorized as reading that
/// column alone), so the definition is parsed: each column definition of
/// the table's column list whose top level holds `AS (expr)` is a generated
/// column, and the identifiers of `expr` (bare or quoted) that name columns
/// of the table are the columns it is computed from. Naming more columns
/// than the expression reads (a function whose name is also a column's) is
/// safe: it only tells observers of potential changes.
///
/// A generated column may read other generated columns: `columns(of:)`
/// follows them down to stored columns (SQLite refuses cycles).
struct GeneratedColumnDependencies {
    /// The columns each generated column's expression names, lowercased,
    /// by lowercased generated column name.
    private var direct: [String: Set<String>] = [:]

    /// Parses `sql`, the `CREATE TABLE` statement of a table whose columns
    /// are `columns` (lowercased). Nil when the statement cannot be read
    /// as expected: then any change may change every generated column.
    ///
    /// - Complexity: O(n) in the length of the statement.
    init?(createTableSQL sql: String, columns: [String], generatedColumns: [String]) {
        let tokens = Self.tokens(of: sql)
        guard let open = tokens.firstIndex(of: .open) else { return nil }
        let known = Set(columns)
        let generated = Set(generatedColumns)
        var depth = 0
        var definition: [Token] = []
        var index = open + 1
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            switch token {
            case .open: depth += 1
            case .close where depth == 0:
                guard record(definition, known: known, generated: generated) else { return nil }
                definition = []
                index = tokens.count
                continue
            case .close: depth -= 1
            case .comma where depth == 0:
                guard record(definition, known: known, generated: generated) else { return nil }
                definition = []
                continue
            default: break
            }
            definition.append(token)
        }
        // Every generated column the schema knows must have been found.
        guard generatedColumns.allSatisfy({ direct[$0] != nil }) else { return nil }
    }

    /// Records the dependencies of one definition of the column list, when
    /// it is a generated column (`generated`: the schema says which). False
    /// when it cannot be read.
    private mutating func record(_ definition: [Token], known: Set<String>, generated: Set<String>) -> Bool {
        guard case .identifier(let name)? = definition.first, known.contains(name), generated.contains(name) else {
            return true
        }
        // The keyword `AS` then `(` at the top level of the definition:
        // `CAST(x AS t)` in a DEFAULT or CHECK is inside parentheses, and a
        // quoted type name `"AS"(1)` is not the keyword.
        var depth = 0
        var start: Int?
        for (offset, token) in definition.enumerated() {
            switch token {
            case .open: depth += 1
            case .close: depth -= 1
            case .as where depth == 0:
                if offset + 1 < definition.count, definition[offset + 1] == .open { start = offset + 2 }
            default: break
            }
            if start != nil { break }
        }
        guard let start else { return true }
        depth = 0
        var names: Set<String> = []
        for token in definition[start...] {
            switch token {
            case .open: depth += 1
            case .close:
                if depth == 0 {
                    // Two names that Swift finds equal (Unicode
                    // normalization) but SQLite does not: unreadable.
                    guard direct[name] == nil else { return false }
                    direct[name] = names
                    return true
                }
                depth -= 1
            case .identifier(let word) where known.contains(word): names.insert(word)
            default: break
            }
        }
        return false
    }

    /// The stored columns `column` is computed from, lowercased, following
    /// generated columns it reads; nil when `column` is not a generated
    /// column.
    func columns(of column: String) -> Set<String>? {
        guard direct[column] != nil else { return nil }
        var result: Set<String> = []
        var visited: Set<String> = [column]
        var pending = [column]
        while let next = pending.popLast() {
            for name in direct[next] ?? [] {
                if direct[name] != nil {
                    if visited.insert(name).inserted { pending.append(name) }
                } else {
                    result.insert(name)
                }
            }
        }
        return result
    }

    // MARK: - Tokens

    enum Token: Equatable {
        /// A bare word or a quoted identifier, unquoted and lowercased.
        case identifier(String)
        /// The bare word `AS`, a keyword (a quoted `"as"` is an identifier).
        case `as`
        case open
        case close
        case comma
        /// A semicolon.
        case other
    }

    /// The tokens of `sql` that the parse looks at, as `SQLLexer` reads
    /// them (string literals and comments skipped).
    static func tokens(of sql: String) -> [Token] {
        var tokens: [Token] = []
        _ = SQLLexer.visitTokens(of: sql) { token in
            switch token {
            case .word(let word):
                let lowercased = word.lowercasedIdentifier
                tokens.append(lowercased == "as" ? .as : .identifier(lowercased))
            case .quotedIdentifier(let word): tokens.append(.identifier(word.lowercasedIdentifier))
            case .openingParenthesis: tokens.append(.open)
            case .closingParenthesis: tokens.append(.close)
            case .comma: tokens.append(.comma)
            case .semicolon, .parameter: tokens.append(.other)
            // Skipped, as they were before the lexer reported them.
            case .dot: break
            }
            return true
        }
        return tokens
    }
}
