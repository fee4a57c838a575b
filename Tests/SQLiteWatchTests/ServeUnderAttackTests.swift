#if Server
import Foundation
import Testing
import TestSupport

/// `sqlite-watch --serve` as an attacker, a broken client or a crowd meets
/// it on 127.0.0.1: every request that is not a well-formed HTTP/1.x head
/// for this server is answered with a status that says why, then closed,
/// within the header timeout; the server goes on serving the others.
///
/// Each test talks raw TCP to the real binary; every wait is bounded.
@Suite(.timeLimit(.minutes(3)))
struct ServeUnderAttackTests {
    static let sql = "SELECT * FROM player ORDER BY id"
    /// Far above what a prompt answer takes, far below a hang.
    static let prompt: Duration = .seconds(10)

    /// Sends `request` on a new connection; returns the response's text
    /// and whether the server closed the connection within `prompt`.
    static func exchange(_ port: Int, _ request: [UInt8]) throws -> (status: Int?, text: String, isClosed: Bool) {
        let connection = try RawConnection(port: port)
        connection.send(request)
        let (text, isClosed) = connection.responseText(timeout: prompt)
        return (httpStatus(of: text), text, isClosed)
    }

    static func exchange(_ port: Int, _ request: String) throws -> (status: Int?, text: String, isClosed: Bool) {
        try exchange(port, Array(request.utf8))
    }

    /// A WebSocket handshake to `/ws` with the given extra fields.
    static func handshake(_ port: Int, host: String? = nil, _ fields: [String]) -> String {
        var request = "GET /ws HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        for field in fields { request += field + "\r\n" }
        return request + "\r\n"
    }

