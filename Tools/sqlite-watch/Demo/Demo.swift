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

/// The demo that `sqlite-watch` runs without arguments: a temporary
/// leaderboard, changed by a child process, watched like any file.
///
/// The writer is another process on purpose: its commits reach the
/// watcher only through external change observation, as the commits of
/// the `sqlite3` shell or of another program would.
@MainActor
enum Demo {
    static let sql = "SELECT * FROM player ORDER BY score DESC LIMIT 10"
    static let defaultCount = 20

    /// Creates the database, launches the writer, and starts watching with
    /// the settings `makeSettings` returns for the database path. The files
    /// and the writer are removed by the exit (see `Lifecycle`).
    /// The places the served demo shows on its map (`--serve`).
    static let placesSQL = "SELECT * FROM place ORDER BY name"

    static func start(settings makeSettings: (_ path: String) -> Watcher.Settings) {
        guard let path = prepare() else { return }
        let settings = makeSettings(path)
        StandardStreams.note(
            "demo: watching \(sql) --ordered; stops after \(settings.count ?? defaultCount) changes, or Ctrl-C")
        Watcher(settings: settings).start()
    }

    #if Server
    /// The demo, served (`sqlite-watch --serve ADDRESS`): the leaderboard as
    /// a table, and the places on a map, both changed by the writer.
    static func serve(address: ServeAddress, access: ServeAccess) {
        guard let path = prepare() else { return }
        StandardStreams.note("demo: serving the leaderboard (\(sql)) and the places (\(placesSQL)) until Ctrl-C")
        LiveServer(settings: LiveServer.Settings(
            path: path,
            queries: [
                LiveServer.Query(name: "leaderboard", title: "Leaderboard: \(sql)", sql: sql, isOrdered: true, map: .none),
                LiveServer.Query(name: "places", title: "Places: \(placesSQL)", sql: placesSQL, isOrdered: true),
            ],
            address: address, pageTitle: "sqlite-watch demo", access: access)
        ).start()
    }
    #endif

    /// Creates the database and launches the writer; returns the database
    /// path. The files and the writer are removed by the exit (see `Lifecycle`).
    private static func prepare() -> String? {
        do {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("sqlite-watch-demo-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            Lifecycle.addCleanup { try? FileManager.default.removeItem(at: directory) }

            let path = directory.appendingPathComponent("leaderboard.sqlite").path
            try DemoDatabase.create(at: path)
            let writer = try DemoWriterProcess(databasePath: path)
            Lifecycle.addCleanup { writer.stop() }
            StandardStreams.note("demo: database \(path)")
            StandardStreams.note("demo: writer process \(writer.processIdentifier)")
            return path
        } catch let error as WatchError {
            Lifecycle.fail(error)
        } catch {
            Lifecycle.fail(WatchError(status: .databaseError, message: "the demo could not start: \(error)"))
        }
    }
}
