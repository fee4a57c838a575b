#if Server
import Foundation
import HummingbirdWSClient
import Logging
import TestSupport

/// Headless Chromium, driven through the DevTools protocol over its
/// WebSocket: it loads pages, evaluates JavaScript in them, and takes
/// screenshots.
struct HeadlessChromium {
    /// Chromium from the `PATH` (Debian's `chromium`), or nil.
    static var executable: URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = ["/usr/bin", "/usr/local/bin"] + path.split(separator: ":").map(String.init)
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            for directory in directories {
                let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        return nil
    }

    /// Whether the browser tests must run: CI sets
    /// `REACTIVESQLITE_BROWSER_TESTS=1` (and installs Chromium); elsewhere
    /// they run when Chromium is installed.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["REACTIVESQLITE_BROWSER_TESTS"] == "1" }
    static var isAvailable: Bool { isRequired || executable != nil }

    let process: ChildProcess
    let profile: URL
    /// `ws://127.0.0.1:PORT/devtools/browser/ID`.
    let browserURL: String

    /// Starts the browser with a fresh profile, and waits for its DevTools
    /// endpoint.
    init() async throws {
        guard let executable = Self.executable else {
            throw ChildProcessFailure(description: "Chromium is not installed (apt-get install chromium)")
        }
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        process = try ChildProcess(executable, [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--hide-scrollbars", "--window-size=1280,900",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=*",
            "--user-data-dir=\(profile.path)", "about:blank",
        ])
        try await process.waitForError(containing: "DevTools listening on ws://")
        let text = process.errorText
        guard let start = text.range(of: "ws://") else { throw ChildProcessFailure(description: text) }
        browserURL = String(text[start.lowerBound...].prefix { !$0.isWhitespace })
    }

    /// Starts a browser, runs `body` in its page, and stops the browser
    /// whatever happens.
    static func withNewPage(_ body: @escaping @Sendable (DevToolsPage) async throws -> Void) async throws {
        let browser = try await HeadlessChromium()
        do {
            try await browser.withPage(body)
        } catch {
            try await browser.stop()
            throw error
        }
        try await browser.stop()
    }

    func stop() async throws {
        process.signal(SIGKILL)
        _ = try? await process.waitForExit()
        try? FileManager.default.removeItem(at: profile)
    }

    /// Opens a DevTools session on the browser's first page and runs `body`.
    func withPage(_ body: @escaping @Sendable (DevToolsPage) async throws -> Void) async throws {
        var logger = Logger(label: "chromium")
        logger.logLevel = .error
        try await WebSocketClient.connect(
            url: browserURL, configuration: .init(maxFrameSize: 1 << 26), logger: logger
        ) { inbound, outbound, _ in
            let responses = ObservedState<[Int: String]>([:])
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 26) {
                        guard case .text(let text) = message,
                            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                            let id = object["id"] as? Int
                        else { continue }
                        responses.update { $0[id] = text }
                    }
                }
                let browser = DevToolsPage(outbound: outbound, responses: responses, sessionID: nil)
                let targets = try await browser.send("Target.getTargets")
                let infos = (targets["targetInfos"] as? [[String: Any]]) ?? []
                guard let target = infos.first(where: { $0["type"] as? String == "page" })?["targetId"] as? String else {
                    throw ChildProcessFailure(description: "no page in \(infos)")
                }
                let attached = try await browser.send("Target.attachToTarget", ["targetId": target, "flatten": true])
                guard let session = attached["sessionId"] as? String else {
                    throw ChildProcessFailure(description: "no session: \(attached)")
                }
                try await body(DevToolsPage(outbound: outbound, responses: responses, sessionID: session))
                group.cancelAll()
            }
        }
    }
}

/// Commands to one page (or, without session, to the browser).
struct DevToolsPage: Sendable {
    let outbound: WebSocketOutboundWriter
    let responses: ObservedState<[Int: String]>
    let sessionID: String?
    private static let nextID = Locked(0)

    /// Sends a command and returns its `result`; throws its `error`.
    @discardableResult
    func send(_ method: String, _ parameters: [String: any Sendable] = [:]) async throws -> [String: Any] {
        let id = Self.nextID.withLock { $0 += 1; return $0 }
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let sessionID { message["sessionId"] = sessionID }
        let data = try JSONSerialization.data(withJSONObject: message)
        try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
        guard let text = await responses.wait(until: { $0[id] != nil }, timeout: .seconds(60))?[id],
            let response = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { throw ChildProcessFailure(description: "no answer to \(method)") }
        if let error = response["error"] { throw ChildProcessFailure(description: "\(method): \(error)") }
        return response["result"] as? [String: Any] ?? [:]
    }

    func navigate(to url: String) async throws {
        try await send("Page.enable")
        try await send("Page.navigate", ["url": url])
    }

    /// Evaluates `expression`, which must return a string, and returns it.
    func evaluate(_ expression: String) async throws -> String {
        let result = try await send("Runtime.evaluate", ["expression": expression, "returnByValue": true])
        if let exception = result["exceptionDetails"] { throw ChildProcessFailure(description: "\(exception)") }
        return (result["result"] as? [String: Any])?["value"] as? String ?? ""
    }

    /// A PNG of the page as shown.
    func screenshot() async throws -> Data {
        let result = try await send("Page.captureScreenshot", ["format": "png"])
        guard let base64 = result["data"] as? String, let data = Data(base64Encoded: base64) else {
            throw ChildProcessFailure(description: "no screenshot")
        }
        return data
    }
}
#endif
