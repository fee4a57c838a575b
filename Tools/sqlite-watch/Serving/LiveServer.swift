#if Server
import Dispatch
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOSSL
import ReactiveSQLite
import ReactiveSQLiteServer

/// `sqlite-watch --serve`: the live queries of one database file, served
/// over HTTP to browsers (a page at `/`) and programs (`/events`, `/ws`,
/// `/live/{name}`).
@MainActor
final class LiveServer {
    /// A query the server shows.
    struct Query {
        var name: String
        var title: String
        var sql: String
        var keys: [String] = []
        var isOrdered = false
        var map: LivePage.Panel.Map = .automatic
    }

    struct Settings {
        var path: String
        /// The first query is also served at `/events` and `/ws`.
        var queries: [Query]
        var address: ServeAddress
        var busyTimeout: Duration = .seconds(5)
        var passphrase: String?
        var pageTitle: String
        var access = ServeAccess()
        /// `--max-rows`; nil: the library's default.
        var maxRows: Int?
    }

    /// The server of the process, kept for as long as it serves: its file
    /// monitor lives with it (a monitor that nothing held stopped at once,
    /// and a deleted or replaced file went unnoticed).
    private static var running: LiveServer?

    private let settings: Settings
    private var fileMonitor: DatabaseFileMonitor?
    private var isWaitingForLock = false
    private var liveQueries: LiveQueryServer?
    /// Since when another process holds a write lock, as seen by the checks
    /// of the file monitor.
    private var lockedSince: ContinuousClock.Instant?
    /// Whether the lock note was printed (and the notice set) for this lock.
    private var isLockNoted = false
    /// The last failure of a query noted on standard error, and when: a
    /// page tries again every few seconds, and meets the same failure.
    private var lastFailureNote: (message: String, at: ContinuousClock.Instant)?

    init(settings: Settings) {
        self.settings = settings
    }

    /// Opens the database, checks the queries, and starts serving. Failures
    /// end the process (see `Lifecycle`).
    func start() {
        Self.running = self
        do {
            let monitor = try DatabaseFileMonitor(path: settings.path)
            monitor.start(onFailure: { error in Lifecycle.fail(error) }, onCheck: { [weak self] in self?.checkLock() })
            fileMonitor = monitor
        } catch {
            fail(error)
        }
        Task { await connect() }
    }

    private func connect() async {
        while true {
            do {
                let database = try WatchedDatabase.open(
                    path: settings.path, busyTimeout: settings.busyTimeout, passphrase: settings.passphrase)
                let queries = settings.queries
                // Without a lock a writer of another process could meet.
                let inspections = try await database.readYieldingToWriters { db in
                    try queries.map { query in try QueryInspection(sql: query.sql, keys: query.keys, in: db) }
                }
                try serve(database, inspections: inspections)
                return
            } catch let error as DatabaseError where error.isLockContention {
                if !isWaitingForLock {
                    isWaitingForLock = true
                    StandardStreams.note("the database is locked by another connection or process: waiting")
                }
                try? await Task.sleep(for: .milliseconds(50))
            } catch {
                fail(error)
            }
        }
    }

