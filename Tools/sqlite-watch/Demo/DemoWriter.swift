#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ReactiveSQLite

/// The demo's writer, in the child process (`sqlite-watch --demo-writer
/// PATH`, a hidden option): it changes the leaderboard a few times per
/// second until its parent stops it (SIGKILL) or exits.
enum DemoWriter {
    static func run(path: String) -> Never {
        // Ctrl-C, and the hang-up of a closed terminal, reach the whole
        // process group: the parent decides when the writer stops, after it
        // printed its last change. Other signals get their default action,
        // whatever the parent blocked.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigprocmask(SIG_SETMASK, &signals, nil)
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        let parent = getppid()
        var configuration = Configuration()
        configuration.label = "sqlite-watch.demo-writer"
        configuration.busyTimeout = .seconds(2)
        guard let database = try? DatabaseQueue(path: path, configuration: configuration) else { exit(1) }
        var generator = SystemRandomNumberGenerator()
        // A parent that died without stopping its writer makes it an orphan:
        // its parent process changes, and it stops.
        while getppid() == parent {
            usleep(UInt32.random(in: 150_000...450_000, using: &generator))
            do {
                try database.write { db in try DemoDatabase.makeRandomChange(db, using: &generator) }
            } catch {
                // A lock held too long by the reader: try again. A removed file: stop.
                if !FileManager.default.fileExists(atPath: path) { exit(0) }
            }
        }
        exit(0)
    }
}
