/// The `ORDER BY ... LIMIT n` window of an observed one-table request (a
/// leaderboard): a change of a row that sorts after the window's last row
/// (its boundary) both before and after the change cannot change the
/// result, and does not concern the observation.
///
/// A statement qualifies when its result columns are `*`, `table.*` or
/// column names (no alias, no expression: an `ORDER BY` name then means the
/// table's column), it does not group rows nor read the clock (`date`,
/// `unixepoch`, `CURRENT_TIMESTAMP`...: time alone would move the window),
/// its `ORDER BY` terms are
/// column names, each with `ASC` or `DESC` and `NULLS FIRST` or `NULLS
/// LAST` (no `COLLATE`, no expression, no position), and its `LIMIT` is
/// an integer literal, without `OFFSET` (or `OFFSET 0`).
struct RowWindow: Sendable, Hashable {
    struct Term: Sendable, Hashable {
        /// The column as written (`name`, `p.name`, `"name"` unquoted).
        var column: [String]
        var isDescending: Bool
        var nullsFirst: Bool
    }

    var terms: [Term]
    var limit: Int
    /// The `ORDER BY` clause as written, without `ORDER BY`.
    var orderText: String

    /// Keywords and functions whose value depends on the time.
    private static let clockFunctions: Set<String> = [
        "CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP", "DATE", "TIME", "DATETIME", "JULIANDAY", "UNIXEPOCH",
        "STRFTIME", "TIMEDIFF",
    ]

    init?(tokens: [(token: SQLLexer.Token, range: Range<Int>)], bytes: [UInt8], from: Int, order: Int?, limit: Int?) {
        guard let order, let limitIndex = limit, order < limitIndex, order + 2 < limitIndex else { return nil }
        // Result columns: `*`, `table.*` and column names only, so that an
        // `ORDER BY` name is the table's column, not a result's alias (with
        // or without `AS`). The lexer skips `*`, operators and strings: only
        // whitespace and `*` may separate the tokens.
        for index in 0..<from {
            let gap = bytes[tokens[index].range.upperBound..<tokens[index + 1].range.lowerBound]
            guard gap.allSatisfy({ $0 <= 32 || $0 == UInt8(ascii: "*") }) else { return nil }
        }
        for part in tokens[1..<from].split(whereSeparator: { if case .comma = $0.token { true } else { false } }) {
            let entries = Array(part)
            // Names and periods alternate: `*` (no token), `t.*`, `c`, `t.c`, `s.t.c`.
            guard entries.count <= 5 else { return nil }
            for (offset, entry) in entries.enumerated() {
                switch (offset % 2, entry.token) {
                case (1, .dot), (0, .quotedIdentifier): continue
                case (0, .word(let word)):
                    if ["AS", "DISTINCT", "ALL"].contains(word.uppercased()) || (word.first?.isNumber ?? true) { return nil }
                default: return nil
                }
            }
        }
        // A clause that reads the clock moves the window without a commit.
        for entry in tokens {
            if case .word(let word) = entry.token, Self.clockFunctions.contains(word.uppercased()) { return nil }
        }
        // `*` is punctuation the lexer skips: nothing to check for it.
        guard case .word(let by) = tokens[order + 1].token, by.uppercased() == "BY" else { return nil }
        // The lexer skips operators: `ORDER BY -score` or `LIMIT -1` would
        // read as `score` and `1`. From ORDER to the end, only whitespace
        // may separate the tokens.
        for index in order..<(tokens.count - 1) {
            let gap = bytes[tokens[index].range.upperBound..<tokens[index + 1].range.lowerBound]
            guard gap.allSatisfy({ $0 <= 32 }) else { return nil }
        }
        if let last = tokens.last, !bytes[last.range.upperBound...].allSatisfy({ $0 <= 32 || $0 == UInt8(ascii: ";") }) {
            return nil
        }
        var terms: [Term] = []
        for part in tokens[(order + 2)..<limitIndex].split(whereSeparator: { if case .comma = $0.token { true } else { false } }) {
            let entries = Array(part)
            func identifier(_ token: SQLLexer.Token) -> String? {
                switch token {
                case .word(let word):
                    // A position (`ORDER BY 2`) or a keyword is no column.
                    guard let first = word.first, !first.isNumber,
                        !["ASC", "DESC", "NULLS", "COLLATE", "FIRST", "LAST"].contains(word.uppercased())
                    else { return nil }
                    return word
                case .quotedIdentifier(let name): return name
                default: return nil
                }
            }
            guard let first = entries.first.flatMap({ identifier($0.token) }) else { return nil }
            var names = [first]
            var index = 1
            while index + 1 < entries.count, case .dot = entries[index].token,
                let next = identifier(entries[index + 1].token)
            {
                names.append(next)
                index += 2
            }
            guard names.count <= 3 else { return nil }
            let rest = entries[index...]
            var words = rest.map { entry -> String? in if case .word(let word) = entry.token { word.uppercased() } else { nil } }
            guard words.allSatisfy({ $0 != nil }) else { return nil }
            var isDescending = false
            if words.first == "ASC" || words.first == "DESC" {
                isDescending = words.first == "DESC"
                words.removeFirst()
            }
            var nullsFirst = !isDescending
            if words.count == 2, words[0] == "NULLS", words[1] == "FIRST" || words[1] == "LAST" {
                nullsFirst = words[1] == "FIRST"
                words = []
            }
            guard words.isEmpty else { return nil }
            terms.append(Term(column: names, isDescending: isDescending, nullsFirst: nullsFirst))
        }
        // LIMIT n [OFFSET 0]
        let limitWords = tokens[(limitIndex + 1)...].map { entry -> String? in
            if case .word(let word) = entry.token { word.uppercased() } else { nil }
        }
        guard let count = limitWords.first.flatMap({ $0.flatMap { Int($0) } }), count > 0,
            limitWords.count == 1 || (limitWords.count == 3 && limitWords[1] == "OFFSET" && limitWords[2] == "0")
        else { return nil }
        self.terms = terms
        self.limit = count
        orderText = String(
            decoding: bytes[tokens[order + 2].range.lowerBound..<tokens[limitIndex].range.lowerBound], as: UTF8.self)
    }

