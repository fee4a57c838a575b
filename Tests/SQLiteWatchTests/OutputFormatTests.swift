import Foundation
import Testing

/// How values are written (JSON and table), and when colors are used.
@Suite(.timeLimit(.minutes(3)))
struct OutputFormatTests {
    static let values = """
        INSERT INTO value VALUES (1, NULL);
        INSERT INTO value VALUES (2, 9007199254740992);
        INSERT INTO value VALUES (3, 9007199254740993);
        INSERT INTO value VALUES (4, -9223372036854775808);
        INSERT INTO value VALUES (5, 1.5);
        INSERT INTO value VALUES (6, 9e999);
        INSERT INTO value VALUES (7, -9e999);
        INSERT INTO value VALUES (8, x'00FF10');
        INSERT INTO value VALUES (9, 'say "hi"' || char(10) || 'tab' || char(9) || '\\' || char(27) || '[31m');
        INSERT INTO value VALUES (10, 'é✓');
        """

    @Test func jsonWritesLargeIntegersAsStringsAndBlobsAsHexadecimal() async throws {
        let database = try await WatchedDatabase("CREATE TABLE value (id INTEGER PRIMARY KEY, v)")
        let watch = try database.watch("SELECT * FROM value", "--format", "json", "--count", "1")
        try await watch.waitForOutput(containing: "{\"rows\":[]}")
        try await database.execute("BEGIN; \(Self.values) COMMIT;")
        #expect(try await watch.waitForExit() == .exit(0))
        let line = try #require(watch.outputText.lines.last)
        #expect(line == #"{"inserted":[{"id":1,"v":null},{"id":2,"v":9007199254740992},{"id":3,"v":"9007199254740993"},{"id":4,"v":"-9223372036854775808"},{"id":5,"v":1.5},{"id":6,"v":"Infinity"},{"id":7,"v":"-Infinity"},{"id":8,"v":{"blob":"00FF10"}},{"id":9,"v":"say \"hi\"\ntab\t\\\u001B[31m"},{"id":10,"v":"é✓"}],"updated":[],"previous":[],"deleted":[]}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let inserted = try #require(object["inserted"] as? [[String: Any]])
        #expect(inserted.count == 10)
        #expect(inserted[8]["v"] as? String == "say \"hi\"\ntab\t\\\u{1B}[31m")
    }

    /// Repeated column names get numbered JSON keys that no other column
    /// takes, so that every value of a row is a member of its object.
    @Test func jsonKeysOfRepeatedColumnNamesAreUnique() async throws {
        let database = try await WatchedDatabase("CREATE TABLE t (a)")
        let watch = try database.watch(
            #"SELECT 1 AS id, 2 AS id, 3 AS "id:2", 4 AS id FROM t"#, "--format", "json", "--count", "1")
        try await watch.waitForOutput(containing: "{\"rows\":[]}")
        try await database.execute("INSERT INTO t VALUES (1)")
        #expect(try await watch.waitForExit() == .exit(0))
        let line = try #require(watch.outputText.lines.last)
        #expect(line.hasPrefix(#"{"inserted":[{"id":1,"id:2":2,"id:2:2":3,"id:3":4}]"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((object["inserted"] as? [[String: Any]])?.first?.count == 4)
    }

    /// Column names are chosen by the query: their control characters are
    /// escaped like those of values.
    @Test func tablesEscapeControlCharactersOfColumnNames() async throws {
        let database = try await WatchedDatabase("CREATE TABLE t (a)")
        let watch = try database.watch(
            "SELECT 1 AS \"x\ny\", 2 AS \"\u{1B}[31mred\" FROM t", "--color", "never", "--count", "1")
        try await watch.waitForOutput(containing: "(no rows)")
        try await database.execute("INSERT INTO t VALUES (1)")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.hasPrefix("""
            +------+---------------+
            | x\\ny | \\u{1B}[31mred |
            +------+---------------+
            (no rows)
            """))
        #expect(!watch.outputText.contains("\u{1B}"))
        #expect(watch.outputText.contains("| change   | x\\ny | \\u{1B}[31mred |"))
    }

    @Test func tablesEscapeControlCharactersAndAbbreviateLongBlobs() async throws {
        let database = try await WatchedDatabase("""
            CREATE TABLE value (id INTEGER PRIMARY KEY, v);
            \(Self.values)
            INSERT INTO value VALUES (11, zeroblob(40));
            """)
        let watch = try database.watch("SELECT * FROM value", "--count", "1")
        try await watch.waitForOutput(containing: "(11 rows)")
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText == """
            +----+---------------------------------------------------------------------------------+
            | id | v                                                                               |
            +----+---------------------------------------------------------------------------------+
            |  1 | NULL                                                                            |
            |  2 | 9007199254740992                                                                |
            |  3 | 9007199254740993                                                                |
            |  4 | -9223372036854775808                                                            |
            |  5 | 1.5                                                                             |
            |  6 | Inf                                                                             |
            |  7 | -Inf                                                                            |
            |  8 | X'00FF10'                                                                       |
            |  9 | say "hi"\\ntab\\t\\\\u{1B}[31m                                                      |
            | 10 | é✓                                                                              |
            | 11 | X'0000000000000000000000000000000000000000000000000000000000000000'… (40 bytes) |
            +----+---------------------------------------------------------------------------------+
            (11 rows)

            """)
    }

    @Test func colorsAreForTerminalsOnly() async throws {
        let database = try await WatchedDatabase.players()
        let piped = try database.watch("SELECT * FROM player", "--count", "1")
        let forced = try database.watch("SELECT * FROM player", "--count", "1", "--color", "always")
        try await piped.waitForOutput(containing: "(3 rows)")
        try await forced.waitForOutput(containing: "(3 rows)")
        try await database.execute("BEGIN; UPDATE player SET score = 120 WHERE id = 1; DELETE FROM player WHERE id = 2; COMMIT")
        #expect(try await piped.waitForExit() == .exit(0))
        #expect(try await forced.waitForExit() == .exit(0))
        #expect(!piped.outputText.contains("\u{1B}"))
        #expect(forced.outputText.contains("\u{1B}[1m"))  // headers
        #expect(forced.outputText.contains("\u{1B}[2m100\u{1B}[0m → \u{1B}[1;33m120\u{1B}[0m"))  // updated column
        #expect(forced.outputText.contains("\u{1B}[31mdeleted\u{1B}[0m"))
    }

    /// The environment of a run on a terminal, and whether it gets colors.
    static let terminals: [(environment: [String: String], hasColors: Bool)] = [
        (["TERM": "xterm"], true),
        (["TERM": "xterm", "NO_COLOR": "1"], false),
        (["TERM": "dumb"], false),
    ]

    @Test(arguments: terminals)
    func aTerminalGetsColors(_ terminalEnvironment: [String: String], hasColors: Bool) async throws {
        let database = try await WatchedDatabase.players()
        let terminal = try PseudoTerminal()
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = nil
        environment.merge(terminalEnvironment) { $1 }
        let watch = try ChildProcess(
            try Executables.sqliteWatch(), [database.path, "SELECT * FROM player"], environment: environment,
            terminal: terminal.secondaryDescriptor)
        terminal.closeSecondary()
        try await terminal.waitForOutput(containing: "(3 rows)", of: watch)
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(terminal.output.value.text.contains("\u{1B}[1mid\u{1B}[0m") == hasColors)
        #expect(terminal.output.value.text.contains("| id | name    | team | score |") != hasColors)
    }
}
