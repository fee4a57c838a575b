#if Server
import Foundation
import TestSupport

/// `sqlite-watch ... --serve 127.0.0.1:0` on a test database, and the port
/// it printed.
struct ServedWatch {
    let process: ChildProcess
    let port: Int
    var url: String { "http://127.0.0.1:\(port)/" }

    /// Starts serving `sql` on the database; `arguments` come after `--serve`.
    init(_ database: WatchedDatabase, sql: String, _ arguments: [String] = []) async throws {
        try await self.init(try database.watch([sql, "--serve", "127.0.0.1:0"] + arguments))
    }

    /// Waits for the `serving http://...` (or `https://`) line of a
    /// started process.
    init(_ process: ChildProcess) async throws {
        self.process = process
        try await process.waitForOutput(containing: "serving http")
        let text = process.outputText
        guard let range = text.range(of: "://127.0.0.1:"),
            let port = Int(text[range.upperBound...].prefix { $0.isNumber })
        else { throw ChildProcessFailure(description: "no port in \(text)") }
        self.port = port
    }

    func stop() async throws {
        process.signal(SIGTERM)
        try await process.waitForExit()
    }
}

/// Random changes to a `player` table (ids 1 to 60): insertions,
/// deletions, new scores (with ties) and names, each its own statement.
func randomPlayerChanges(count: Int, using random: inout some RandomNumberGenerator) -> [String] {
    (0..<count).map { _ in
        let id = Int.random(in: 1...60, using: &random)
        let score = Int.random(in: 0...30, using: &random) * 10
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return "DELETE FROM player WHERE id = \(id)"
        case 1: return "INSERT OR REPLACE INTO player (id, name, team, score) VALUES (\(id), 'P\(id)', 'red', \(score))"
        case 2: return "UPDATE player SET name = name || '+' WHERE id = \(id)"
        default: return "UPDATE player SET score = \(score) WHERE id = \(id)"
        }
    }
}
#endif
