#if Server
import Foundation
/// The checks of one HTTP/1.x request head, on its bytes: what
/// `RequestGuardHandler` decides before the HTTP decoder sees them.
struct RequestHeadCheck {
    /// A refusal: the status, its reason phrase, the text sent.
    struct Refusal: Error, Equatable {
        var status: Int
        var message: String
        var extraHeaders: [(String, String)] = []

        static func == (lhs: Refusal, rhs: Refusal) -> Bool {
            lhs.status == rhs.status && lhs.message == rhs.message
        }

        var reasonPhrase: String {
            switch status {
            case 303: "See Other"
            case 400: "Bad Request"
            case 401: "Unauthorized"
            case 403: "Forbidden"
            case 408: "Request Timeout"
            case 413: "Content Too Large"
            case 414: "URI Too Long"
            case 421: "Misdirected Request"
            case 426: "Upgrade Required"
            case 431: "Request Header Fields Too Large"
            case 503: "Service Unavailable"
            case 505: "HTTP Version Not Supported"
            default: "Error"
            }
        }
    }

    /// What an accepted head asks for.
    struct Accepted: Equatable {
        /// A WebSocket upgrade: what follows the head is the socket's frames.
        var isUpgrade: Bool
    }

    /// The name of the cookie that carries `ConnectionGuardOptions.accessToken`.
    static let tokenCookieName = "sqlite-watch-token"

    let options: ConnectionGuardOptions