    private func serve(_ database: DatabaseQueue, inspections: [QueryInspection]) throws {
        var options = LiveQueryServerOptions()
        // The tool's queries stay observed for the life of the process, so
        // that a client that reconnects resumes from its last event.
        options.idleLifetime = .seconds(100 * 365 * 24 * 3600)
        if let maxRows = settings.maxRows { options.maxRows = maxRows }
        let liveQueries: LiveQueryServer
        do {
            liveQueries = try LiveQueryServer(
                reader: database,
                queries: settings.queries.map { query in
                    LiveQuery(name: query.name, sql: query.sql, keyColumns: query.keys, isOrdered: query.isOrdered)
                },
                options: options)
        } catch let error as LiveQueryServerError {
            throw WatchError(status: .queryError, message: error.message)
        }
        self.liveQueries = liveQueries
        liveQueries.failureHandler = { [weak self] failure in
            Task { @MainActor in self?.note(failure) }
        }
        let page = LivePage(title: settings.pageTitle, panels: zip(settings.queries, inspections).map { query, inspection in
            let keys = RowJSON.objectKeys(inspection.columnNames)
            let keyColumns = inspection.identity.columnIndexes(in: inspection.columnNames)?.map { keys[$0] } ?? []
            return LivePage.Panel(
                title: query.title, eventsURL: "/live/\(query.name)", isOrdered: query.isOrdered,
                keyColumns: keyColumns, map: query.map)
        })
        for inspection in inspections { StandardStreams.note(inspection.identity.explanation) }

        let first = settings.queries[0].name
        // Two routers: HTTP requests, and WebSocket upgrades. A plain GET
        // of a WebSocket's path is told to upgrade (426).
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.get("/") { _, _ in page.response() }
        router.head("/") { _, _ in page.response() }
        router.get("/events") { request, _ in liveQueries.eventStreamResponse(query: first, request: request) }
        liveQueries.addEventStreamRoutes(to: router, at: "/live")
        for path in ["/ws", "/live"] {
            router.get(RouterPath(path)) { _, _ in LiveQueryServer.upgradeRequired(path: path) }
        }
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.ws("/ws") { inbound, outbound, _ in
            try await liveQueries.serveWebSocket(inbound: inbound, outbound: outbound, subscribing: (first, [:]))
        }
        webSocketRouter.ws("/live") { inbound, outbound, _ in
            try await liveQueries.serveWebSocket(inbound: inbound, outbound: outbound)
        }

        var logger = Logger(label: "sqlite-watch", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .error
        let address = settings.address
        let tls = settings.access.tls
        let server: HTTPServerBuilder
        do {
            server = try .guardedHTTP1WebSocketUpgrade(
                webSocketRouter: webSocketRouter,
                connectionGuard: ConnectionGuard(options: settings.access.guardOptions(for: address)),
                tlsConfiguration: tls)
        } catch {
            throw WatchError(status: .usageError, message: "the TLS certificate and key cannot be used: \(error)")
        }
        let app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "sqlite-watch"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                let urls = address.urls(port: port, isSecure: tls != nil)
                let url = urls[0]
                let others = urls.dropFirst().map { " and \($0)" }.joined()
                let socket = url.replacingOccurrences(of: "http", with: "ws", options: .anchored)
                _ = StandardStreams.output(
                    "serving \(url)\(others) (Server-Sent Events: \(url)events, WebSocket: \(socket)ws)\n")
            },
            logger: logger)
        Task {
            do {
                try await app.run()
            } catch {
                Lifecycle.fail(WatchError(
                    status: .databaseError,
                    message: "cannot serve on \(address.host):\(address.port): \(error)"))
            }
        }
    }

    /// After each check of the file monitor: a write lock held by another
    /// process longer than the busy timeout delays every change (the reads
    /// wait for its end); standard error says so, as the plain watch does,
    /// and so do the pages and streams (a `notice`), until it ends.
    private func checkLock() {
        guard let monitor = fileMonitor, let liveQueries else { return }
        guard monitor.anotherProcessHoldsWriteLock else {
            lockedSince = nil
            if isLockNoted {
                isLockNoted = false
                StandardStreams.note("the database is no longer locked")
                liveQueries.notice = nil
            }
            return
        }
        let now = ContinuousClock.now
        let since = lockedSince ?? now
        lockedSince = since
        if !isLockNoted, now - since >= settings.busyTimeout {
            isLockNoted = true
            StandardStreams.note(Watcher.lockNote(busyTimeout: settings.busyTimeout))
            liveQueries.notice = "the database is locked by another process: changes wait for the lock's end"
        }
    }

    /// A query's failure, on standard error: once, and again if it persists
    /// a minute later (the page retries every ten seconds).
    private func note(_ failure: LiveQueryFailure) {
        let message: String = switch failure.reason {
        case .tooManyRows(_, let limit):
            "the result has more than --max-rows (\(limit)) rows: it is not served until it has fewer "
                + "(give a larger --max-rows, or a query with fewer rows)"
        case .error:
            failure.message
        }
        let now = ContinuousClock.now
        if let last = lastFailureNote, last.message == message, now - last.at < .seconds(60) { return }
        lastFailureNote = (message, now)
        StandardStreams.note(message)
    }

    private func fail(_ error: any Error) -> Never {
        Lifecycle.fail(error, watching: settings.queries[0].sql, monitor: fileMonitor)
    }
}
#endif
