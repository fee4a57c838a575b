#if Server
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOSSL
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
    /// TLS for every connection (`--tls-cert FILE --tls-key FILE`).
    var tls: TLSConfiguration?

    /// The server's TLS configuration from a PEM certificate chain (the
    /// server's certificate first) and a PEM private key.
    ///
    /// - Throws: A usage error that names the file that cannot be read or
    ///   used.
    static func loadTLS(certificatePath: String, keyPath: String) throws(WatchError) -> TLSConfiguration {
        for (path, kind) in [(certificatePath, "certificate"), (keyPath, "key")]
        where !FileManager.default.isReadableFile(atPath: path) {
            throw WatchError(status: .usageError, message: "cannot read the TLS \(kind) file \(path)")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw WatchError(
                status: .usageError, message: "\(certificatePath) holds no PEM certificate (BEGIN CERTIFICATE): \(error)")
        }
        guard !chain.isEmpty else {
            throw WatchError(status: .usageError, message: "\(certificatePath) holds no PEM certificate (BEGIN CERTIFICATE)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw WatchError(
                status: .usageError,
                message: "\(keyPath) holds no PEM private key (BEGIN PRIVATE KEY), or one with a passphrase: \(error)")
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

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
