import Testing

/// `--help` shows every option with an example, and the exit statuses.
@Suite(.timeLimit(.minutes(3)))
struct HelpTests {
    @Test func helpShowsEveryOptionWithAnExampleAndTheExitStatuses() async throws {
        let help = try ChildProcess(try Executables.sqliteWatch(), ["--help"])
        #expect(try await help.waitForExit() == .exit(0))
        let text = help.outputText
        // Help wraps lines to the terminal width.
        let words = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for option in [
            "--format", "--ordered", "--key", "--count", "--color", "--busy-timeout", "--passphrase-file", "--serve", "--map",
        ] {
            #expect(words.contains("Example: \(option)"), "no example of \(option)")
        }
        #expect(words.contains("Example: app.db"))
        #expect(text.contains("EXAMPLES:"))
        #expect(text.contains("sqlite-watch app.db 'SELECT * FROM player'"))
        #expect(text.contains("EXIT STATUS:"))
        #expect(words.contains("SERVING (--serve HOST:PORT"))
        for status in ["  0   ", "  1   ", "  2   ", "  64  "] {
            #expect(text.contains(status))
        }
        // The demo's writer is an implementation detail.
        #expect(!text.contains("demo-writer"))
    }
}
