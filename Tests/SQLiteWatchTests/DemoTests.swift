import Foundation
import Testing

/// Without arguments, `sqlite-watch` watches a leaderboard that a child
/// process changes, then removes its files and its child.
@Suite(.timeLimit(.minutes(3)))
struct DemoTests {
    /// The database path and writer process the demo announces on standard error.
    private func announcedDemo(_ errorText: String) throws -> (directory: String, writer: Int32) {
        let lines = errorText.lines
        let database = try #require(lines.first { $0.hasPrefix("sqlite-watch: demo: database ") })
        let writer = try #require(lines.first { $0.hasPrefix("sqlite-watch: demo: writer process ") })
        let path = String(database.dropFirst("sqlite-watch: demo: database ".count))
        let pid = try #require(Int32(writer.dropFirst("sqlite-watch: demo: writer process ".count)))
        return ((path as NSString).deletingLastPathComponent, pid)
    }

    private func expectCleanedUp(_ errorText: String) throws {
        let demo = try announcedDemo(errorText)
        #expect(!FileManager.default.fileExists(atPath: demo.directory))
        // The writer was stopped and reaped.
        #expect(kill(demo.writer, 0) == -1 && errno == ESRCH)
    }

    @Test func theDemoShowsChangesMadeByAChildProcess() async throws {
        let demo = try ChildProcess(try Executables.sqliteWatch(), ["--count", "3"])
        #expect(try await demo.waitForExit() == .exit(0))
        let output = demo.outputText
        #expect(output.contains("| id | name    | score |"))
        #expect(output.contains("(10 rows)"))
        #expect(output.lines.filter { $0.hasPrefix("change ") }.count == 3)
        #expect(output.contains("change 3 at"))
        #expect(output.contains("| position |"))
        #expect(demo.errorText.contains(
            "demo: watching SELECT * FROM player ORDER BY score DESC LIMIT 10 --ordered; stops after 3 changes"))
        try expectCleanedUp(demo.errorText)
    }

    /// A closed terminal hangs up the demo: it still removes its files
    /// and its child.
    @Test func aHangUpStopsTheDemoCleanly() async throws {
        let demo = try ChildProcess(try Executables.sqliteWatch(), ["--format", "json"])
        try await demo.waitForOutput(containing: "{\"rows\":")
        demo.signal(SIGHUP)
        #expect(try await demo.waitForExit() == .exit(0))
        try expectCleanedUp(demo.errorText)
    }

    @Test func ctrlCStopsTheDemoCleanly() async throws {
        let demo = try ChildProcess(try Executables.sqliteWatch(), ["--format", "json"])
        try await demo.waitForOutput(containing: "{\"rows\":")
        demo.signal(SIGINT)
        #expect(try await demo.waitForExit() == .exit(0))
        try expectCleanedUp(demo.errorText)
    }
}
