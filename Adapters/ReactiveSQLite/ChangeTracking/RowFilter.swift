/// The `WHERE` clause of an observed `SELECT` of one table: a change of a
/// row of that table that the clause matches neither before nor after it
/// cannot change the result, and does not concern the observation.
///
/// The clause is evaluated by SQLite itself, on a copy of the row in a
/// copy of the table (see `RowFilterEvaluator`): type affinity, collations,
/// NULL's three-valued logic, `LIKE`, `GLOB`, `IN`, `BETWEEN`, `IS` and
/// built-in functions behave as in the query. A statement qualifies when
/// it is one `SELECT` (no subquery, compound, `WITH` or `VALUES`) of one
/// table, `[main.]table [[AS] alias]` (no join, no `INDEXED BY`), with a
/// `WHERE` clause that calls no function whose value depends on the
/// connection or on chance, and whose parameters are all positional `?`
/// or all named. Whatever the filter cannot tell (a function or collation
/// the copy does not know, an error) notifies, as without a filter.
struct RowFilter: Sendable, Hashable {
    /// The table, lowercased.
    let table: String
    /// `SELECT 1 FROM <from> WHERE <where>`, run on the copy of one row.
    let sql: String
    /// The arguments of the `WHERE` clause's parameters.
    let arguments: StatementArguments
    /// The terms of the clause that pin a column to constants, which every
    /// matching row satisfies (see `PinnedColumn`).
    let pinnedColumns: [PinnedColumn]
    /// The `ORDER BY ... LIMIT` window of the statement, if it has one that
    /// the engine can follow (see `RowWindow`).
    let window: RowWindow?
    /// The `FROM` clause (`table [[AS] alias]`) and the `WHERE` clause
    /// (`1` when there is none) as written.
    let fromText: String
    let whereText: String
    /// Whether the clause uses `LIKE` (the operator or the function), whose
    /// case sensitivity `PRAGMA case_sensitive_like` sets per connection.
    let usesLike: Bool

    /// Functions whose value is not a function of their arguments and the
    /// row: the copy would not give the query's answer.
    private static let excludedFunctions: Set<String> = [
        "RANDOM", "RANDOMBLOB", "CHANGES", "TOTAL_CHANGES", "LAST_INSERT_ROWID", "SQLITE_OFFSET",
    ]

    /// Words that end the `WHERE` clause at the top level.
    private static let clauseEnds: Set<String> = ["GROUP", "HAVING", "WINDOW", "ORDER", "LIMIT"]