    @Test func malformedRequestsAreAnsweredAndClosed() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: Self.sql)
        let port = served.port
        let host = "Host: 127.0.0.1:\(port)\r\n"
        // A TLS ClientHello's first bytes, the HTTP/2 preface, random bytes.
        let cases: [(String, [UInt8], Int)] = [
            ("a TLS ClientHello", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03], 400),
            ("the HTTP/2 preface", Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8), 400),
            ("random bytes", (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) | 0x80 }, 400),
            ("a 200 KB path", Array("GET /\(String(repeating: "a", count: 200_000)) HTTP/1.1\r\n\(host)\r\n".utf8), 414),
            ("a 100 KB header", Array("GET / HTTP/1.1\r\n\(host)X-Big: \(String(repeating: "b", count: 100_000))\r\n\r\n".utf8), 431),
            ("20 000 headers", Array(("GET / HTTP/1.1\r\n\(host)" + String(repeating: "a: b\r\n", count: 20_000) + "\r\n").utf8), 431),
            ("no Host", Array("GET / HTTP/1.1\r\n\r\n".utf8), 400),
            ("a body", Array("POST / HTTP/1.1\r\n\(host)Content-Length: 5\r\n\r\nhello".utf8), 413),
            ("HTTP/0.9", Array("GET /\r\n\r\n".utf8), 400),
        ]
        for (name, request, status) in cases {
            let response = try Self.exchange(port, request)
            #expect(response.status == status, "\(name): \(response.text.prefix(200))")
            #expect(response.isClosed, "\(name): the connection stays open")
        }
        // The server still serves.
        let page = try Self.exchange(port, "GET / HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
        #expect(page.status == 200)
        try await served.stop()
    }

    /// A connection that sends nothing, and one that sends its head a byte
    /// at a time (slowloris): both answered 408 and closed after the
    /// header timeout, which began with the connection.
    @Test func slowAndSilentConnectionsAreClosedAfterTheHeaderTimeout() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: Self.sql, ["--header-timeout", "1"])
        let silent = try RawConnection(port: served.port)
        let slow = try RawConnection(port: served.port)
        let clock = ContinuousClock()
        let start = clock.now
        let slowTask = Task.detached {
            for byte in "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8 {
                guard slow.send([byte]) else { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            for _ in 0..<100 {
                guard slow.send("x") else { return }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        for connection in [silent, slow] {
            let (text, isClosed) = connection.responseText(timeout: Self.prompt)
            #expect(isClosed)
            #expect(httpStatus(of: text) == 408)
        }
        slowTask.cancel()
        // Closed by the timeout, not at once, nor long after.
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < Self.prompt)
        try await served.stop()
    }

    /// DNS rebinding: a page of attacker.example whose name now resolves
    /// to 127.0.0.1 sends `Host: attacker.example`; it gets no rows.
    @Test func aHostThatIsNotTheServersIsRefused() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: Self.sql, ["--allow-host", "watch.example"])
        let port = served.port
        for path in ["/", "/events", "/live/query"] {
            let refused = try Self.exchange(port, "GET \(path) HTTP/1.1\r\nHost: attacker.example:\(port)\r\n\r\n")
            #expect(refused.status == 421, "\(path): \(refused.text.prefix(200))")
            #expect(!refused.text.contains("Arthur"))
        }
        for allowed in ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "watch.example:\(port)", "WATCH.example"] {
            let response = try Self.exchange(port, "GET / HTTP/1.1\r\nHost: \(allowed)\r\nConnection: close\r\n\r\n")
            #expect(response.status == 200, "\(allowed)")
        }
        try await served.stop()
    }

    /// Cross-site WebSocket hijacking: a page of another origin cannot open
    /// `/ws`; the server's own page, an allowed origin and a program
    /// (no Origin) can. A handshake of another version gets 426, a
    /// malformed key 400 (RFC 6455, 4.2.1 and 4.4).
    @Test func webSocketsCheckTheirOriginAndHandshake() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: Self.sql, ["--allow-origin", "https://dashboard.example"])
        let port = served.port
        let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
        let version = "Sec-WebSocket-Version: 13"
        let foreign = try Self.exchange(port, Self.handshake(port, [key, version, "Origin: http://evil.example"]))
        #expect(foreign.status == 403)
        #expect(!foreign.text.contains("Arthur"))
        let otherPort = try Self.exchange(port, Self.handshake(port, [key, version, "Origin: http://127.0.0.1:1"]))
        #expect(otherPort.status == 403)

        for origin in ["Origin: http://127.0.0.1:\(port)", "Origin: https://dashboard.example", nil] {
            let connection = try RawConnection(port: port)
            connection.send(Self.handshake(port, [key, version] + (origin.map { [$0] } ?? [])))
            let (text, _) = connection.responseText(timeout: .seconds(2))
            #expect(httpStatus(of: text) == 101, "\(origin ?? "no origin"): \(text.prefix(200))")
            #expect(text.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
            connection.close()
        }

        let version8 = try Self.exchange(port, Self.handshake(port, [key, "Sec-WebSocket-Version: 8"]))
        #expect(version8.status == 426)
        #expect(version8.text.contains("Sec-WebSocket-Version: 13"))
        let badKey = try Self.exchange(port, Self.handshake(port, ["Sec-WebSocket-Key: short", version]))
        #expect(badKey.status == 400)
        try await served.stop()
    }

    /// The status of the close frame among `bytes`, frames a server sent
    /// (from the start of one), if it sent one.
    static func closeStatus(in bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var start = index + 2
            if length == 126, start + 2 <= bytes.count {
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127, start + 8 <= bytes.count {
                length = bytes[start..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            if opcode == 8 {
                return length >= 2 && start + 2 <= bytes.count ? Int(bytes[start]) << 8 | Int(bytes[start + 1]) : nil
            }
            index = start + length
        }
        return nil
    }

    /// A client frame that is not masked ends the WebSocket with 1002 (RFC
    /// 6455, 5.1), also after masked frames that came a byte at a time and
    /// of every length encoding; a text frame that is not UTF-8 with 1007.
    @Test func webSocketFramesThatBreakTheProtocolCloseTheSocket() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: Self.sql)
        let port = served.port
        let handshake = Self.handshake(port, ["Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"])
        /// A masked client frame of `opcode` (all bits of its key 0: the
        /// payload as it is).
        func masked(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
            var frame: [UInt8] = [0x80 | opcode]
            switch payload.count {
            case ..<126: frame.append(0x80 | UInt8(payload.count))
            case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
            }
            return frame + [0, 0, 0, 0] + payload
        }
        let unmasked: [UInt8] = [0x81, 0x02] + Array("hi".utf8)
        let cases: [(name: String, frames: [[UInt8]], status: Int)] = [
            ("an unmasked text frame", [unmasked], 1002),
            ("pings of each length, a byte at a time, then an unmasked frame",
             (masked(0x9, [1, 2, 3]) + masked(0x9, [UInt8](repeating: 7, count: 125))).map { [$0] }
                + [masked(0xA, [UInt8](repeating: 8, count: 300)), masked(0xA, [UInt8](repeating: 9, count: 70_000)), unmasked],
             1002),
            ("a text frame that is not UTF-8", [masked(0x1, [0xC3, 0x28])], 1007),
        ]
        for (name, frames, status) in cases {
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            // A client sends frames once the handshake's answer came (RFC
            // 6455, 4.1), here with the first message, the rows.
            connection.send(handshake)
            let (answer, _) = connection.responseText(timeout: .seconds(1))
            #expect(httpStatus(of: answer) == 101, "\(name)")
            for frame in frames { connection.send(frame) }
            let (bytes, isClosed) = connection.readUntilClosed(timeout: Self.prompt)
            #expect(Self.closeStatus(in: bytes) == status, "\(name)")
            #expect(isClosed, "\(name)")
        }
        try await served.stop()
    }

    /// `HEAD /` is the page's head; a plain `GET` of a WebSocket's path is
    /// told to upgrade; the page keeps to itself (its policy runs only its
    /// own inline code, connects only to its origin, cannot be framed).
    @Test func thePageAndTheSocketsSayWhatTheyAre() async throws {
        let database = try await WatchedDatabase.players()
        let served = try await ServedWatch(database, sql: Self.sql)
        let port = served.port
        let head = try Self.exchange(port, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        #expect(head.status == 200)
        #expect(!head.text.contains("<html"))
        for path in ["/ws", "/live"] {
            let plain = try Self.exchange(port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            #expect(plain.status == 426, "\(path): \(plain.text.prefix(200))")
            #expect(plain.text.lowercased().contains("upgrade: websocket"))
        }
        let page = try Self.exchange(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        let headers = page.text.prefix { $0 != "<" }.lowercased()
        #expect(headers.contains("x-content-type-options: nosniff"))
        #expect(headers.contains("content-security-policy: default-src 'none'; script-src 'nonce-"))
        #expect(headers.contains("frame-ancestors 'none'"))
        try await served.stop()
    }

    /// Beyond loopback, a token or `--no-auth` is required; the printed
    /// URLs are real ones (not `*`, not a loopback URL alone); with a
    /// token, every request carries it (a bearer header, or the cookie
    /// that `/?token=` sets), others get 401.
    @Test func servingBeyondLoopbackNeedsATokenThatEveryRequestCarries() async throws {
        let database = try await WatchedDatabase.players()
        let refused = try database.watch([Self.sql, "--serve", "0.0.0.0:0"])
        #expect(try await refused.waitForExit() == .exit(64))
        #expect(refused.errorText.contains("needs --token FILE"))

        let open = try await ServedWatch(try database.watch([Self.sql, "--serve", "*:0", "--no-auth"]))
        #expect(!open.process.outputText.contains("*"))
        #expect(open.process.errorText.contains("anyone who can reach port"))
        try await open.stop()

        let tokenFile = database.directory.appendingPathComponent("token").path
        let token = "s3cret-token-0123456789"
        try Data("\(token)\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
        let served = try await ServedWatch(try database.watch([Self.sql, "--serve", "0.0.0.0:0", "--token", tokenFile]))
        let port = served.port
        let host = "Host: 127.0.0.1:\(port)\r\n"
        let anonymous = try Self.exchange(port, "GET /events HTTP/1.1\r\n\(host)\r\n")
        #expect(anonymous.status == 401)
        #expect(!anonymous.text.contains("Arthur"))
        let wrong = try Self.exchange(port, "GET / HTTP/1.1\r\n\(host)Authorization: Bearer \(token)x\r\n\r\n")
        #expect(wrong.status == 401)
        let bearer = try Self.exchange(port, "GET / HTTP/1.1\r\n\(host)Authorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        #expect(bearer.status == 200)
        let signIn = try Self.exchange(port, "GET /?token=\(token) HTTP/1.1\r\n\(host)\r\n")
        #expect(signIn.status == 303)
        #expect(signIn.text.contains("Location: /\r\n"))
        #expect(signIn.text.contains("Set-Cookie: sqlite-watch-token=\(token); Path=/; HttpOnly; SameSite=Strict"))
        let events = try SSEClient(
            port: port, path: "/events", headers: ["Cookie": "theme=dark; sqlite-watch-token=\(token)"],
            replica: JSONRowReplica(keys: ["id"], isOrdered: false))
        defer { events.disconnect() }
        #expect(await events.wait(until: { $0.replica.hasRows })?.status == 200)
        try await served.stop()
    }

    /// `--tls-cert` and `--tls-key`: the page, the events and the WebSocket
    /// over TLS (a certificate made here by `openssl`, trusted by `curl`
    /// through `--cacert`), `https` and `wss` URLs, a `Secure` token
    /// cookie, the `https` origin of the server's own page, and no answer
    /// in clear text; files that cannot be used are usage errors that
    /// name them.
    @Test func tlsServesThePageTheEventsAndTheWebSocketEncrypted() async throws {
        let database = try await WatchedDatabase.players()
        let directory = database.directory.path
        let certificate = "\(directory)/cert.pem", key = "\(directory)/key.pem", otherKey = "\(directory)/other.pem"
        for (keyPath, certificatePath) in [(key, certificate), (otherKey, "\(directory)/other-cert.pem")] {
            let openssl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/openssl"), [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", keyPath, "-out", certificatePath, "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
            #expect(try await openssl.waitForExit(timeout: .seconds(60)) == .exit(0))
        }
        let tokenFile = "\(directory)/token"
        let token = "s3cret-token-0123456789"
        try Data("\(token)\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
        let served = try await ServedWatch(try database.watch([
            Self.sql, "--serve", "0.0.0.0:0", "--token", tokenFile, "--tls-cert", certificate, "--tls-key", key,
        ]))
        let port = served.port
        let origin = "https://127.0.0.1:\(port)"
        #expect(served.process.outputText.contains("serving \(origin)/"))
        #expect(served.process.outputText.contains("WebSocket: wss://127.0.0.1:\(port)/ws"))
        #expect(served.process.errorText.contains("(over TLS)"))

        /// `curl` over TLS, trusting the certificate; its output, head first.
        func curl(_ arguments: [String]) async throws -> String {
            let process = try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/curl"),
                ["-s", "-i", "--http1.1", "--max-time", "3", "--cacert", certificate] + arguments)
            _ = try await process.waitForExit(timeout: .seconds(30))
            return process.outputText
        }
        let bearer = ["-H", "Authorization: Bearer \(token)"]
        let page = try await curl(bearer + ["\(origin)/"])
        #expect(httpStatus(of: page) == 200)
        #expect(page.contains("Content-Security-Policy"))
        let anonymous = try await curl(["\(origin)/events"])
        #expect(httpStatus(of: anonymous) == 401)
        let signIn = try await curl(["\(origin)/?token=\(token)"])
        #expect(httpStatus(of: signIn) == 303)
        #expect(signIn.contains("Path=/; HttpOnly; SameSite=Strict; Secure"))
        // The stream until curl's time limit: its first event, the rows.
        let events = try await curl(bearer + ["-N", "\(origin)/events"])
        #expect(httpStatus(of: events) == 200)
        #expect(events.contains("event: rows") && events.contains("Arthur"))
        let upgrade = bearer + [
            "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
            "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        ]
        #expect(httpStatus(of: try await curl(upgrade + ["-H", "Origin: \(origin)", "\(origin)/ws"])) == 101)
        let foreign = try await curl(upgrade + ["-H", "Origin: http://127.0.0.1:\(port)", "\(origin)/ws"])
        #expect(httpStatus(of: foreign) == 403)
        // Clear text gets no HTTP answer: the connection closes.
        let clear = try Self.exchange(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(clear.status == nil && clear.isClosed)
        try await served.stop()

        for (arguments, message) in [
            (["--tls-cert", certificate], "--tls-cert and --tls-key go together"),
            (["--tls-cert", certificate, "--tls-key", "\(directory)/missing.pem"], "cannot read the TLS key file"),
            (["--tls-cert", key, "--tls-key", key], "holds no PEM certificate"),
            (["--tls-cert", certificate, "--tls-key", certificate], "holds no PEM private key"),
            (["--tls-cert", certificate, "--tls-key", otherKey], "the TLS certificate and key cannot be used"),
        ] {
            let refused = try database.watch([Self.sql, "--serve", "127.0.0.1:0"] + arguments)
            #expect(try await refused.waitForExit() == .exit(64), "\(arguments)")
            #expect(refused.errorText.contains(message), "\(refused.errorText)")
        }
    }

    /// More connections than the limit: the extra ones are answered 503
    /// and closed at once; the server spins no loop (its CPU time stays
    /// low) and serves again once connections close. With a descriptor
    /// limit of 256, the default limit stays below it.
    @Test func connectionsBeyondTheLimitAreRefusedAtOnce() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit -n 256 && exec \"$0\" \"$@\"", try Executables.sqliteWatch().path,
             database.path, Self.sql, "--serve", "127.0.0.1:0"])
        let served = try await ServedWatch(watch)
        let port = served.port
        // 256 descriptors, 64 kept for the process: 192 connections.
        let limit = 192
        var held: [RawConnection] = []
        for _ in 0..<300 { held.append(try RawConnection(port: port)) }
        // The connections past the limit get their 503 at once, the others
        // nothing (their header timeout is 10 s).
        // Each poll takes what arrived: a response's bytes and its close may
        // come in two polls, so each connection's text is kept whole.
        var refused = Set<Int>()
        var received = [String](repeating: "", count: held.count)
        let clock = ContinuousClock()
        let deadline = clock.now + Self.prompt
        while refused.count < 300 - limit, clock.now < deadline {
            for (index, connection) in held.enumerated() where !refused.contains(index) {
                let (text, isClosed) = connection.responseText(timeout: .milliseconds(5))
                received[index] += text
                if isClosed, httpStatus(of: received[index]) == 503 { refused.insert(index) }
            }
        }
        #expect(refused.count == 300 - limit)
        // No busy loop: the server idles while the connections wait.
        let cpuBefore = processCPUTime(served.process.processIdentifier)
        try await Task.sleep(for: .seconds(1))
        let cpuAfter = processCPUTime(served.process.processIdentifier)
        if let cpuBefore, let cpuAfter {
            // A loop of accept would take most of a second of CPU here.
            #expect(cpuAfter - cpuBefore < 0.5)
        }
        for connection in held { connection.close() }
        held = []
        try await waitUntil {
            guard let page = try? Self.exchange(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            else { return false }
            return page.status == 200
        }
        try await served.stop()
    }
}

/// The CPU time (user and system) a process has used, in seconds, from
/// `/proc/PID/stat`; nil where there is no such file.
func processCPUTime(_ pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = text.lastIndex(of: ")")
    else { return nil }
    let fields = text[text.index(after: end)...].split(separator: " ")
    // After the command: state is field 3, utime 14 and stime 15 (1-based).
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
#endif
