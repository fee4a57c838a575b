@testable import ReactiveSQLite
import Testing

/// The columns a generated column is computed from, read from `CREATE
/// TABLE`: quoting, case, nesting, comments, chains, and definitions it
/// cannot read (then nil: every change counts).
@Suite struct GeneratedColumnDependenciesTests {
    private func dependencies(_ sql: String, _ columns: [String], generated: [String]) -> GeneratedColumnDependencies? {
        GeneratedColumnDependencies(createTableSQL: sql, columns: columns, generatedColumns: generated)
    }

    @Test func namesQuotedOrNotInAnyCaseAndChains() throws {
        let sql = """
            CREATE TABLE "T" ( -- a comment (with a parenthesis
              id INTEGER PRIMARY KEY, "A" NUMERIC(10, 2) DEFAULT (CAST('1' AS INT)), [b c], `D`,
              v AS (a * 2 + "B C") /* AS (d) */,
              w GENERATED ALWAYS AS (V || 'd' || ')') VIRTUAL,
              s AS (abs(d)) STORED,
              CHECK (a AS_IS IS NOT NULL), UNIQUE (a, d)
            )
            """
        let parsed = try #require(dependencies(sql, ["id", "a", "b c", "d", "v", "w", "s"], generated: ["v", "w", "s"]))
        #expect(parsed.columns(of: "v") == ["a", "b c"])
        // Through `v`; the 'd' and ')' of the literals are not names.
        #expect(parsed.columns(of: "w") == ["a", "b c"])
        #expect(parsed.columns(of: "s") == ["d"])
        #expect(parsed.columns(of: "a") == nil)
    }

    @Test func unreadableDefinitionsGiveNil() {
        // A generated column the parse does not find.
        #expect(dependencies("CREATE TABLE t(a, v)", ["a", "v"], generated: ["v"]) == nil)
        // An expression that never closes.
        #expect(dependencies("CREATE TABLE t(a, v AS (a + 1", ["a", "v"], generated: ["v"]) == nil)
        #expect(dependencies("", ["a"], generated: ["v"]) == nil)
        // No generated column: nothing to read.
        #expect(dependencies("CREATE TABLE t(a, b)", ["a", "b"], generated: []) != nil)
    }
}