    /// The filter of `sql`, a statement that reads `table`; nil when the
    /// statement does not qualify (see the type's documentation).
    init?(sql: String, arguments: StatementArguments) {
        let bytes = Array(sql.utf8)
        var tokens: [(token: SQLLexer.Token, range: Range<Int>)] = []
        var depth = 0
        // Top-level positions of FROM, WHERE and the clause after WHERE.
        var from: Int?
        var whereIndex: Int?
        var end: Int?
        // Top-level positions of ORDER and LIMIT, and whether the statement
        // groups rows (no window then).
        var order: Int?
        var limit: Int?
        var groups = false
        var selectCount = 0
        var semicolon: Int?
        var usesLike = false
        var qualifies = SQLLexer.visitTokens(of: bytes) { token, range in
            switch token {
            case .openingParenthesis: depth += 1
            case .closingParenthesis: depth -= 1
            case .semicolon:
                semicolon = range.upperBound
                return false
            case .word(let word):
                let upper = word.uppercased()
                if upper == "SELECT" { selectCount += 1 }
                if upper == "LIKE" { usesLike = true }
                if Self.excludedFunctions.contains(upper) { return false }
                if ["UNION", "INTERSECT", "EXCEPT", "WITH", "VALUES", "JOIN", "INDEXED"].contains(upper) { return false }
                if depth == 0 {
                    if upper == "FROM", from == nil { from = tokens.count }
                    if upper == "WHERE", whereIndex == nil, from != nil { whereIndex = tokens.count }
                    if Self.clauseEnds.contains(upper), whereIndex != nil, end == nil { end = tokens.count }
                    if from != nil {
                        if upper == "ORDER", order == nil { order = tokens.count }
                        if upper == "LIMIT", limit == nil { limit = tokens.count }
                        if ["GROUP", "HAVING", "WINDOW"].contains(upper) { groups = true }
                    }
                }
            default: break
            }
            tokens.append((token, range))
            return true
        }
        // Trailing semicolons end the statement: nothing else may follow.
        if let semicolon, bytes[semicolon...].allSatisfy({ $0 == UInt8(ascii: ";") || $0 <= 32 }) {
            qualifies = true
        }
        guard qualifies, selectCount == 1, case .word(let first)? = tokens.first?.token, first.uppercased() == "SELECT",
            let from
        else { return nil }
        let window = groups ? nil : RowWindow(tokens: tokens, bytes: bytes, from: from, order: order, limit: limit)
        // Without WHERE, a window alone: the clause is `1`.
        let hasWhere = whereIndex != nil
        guard let whereIndex = whereIndex ?? (window != nil ? order : nil), whereIndex > from + 1 else { return nil }
        let fromTokens = tokens[(from + 1)..<whereIndex]
        guard let table = Self.table(ofFromClause: Array(fromTokens.map(\.token))) else { return nil }
        let whereTokens = hasWhere ? tokens[(whereIndex + 1)..<(end ?? tokens.count)] : []
        guard !whereTokens.isEmpty || !hasWhere else { return nil }
        let fromText = String(decoding: bytes[fromTokens.first!.range.lowerBound..<fromTokens.last!.range.upperBound], as: UTF8.self)
        var whereStart = tokens[whereIndex].range.upperBound
        while whereStart < bytes.count, bytes[whereStart] <= 32 { whereStart += 1 }
        var whereEnd = end.map { tokens[$0].range.lowerBound } ?? bytes.count
        while whereEnd > whereStart, bytes[whereEnd - 1] == UInt8(ascii: ";") || bytes[whereEnd - 1] <= 32 { whereEnd -= 1 }
        let whereText = hasWhere ? String(decoding: bytes[whereStart..<whereEnd], as: UTF8.self) : "1"

        // Parameters: all positional `?`, or all named.
        var positionalBefore = 0
        var positionalInWhere = 0
        var namesInWhere: Set<String> = []
        var hasNamed = false
        for (offset, entry) in tokens.enumerated() {
            let name: String
            switch entry.token {
            case .parameter(let text): name = text
            case .word(let word) where word.hasPrefix("$"): name = word
            default: continue
            }
            let inWhere = hasWhere && offset > whereIndex && offset < (end ?? tokens.count)
            if name == "?" {
                if inWhere { positionalInWhere += 1 } else if offset < whereIndex { positionalBefore += 1 }
            } else if name.hasPrefix("?") {
                // A numbered parameter: its number does not follow the text.
                return nil
            } else {
                hasNamed = true
                if inWhere { namesInWhere.insert(String(name.dropFirst())) }
            }
        }
        let filterArguments: StatementArguments
        if hasNamed {
            guard positionalBefore + positionalInWhere == 0, arguments.values.isEmpty else { return nil }
            var named: [String: (any DatabaseValueConvertible)?] = [:]
            for name in namesInWhere {
                guard let value = arguments.namedValues[name] else { return nil }
                named[name] = value
            }
            filterArguments = StatementArguments(named)
        } else {
            guard arguments.namedValues.isEmpty, positionalBefore + positionalInWhere <= arguments.values.count else {
                return nil
            }
            filterArguments = StatementArguments(
                arguments.values[positionalBefore..<(positionalBefore + positionalInWhere)].map { $0 as (any DatabaseValueConvertible)? })
        }
        self.table = table.lowercasedIdentifier
        self.sql = "SELECT 1 FROM \(fromText) WHERE \(whereText)"
        self.arguments = filterArguments
        self.fromText = fromText
        self.whereText = whereText
        self.usesLike = usesLike
        self.window = window
        pinnedColumns = !hasWhere ? [] : PinnedColumn.terms(ofWhereClause: bytes[whereStart..<whereEnd]) { name, position in
            if name == "?" {
                return position < filterArguments.values.count ? filterArguments.values[position] : nil
            }
            return filterArguments.namedValues[String(name.dropFirst())]
        }
    }

    /// The table of a `FROM` clause `[main.]table [[AS] alias]`.
    private static func table(ofFromClause tokens: [SQLLexer.Token]) -> String? {
        func name(_ token: SQLLexer.Token) -> String? {
            switch token {
            case .word(let word):
                // A keyword is not a name here (`FROM t NATURAL ...` and the like).
                return ["AS", "ON", "USING", "NATURAL", "LEFT", "CROSS", "INNER", "NOT"].contains(word.uppercased())
                    ? nil : word
            case .quotedIdentifier(let text): return text
            default: return nil
            }
        }
        var rest = tokens[...]
        guard let first = rest.first.flatMap(name) else { return nil }
        rest = rest.dropFirst()
        var table = first
        if case .dot? = rest.first {
            guard first.lowercasedIdentifier == "main", rest.count >= 2, let second = name(rest[rest.startIndex + 1]) else {
                return nil
            }
            table = second
            rest = rest.dropFirst(2)
        }
        if case .word(let word)? = rest.first, word.uppercased() == "AS" { rest = rest.dropFirst() }
        if let alias = rest.first {
            guard name(alias) != nil else { return nil }
            rest = rest.dropFirst()
        }
        return rest.isEmpty ? table : nil
    }
}

extension RowFilter {
    /// Whether two filters are the same: the same texts, byte for byte (two
    /// spellings of "é" are two columns for SQLite, one string for Swift's
    /// `==`), and the same arguments. The table, the pins and the window's
    /// terms follow from the texts.
    static func == (lhs: RowFilter, rhs: RowFilter) -> Bool {
        lhs.sql.utf8.elementsEqual(rhs.sql.utf8)
            && (lhs.window?.orderText ?? "").utf8.elementsEqual((rhs.window?.orderText ?? "").utf8)
            && lhs.window?.limit == rhs.window?.limit && lhs.arguments == rhs.arguments
    }

    func hash(into hasher: inout Hasher) {
        var sql = sql
        sql.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(window?.limit)
        hasher.combine(arguments)
    }
}
