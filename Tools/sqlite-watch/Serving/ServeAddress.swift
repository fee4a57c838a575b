#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        // `*`: every interface, IPv6 and IPv4.
        self.host = host == "*" ? "::" : host
        self.port = port
    }

    /// Whether the address is every interface (`0.0.0.0`, `::`, `*`).
    var isWildcard: Bool { host == "0.0.0.0" || host == "::" }

    /// Whether only this machine can connect: a loopback address or name.
    var isLoopback: Bool {
        let host = host.lowercased()
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The URLs a browser opens, for the port actually bound: the host's,
    /// or for every interface, the loopback address first, then this
    /// machine's other IPv4 addresses; `https` under TLS.
    func urls(port: Int, isSecure: Bool = false) -> [String] {
        let scheme = isSecure ? "https" : "http"
        guard isWildcard else { return [Self.url(host, port: port, scheme: scheme)] }
        var hosts = ["127.0.0.1"]
        for address in Self.interfaceAddresses() where !hosts.contains(address) { hosts.append(address) }
        return hosts.map { Self.url($0, port: port, scheme: scheme) }
    }

    private static func url(_ host: String, port: Int, scheme: String) -> String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
    }

    /// The IPv4 addresses of this machine's interfaces that are up.
    static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        var next = first
        while let entry = next {
            defer { next = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                entry.pointee.ifa_flags & UInt32(IFF_UP) != 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var raw = ipv4.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            }
            addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return addresses
    }
}