    /// The quoted name of a term's column.
    private static func quoted(_ column: [String]) -> String {
        column.map { SQLLexer.quote($0) }.joined(separator: ".")
    }

    /// `SELECT <terms' columns> FROM ... WHERE ... ORDER BY ... LIMIT 1
    /// OFFSET limit - 1`: the values of the window's last row, when the
    /// window is full.
    func boundarySQL(from fromText: String, where whereText: String) -> String {
        // A line break ends a comment that ends the clause.
        "SELECT \(terms.map { Self.quoted($0.column) }.joined(separator: ", ")) FROM \(fromText) WHERE \(whereText)\n"
            + "ORDER BY \(orderText) LIMIT 1 OFFSET \(limit - 1)"
    }

    /// The name of the parameter of the boundary's value of a term.
    static func parameterName(_ term: Int) -> String { "reactivesqlite_window_\(term)" }

    /// An expression that is true when the row sorts after the boundary
    /// (whose values are the parameters `parameterName(i)`): after it in
    /// the first term that differs, NULLs placed as the term says. Ties
    /// are not after: they may be in the window.
    var afterBoundarySQL: String {
        var alternatives: [String] = []
        for (index, term) in terms.enumerated() {
            let column = Self.quoted(term.column)
            let value = ":" + Self.parameterName(index)
            let comparison = term.isDescending ? "\(column) < \(value)" : "\(column) > \(value)"
            let after = term.nullsFirst
                ? "(CASE WHEN \(value) IS NULL THEN \(column) IS NOT NULL WHEN \(column) IS NULL THEN 0 ELSE \(comparison) END)"
                : "(CASE WHEN \(column) IS NULL THEN \(value) IS NOT NULL WHEN \(value) IS NULL THEN 0 ELSE \(comparison) END)"
            let equalBefore = terms[..<index].enumerated().map { previous in
                "\(Self.quoted(previous.element.column)) IS :\(Self.parameterName(previous.offset))"
            }
            alternatives.append((equalBefore + [after]).joined(separator: " AND "))
        }
        return alternatives.map { "(\($0))" }.joined(separator: " OR ")
    }
}

/// The boundary of an observation's window: the values of the window's
/// last row in the state of a commit, read by the observation's fetches,
/// and read by the writer's hooks.
///
/// The boundary of the state of commit c tells the window of every later
/// state that no commit concerning the observation changed: a commit that
/// does not concern it changes no row of the window, and moves no row into
/// it. So it is used only while the observation's latest concerning commit
/// is not later than c.
final class WindowBoundary: Sendable {
    private struct State: Sendable {
        /// The commit whose state the boundary describes; nil: unknown.
        var commit: Int?
        /// The boundary's values; nil when the window is not full (every
        /// matching row is in it).
        var values: [DatabaseValue]?
        /// The latest commit that concerned the observation.
        var latestChange = 0
    }

    /// A `LockedState`, whose lock the thread sanitizer sees (it does not
    /// see `Synchronization.Mutex`'s futex on Linux).
    private let state = LockedState(State())

    /// The boundary of the state of commit `commit`.
    func update(commit: Int, values: [DatabaseValue]?) {
        state.withLock { state in
            guard (state.commit ?? -1) <= commit else { return }
            state.commit = commit
            state.values = values
        }
    }

    /// The boundary is unknown (its read failed).
    func forget() {
        state.withLock { $0.commit = nil }
    }

    /// The commit numbered `number` concerned the observation.
    func noteChange(_ number: Int) {
        state.withLock { $0.latestChange = max($0.latestChange, number) }
    }

    /// The boundary's values when they describe the state before the
    /// running transaction and the window is full; nil otherwise.
    var currentValues: [DatabaseValue]? {
        state.withLock { state in
            guard let commit = state.commit, commit >= state.latestChange else { return nil }
            return state.values
        }
    }
}
