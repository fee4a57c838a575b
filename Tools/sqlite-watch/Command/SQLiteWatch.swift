import ArgumentParser
import Dispatch

/// `sqlite-watch`: the command line, and what each mode runs.
@main
struct SQLiteWatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlite-watch", abstract: Help.abstract, usage: Help.usage, discussion: Help.discussion)

    @Argument(help: ArgumentHelp(
        "The database file. It must exist: it is opened read-only, never created. Example: app.db",
        valueName: "database"))
    var database: String?

    @Argument(help: ArgumentHelp(
        "The query to watch: one statement that returns rows and changes nothing. "
            + "Example: \"SELECT * FROM player WHERE score > 100\"",
        valueName: "sql"))
    var sql: String?

    @Option(help: ArgumentHelp(
        "table: tables for people; json: one JSON object per line, for programs. Example: --format json",
        valueName: "format"))
    var format: OutputFormat = .table

    @Flag(help: ArgumentHelp(
        "Treat the result as a list: also report rows that change position (old → new), "
            + "and show positions. Example: --ordered"))
    var ordered = false

    @Option(name: .customLong("key"), help: ArgumentHelp(
        "A result column that identifies rows, when the query has no primary key of a single "
            + "table in its result. Repeat for a compound key. Example: --key team --key season",
        valueName: "column"))
    var keys: [String] = []

    @Option(help: ArgumentHelp(
        "Exit (status 0) after printing this many changes. Example: --count 5 (default: never; 20 in the demo)",
        valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp(
        "auto: colors when the output is a terminal (not with NO_COLOR or TERM=dumb); always; never. "
            + "Example: --color never",
        valueName: "when"))
    var color: ColorMode = .auto

    @Option(name: .customLong("busy-timeout"), help: ArgumentHelp(
        "How long a read waits for a lock held by a writer before printing a note and retrying. "
            + "Example: --busy-timeout 0.5",
        valueName: "seconds"))
    var busyTimeout: Double = 5

    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "A file holding the passphrase of an encrypted (SQLCipher) database, on its first line. "
            + "Never the passphrase itself: arguments show in process listings. Needs sqlite-watch built "
            + "with the SQLCipher trait. Example: --passphrase-file ~/.app-db-key",
        valueName: "path"))
    var passphraseFile: String?

    @Option(help: ArgumentHelp(
        "Serve the live query over HTTP instead of printing it: a page at /, Server-Sent Events at /events, "
            + "a WebSocket at /ws. Without a DATABASE, serves the demo (a leaderboard and a map). "
            + "Needs sqlite-watch built with the Server trait. Example: --serve 127.0.0.1:8080",
        valueName: "host:port"))
    var serve: String?

    @Option(help: ArgumentHelp(
        "With --serve: the result columns the page plots as points, horizontal then vertical "
            + "(default: columns named x and y, or lon and lat, when the rows have them). Example: --map lon,lat",
        valueName: "x,y"))
    var map: String?

    @Option(name: .customLong("max-connections"), help: ArgumentHelp(
        "With --serve: the most connections open at once; one more is answered 503 and closed "
            + "(default: 1024, or fewer to stay below the descriptor limit). Example: --max-connections 200",
        valueName: "n"))
    var maxConnections: Int?

    @Option(name: .customLong("max-rows"), help: ArgumentHelp(
        "With --serve: the most rows a result may have (default: 100000); a larger one is not served: "
            + "the page and standard error say so, and it is read again later. Example: --max-rows 500000",
        valueName: "n"))
    var maxRows: Int?

    @Option(name: .customLong("header-timeout"), help: ArgumentHelp(
        "With --serve: how long a request's head may take to arrive before the connection is answered "
            + "408 and closed. Example: --header-timeout 5 (default: 10)",
        valueName: "seconds"))
    var headerTimeout: Double = 10

    @Option(name: .customLong("allow-host"), help: ArgumentHelp(
        "With --serve: a host name the requests may give in Host, besides IP addresses, localhost and "
            + "the --serve host (other names are refused, 421: a page of another site cannot reach the "
            + "server by rebinding its name). Repeat for more. Example: --allow-host watch.example.com",
        valueName: "name"))
    var allowedHosts: [String] = []

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "With --serve: a page origin that may open the WebSocket besides the server's own (others are "
            + "refused, 403). Repeat for more. Example: --allow-origin https://dashboard.example.com",
        valueName: "origin"))
    var allowedOrigins: [String] = []

    @Option(name: .customLong("token"), help: ArgumentHelp(
        "With --serve: a file whose first line (16 characters or more) every request must carry: "
            + "Authorization: Bearer TOKEN, or the cookie a browser gets by opening /?token=TOKEN once. "
            + "Needed to serve beyond loopback. Example: --token ~/.watch-token",
        valueName: "path"))
    var tokenFile: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp(
        "With --serve: serve HTTPS (and wss:) with this PEM certificate chain, the server's certificate "
            + "first; needs --tls-key. Example: --tls-cert watch.example.com.pem",
        valueName: "path"))
    var tlsCertificateFile: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp(
        "With --tls-cert: the certificate's PEM private key, without a passphrase. Example: --tls-key watch.key",
        valueName: "path"))
    var tlsKeyFile: String?

    @Flag(name: .customLong("no-auth"), help: ArgumentHelp(
        "With --serve beyond loopback: serve without a token (anyone who can reach the port reads the rows)."))
    var noAuth = false

    /// The demo's writer, run by the demo in a child process.
    @Option(name: .customLong("demo-writer"), help: .private)
    var demoWriterPath: String?

    func validate() throws {
        if database != nil, sql == nil {
            throw ValidationError("missing SQL: give a DATABASE and a SQL query, or nothing for the demo")
        }
        if database == nil, !keys.isEmpty {
            throw ValidationError("--key needs a DATABASE and a SQL query (the demo's rows have a primary key)")
        }
        if database == nil, passphraseFile != nil {
            throw ValidationError("--passphrase-file needs a DATABASE and a SQL query (the demo is not encrypted)")
        }
        if serve != nil, count != nil {
            throw ValidationError("--count does not apply to --serve (the server runs until stopped)")
        }
        if serve == nil, map != nil {
            throw ValidationError("--map applies to --serve only")
        }
        if serve == nil, maxRows != nil {
            throw ValidationError("--max-rows applies to --serve only")
        }
        if let maxRows, maxRows < 1 {
            throw ValidationError("--max-rows must be at least 1")
        }
        if serve == nil, maxConnections != nil || headerTimeout != 10 || !allowedHosts.isEmpty || !allowedOrigins.isEmpty {
            throw ValidationError("--max-connections, --header-timeout, --allow-host and --allow-origin apply to --serve only")
        }
        if serve == nil, tokenFile != nil || noAuth {
            throw ValidationError("--token and --no-auth apply to --serve only")
        }
        if serve == nil, tlsCertificateFile != nil || tlsKeyFile != nil {
            throw ValidationError("--tls-cert and --tls-key apply to --serve only")
        }
        if (tlsCertificateFile == nil) != (tlsKeyFile == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: the certificate and its private key")
        }
        if tokenFile != nil, noAuth {
            throw ValidationError("--token and --no-auth exclude each other")
        }
        if let serve, let address = try? ServeAddress(serve), !address.isLoopback, tokenFile == nil, !noAuth {
            throw ValidationError(
                "serving on \(address.host), beyond this machine, needs --token FILE (a secret every request "
                    + "carries) or --no-auth (anyone who can reach the port reads the rows)")
        }
        if let maxConnections, maxConnections < 1 {
            throw ValidationError("--max-connections must be at least 1")
        }
        if !headerTimeout.isFinite || headerTimeout <= 0 || headerTimeout > 3600 {
            throw ValidationError("--header-timeout must be a number of seconds, above 0 and at most 3600")
        }
        if let map, map.split(separator: ",", omittingEmptySubsequences: false).count != 2
            || map.split(separator: ",").contains(where: { $0.isEmpty }) {
            throw ValidationError("--map takes two result columns: --map X,Y")
        }
        if let serve {
            do { _ = try ServeAddress(serve) } catch { throw ValidationError(error.message) }
        }
        if let count, count < 1 {
            throw ValidationError("--count must be at least 1")
        }
        // SQLite takes milliseconds in an Int32: about 24 days at most.
        if !busyTimeout.isFinite || busyTimeout < 0 || busyTimeout > 2_000_000 {
            throw ValidationError("--busy-timeout must be a number of seconds, from 0 to 2000000")
        }
    }

    func run() throws {
        if let demoWriterPath {
            DemoWriter.run(path: demoWriterPath)
        }
        var passphrase: String?
        if let passphraseFile {
            do {
                passphrase = try PassphraseFile.read(path: passphraseFile)
            } catch {
                Lifecycle.fail(error)
            }
        }
        MainActor.assumeIsolated {
            Lifecycle.handleTerminationSignals()
            if let serve {
                startServing(serve, passphrase: passphrase)
            } else if let database, let sql {
                var settings = settings(path: database, sql: sql, isOrdered: ordered, count: count)
                settings.passphrase = passphrase
                Watcher(settings: settings).start()
            } else {
                Demo.start { path in
                    settings(path: path, sql: Demo.sql, isOrdered: true, count: count ?? Demo.defaultCount)
                }
            }
        }
        dispatchMain()
    }

    @MainActor
    private func startServing(_ serve: String, passphrase: String?) {
        #if Server
        do throws(WatchError) {
            let address = try ServeAddress(serve)
            var access = ServeAccess(
                maxConnections: maxConnections, headerTimeout: .milliseconds(Int64((headerTimeout * 1000).rounded())),
                allowedHosts: allowedHosts, allowedOrigins: allowedOrigins)
            if let tokenFile {
                let token = try PassphraseFile.read(path: tokenFile, kind: "token")
                guard token.count >= 16, token.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ";" && $0 != "," }) else {
                    throw WatchError(
                        status: .usageError,
                        message: "the token in \(tokenFile) must be 16 or more printable ASCII characters, "
                            + "without spaces, ';' or ','")
                }
                access.token = token
            }
            if let tlsCertificateFile, let tlsKeyFile {
                access.tls = try ServeAccess.loadTLS(certificatePath: tlsCertificateFile, keyPath: tlsKeyFile)
            }
            if !address.isLoopback {
                StandardStreams.note(
                    "serving on \(address.host): anyone who can reach port \(address.port) of this machine "
                        + (access.token == nil
                            ? "reads the rows (--no-auth)"
                            : access.tls == nil
                                ? "and has the token reads the rows; without TLS the token travels in clear: "
                                    + "keep to trusted networks, or give --tls-cert and --tls-key"
                                : "and has the token reads the rows (over TLS)"))
            }
            guard let database, let sql else {
                Demo.serve(address: address, access: access)
                return
            }
            let columns = map?.split(separator: ",").map(String.init)
            let query = LiveServer.Query(
                name: "query", title: sql, sql: sql, keys: keys, isOrdered: ordered,
                map: columns.map { .columns(x: $0[0], y: $0[1]) } ?? .automatic)
            let name = database.split(separator: "/").last.map(String.init) ?? database
            LiveServer(settings: LiveServer.Settings(
                path: database, queries: [query], address: address,
                busyTimeout: .milliseconds(Int64((busyTimeout * 1000).rounded())), passphrase: passphrase,
                pageTitle: "sqlite-watch · \(name)", access: access, maxRows: maxRows)
            ).start()
        } catch {
            Lifecycle.fail(error)
        }
        #else
        Lifecycle.fail(WatchError(
            status: .usageError,
            message: "--serve needs sqlite-watch built with the Server trait: "
                + "swift run --traits Server sqlite-watch ... --serve \(serve)"))
        #endif
    }

    private func settings(path: String, sql: String, isOrdered: Bool, count: Int?) -> Watcher.Settings {
        let renderer: any ResultRenderer = switch format {
        case .table: TableRenderer(isOrdered: isOrdered, painter: Painter(usesColors: color.usesColors))
        case .json: JSONRenderer(isOrdered: isOrdered)
        }
        return Watcher.Settings(
            path: path, sql: sql, keys: keys, isOrdered: isOrdered, count: count,
            busyTimeout: .milliseconds(Int64((busyTimeout * 1000).rounded())), renderer: renderer)
    }
}
