import SQLiteWatchKit

/// Where `--serve` listens: `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`,
/// `0.0.0.0:8080`), or a port alone for the loopback address. Port 0 picks
/// a free port (the URL printed says which).
struct ServeAddress: Equatable {
    var host: String
    var port: Int

    init(_ text: String) throws(WatchError) {
        let invalid = WatchError(
            status: .usageError,
            message: "--serve takes HOST:PORT (for example 127.0.0.1:8080) or a PORT, not '\(text)'")
        var host = "127.0.0.1"
        var portText = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host.isEmpty { throw invalid }
        }
        guard let port = Int(portText), (0...65535).contains(port) else { throw invalid }
        self.host = host
        self.port = port
    }

    /// The URL a browser opens, for the port actually bound.
    func url(port: Int) -> String {
        let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
        return "http://\(shownHost.contains(":") ? "[\(shownHost)]" : shownHost):\(port)/"
    }
}