    /// The length of the head at the start of `bytes` (through the empty
    /// line that ends it), or nil when it is not complete yet. `from` is
    /// where the previous search stopped.
    static func headLength(in bytes: some RandomAccessCollection<UInt8>, searchingFrom start: Int) -> Int? {
        let count = bytes.count
        var index = max(0, start - 3)
        let base = bytes.startIndex
        while index + 3 < count {
            if bytes[bytes.index(base, offsetBy: index + 3)] == 10,
                bytes[bytes.index(base, offsetBy: index + 2)] == 13,
                bytes[bytes.index(base, offsetBy: index + 1)] == 10,
                bytes[bytes.index(base, offsetBy: index)] == 13
            {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// A refusal for the start of a head that is not complete yet, or nil
    /// while it may still become a valid one.
    func checkPartial(_ bytes: [UInt8]) -> Refusal? {
        let start = bytes.firstIndex { $0 != 13 && $0 != 10 } ?? bytes.endIndex
        if start < bytes.endIndex, !Self.isTokenCharacter(bytes[start]) {
            return Refusal(status: 400, message: "not an HTTP/1.1 request (TLS or HTTP/2 is not served here)")
        }
        let lineEnd = Self.findCRLF(in: bytes, from: start)
        if lineEnd == nil, bytes.count - start > options.maxRequestLineBytes {
            return Refusal(status: 414, message: "the request line is longer than \(options.maxRequestLineBytes) bytes")
        }
        if let lineEnd {
            if lineEnd - start > options.maxRequestLineBytes {
                return Refusal(status: 414, message: "the request line is longer than \(options.maxRequestLineBytes) bytes")
            }
            if bytes.count - lineEnd > options.maxHeaderBytes {
                return Refusal(status: 431, message: "the header fields are larger than \(options.maxHeaderBytes) bytes")
            }
            var lines = 0
            var index = lineEnd + 2
            while let next = Self.findCRLF(in: bytes, from: index) {
                lines += 1
                if lines > options.maxHeaderCount {
                    return Refusal(status: 431, message: "more than \(options.maxHeaderCount) header fields")
                }
                index = next + 2
            }
        }
        return nil
    }

    /// Checks a complete head (its bytes end with the empty line).
    func check(_ bytes: [UInt8], isSecure: Bool = false) -> Result<Accepted, Refusal> {
        if let refusal = checkPartial(bytes) { return .failure(refusal) }
        let start = bytes.firstIndex { $0 != 13 && $0 != 10 } ?? bytes.endIndex
        guard let lineEnd = Self.findCRLF(in: bytes, from: start) else {
            return .failure(Refusal(status: 400, message: "no request line"))
        }
        // The request line: METHOD SP TARGET SP HTTP/1.1
        let parts = bytes[start..<lineEnd].split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(Self.isTokenCharacter), !parts[1].isEmpty,
            parts[1].allSatisfy({ $0 > 32 && $0 < 127 })
        else {
            return .failure(Refusal(status: 400, message: "a request line is METHOD TARGET HTTP/1.1"))
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" else {
            // HTTP/1.0 has no chunked encoding, which event streams need
            // (RFC 9112, 6.1: Hummingbird would send them chunked all the
            // same), nor WebSocket upgrades.
            return .failure(Refusal(
                status: version == "HTTP/1.0" ? 505 : 400,
                message: "only HTTP/1.1 is served here, not \(version.prefix(16))"))
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        let authority: Substring?
        switch Self.authority(ofTarget: target) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let found): authority = found
        }
        // The header fields.
        var fields: [(name: String, value: String)] = []
        var index = lineEnd + 2
        while let next = Self.findCRLF(in: bytes, from: index), next > index {
            let line = bytes[index..<next]
            index = next + 2
            guard let colon = line.firstIndex(of: 58), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(Self.isTokenCharacter)
            else {
                return .failure(Refusal(status: 400, message: "a header field is NAME: VALUE"))
            }
            let value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
            guard !value.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }) else {
                return .failure(Refusal(status: 400, message: "a header field's value has a control character"))
            }
            fields.append((
                String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased(),
                String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespaces)))
        }
        func values(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

        let hosts = values("host")
        guard hosts.count == 1 else {
            return .failure(Refusal(status: 400, message: "a request has one Host header field"))
        }
        // An absolute target names the host the request is for (RFC 9112,
        // 3.2.2): both it and Host must be allowed.
        if let host = [authority.map(String.init), hosts.first].compactMap(\.self).first(where: { !isAllowed(host: $0) }) {
            return .failure(Refusal(
                status: 421,
                message: "this server does not answer for the host '\(host.prefix(128))' (sqlite-watch: --allow-host NAME)"))
        }
        if let token = options.accessToken {
            if let refusal = checkToken(
                token, target: target, authorization: values("authorization"), cookies: values("cookie"),
                isSecure: isSecure)
            {
                return .failure(refusal)
            }
        }
        if values("transfer-encoding").isEmpty == false || values("content-length").contains(where: { $0 != "0" }) {
            return .failure(Refusal(status: 413, message: "this server takes no request body"))
        }
        let upgrade = values("upgrade").joined(separator: ",").lowercased()
        guard upgrade.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "websocket" }) else {
            return .success(Accepted(isUpgrade: false))
        }
        // A WebSocket handshake (RFC 6455, 4.2.1).
        guard values("sec-websocket-version").first == "13" else {
            return .failure(Refusal(
                status: 426, message: "this server speaks WebSocket version 13",
                extraHeaders: [("Sec-WebSocket-Version", "13")]))
        }
        guard let key = values("sec-websocket-key").first, Self.isWebSocketKey(key) else {
            return .failure(Refusal(status: 400, message: "Sec-WebSocket-Key is 16 bytes in base64"))
        }
        if let origin = values("origin").first,
            !isAllowed(origin: origin, host: authority.map(String.init) ?? hosts.first, isSecure: isSecure)
        {
            return .failure(Refusal(
                status: 403,
                message: "a page of '\(origin.prefix(128))' may not open this WebSocket (sqlite-watch: --allow-origin ORIGIN)"))
        }
        return .success(Accepted(isUpgrade: true))
    }

    // MARK: - Target

    /// The authority of an absolute-form target (`http://host:port/path`),
    /// nil for a path (origin form) or `*`; a refusal for anything else,
    /// or an authority with user information (RFC 9110, 4.2.4).
    static func authority(ofTarget target: String) -> Result<Substring?, Refusal> {
        if target.hasPrefix("/") || target == "*" { return .success(nil) }
        let malformed = Refusal(status: 400, message: "a request target is a path (/…) or an absolute URL (http://…)")
        guard let schemeEnd = target.range(of: "://") else { return .failure(malformed) }
        let scheme = target[..<schemeEnd.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCIILetterOrDigit || $0 == "+" || $0 == "-" || $0 == "." })
        else { return .failure(malformed) }
        let rest = target[schemeEnd.upperBound...]
        let authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        guard !authority.contains("@") else {
            return .failure(Refusal(status: 400, message: "a request target has no user information (user@)"))
        }
        return .success(authority)
    }

    // MARK: - Token

    /// Nil when the request carries `token`; else the refusal: a `303` that
    /// sets the cookie for a target with `token=` (a `Secure` one over
    /// TLS), a `401` otherwise.
    func checkToken(
        _ token: String, target: String, authorization: [String], cookies: [String], isSecure: Bool = false
    ) -> Refusal? {
        for value in authorization where value.lowercased().hasPrefix("bearer ") {
            if Self.isEqualInConstantTime(String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces), token) { return nil }
        }
        for header in cookies {
            for pair in header.split(separator: ";") {
                let pair = pair.drop { $0 == " " }
                guard pair.hasPrefix(Self.tokenCookieName + "=") else { continue }
                if Self.isEqualInConstantTime(String(pair.dropFirst(Self.tokenCookieName.count + 1)), token) { return nil }
            }
        }
        if let query = target.firstIndex(of: "?") {
            let items = target[target.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
            if let given = items.first(where: { $0.hasPrefix("token=") }),
                Self.isEqualInConstantTime(String(given.dropFirst(6)).removingPercentEncoding ?? "", token)
            {
                let rest = items.filter { !$0.hasPrefix("token=") }
                let location = String(target[..<query]) + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&"))
                return Refusal(
                    status: 303, message: "signed in: go on to \(location)",
                    extraHeaders: [
                        ("Location", location),
                        ("Set-Cookie",
                         "\(Self.tokenCookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" + (isSecure ? "; Secure" : "")),
                    ])
            }
        }
        return Refusal(
            status: 401, message: "this server needs its token: open /?token=TOKEN once, or send Authorization: Bearer TOKEN",
            extraHeaders: [("WWW-Authenticate", "Bearer")])
    }

    /// Whether `a` and `b` are equal, in a time that depends on their
    /// lengths only.
    static func isEqualInConstantTime(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    // MARK: - Host and Origin

    /// Whether a `Host` value names this server: an IP literal, localhost,
    /// or an allowed name.
    func isAllowed(host: String) -> Bool {
        guard let name = Self.hostName(host) else { return false }
        guard let allowed = options.allowedHostNames else { return true }
        return Self.isIPLiteral(name) || name == "localhost" || name.hasSuffix(".localhost") || allowed.contains(name)
    }

    /// Whether a page of `origin` may open a WebSocket: the server's own
    /// origin (the request's `Host`), or an allowed one.
    ///
    /// Only pages are checked: browsers send the page's origin, `http` or
    /// `https` (or `null` for a sandboxed or local page, refused). Programs
    /// may send what they like (some send `ws://HOST`): they are not the
    /// attack, a page that borrows a visitor's access is.
    func isAllowed(origin: String, host: String?, isSecure: Bool) -> Bool {
        let origin = origin.lowercased()
        if options.allowedOrigins.contains(origin) { return true }
        guard origin == "null" || origin.hasPrefix("http://") || origin.hasPrefix("https://") else { return true }
        guard let host else { return false }
        return origin == (isSecure ? "https://" : "http://") + host.lowercased()
    }

    /// The name of a `Host` value, lowercased, without its port and
    /// brackets; nil when it is malformed.
    static func hostName(_ host: String) -> String? {
        let host = host.lowercased()
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
            return String(host[host.index(after: host.startIndex)..<close])
        }
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let name = parts.first, !name.isEmpty else { return nil }
        if parts.count == 2, parts[1].isEmpty || !parts[1].allSatisfy(\.isASCIIDigit) { return nil }
        guard name.allSatisfy({ $0.isASCIILetterOrDigit || $0 == "." || $0 == "-" || $0 == "_" }) else { return nil }
        return String(name)
    }

    /// Whether `name` is an IPv4 or IPv6 literal.
    static func isIPLiteral(_ name: String) -> Bool {
        if name.contains(":") { return name.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCIIDigit) && Int(part)! <= 255
        }
    }

    // MARK: - Bytes

    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Whether `key` is 16 bytes in base64: 22 characters and `==`.
    static func isWebSocketKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        guard bytes[..<22].allSatisfy(alphabet.contains) else { return false }
        // The last character holds 2 bits: the other 4 are zero.
        return alphabet.firstIndex(of: bytes[21])! & 0x0F == 0
    }

    /// Where the next CR LF is in `bytes`, from `start`.
    static func findCRLF(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
    fileprivate var isASCIILetterOrDigit: Bool { isASCII && (isLetter || isNumber) }
}
#endif
