#if Server
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ReactiveSQLiteServer

/// Who may reach `--serve`, and how much of the server one may take: the
/// options `--max-connections`, `--header-timeout`, `--allow-host` and
/// `--allow-origin`, made into the server's `ConnectionGuardOptions`.
struct ServeAccess {
    /// Nil: below the descriptor limit (see `guardOptions(for:)`).
    var maxConnections: Int?
    var headerTimeout: Duration = .seconds(10)
    var allowedHosts: [String] = []
    var allowedOrigins: [String] = []
    /// The token every request must carry (`--token FILE`).
    var token: String?

    /// Descriptors kept for the database, its journal or log, the file
    /// monitor, standard streams and the runtime.
    static let reservedDescriptors = 64

    /// The guard's options for a server bound to `address`. Raises the
    /// soft descriptor limit to the hard one first; the default limit of
    /// connections is 1 024, or fewer so that `accept` never meets the
    /// descriptor limit.
    func guardOptions(for address: ServeAddress) -> ConnectionGuardOptions {
        var options = ConnectionGuardOptions()
        let descriptors = Self.raiseDescriptorLimit()
        let ceiling = max(1, descriptors - Self.reservedDescriptors)
        options.maxConnections = min(maxConnections ?? 1_024, ceiling)
        options.headerTimeout = headerTimeout
        var names = Set(allowedHosts.map { $0.lowercased() })
        // A name given to --serve is the server's own.
        let host = address.host.lowercased()
        if !host.isEmpty, host != "0.0.0.0", host != "::", host != "*" { names.insert(host) }
        options.allowedHostNames = names
        options.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
        options.accessToken = token
        return options
    }

    /// Raises the soft limit of open descriptors to the hard one; returns
    /// the soft limit in force.
    static func raiseDescriptorLimit() -> Int {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1_024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 1 << 20)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
#endif
