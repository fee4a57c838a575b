#if Server
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReactiveSQLiteServer
import Testing

@Suite struct LivePageTests {
    @Test func thePageIsOneDocumentWithItsScriptAndItsPanels() async throws {
        let page = LivePage(title: "Scores <live>", panels: [
            LivePage.Panel(title: "</script><b>", eventsURL: "/live/a?x=1", isOrdered: true, keyColumns: ["id"]),
            LivePage.Panel(
                title: "map", eventsURL: "/live/b", isOrdered: false, keyColumns: [], map: .columns(x: "lon", y: "lat")),
        ])
        let html = page.html
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<title>Scores &lt;live&gt;</title>"))
        // No resource from elsewhere: the page works offline.
        let withoutNamespace = html.replacingOccurrences(of: "\"http://www.w3.org/2000/svg\"", with: "")
        #expect(!withoutNamespace.contains("http://") && !withoutNamespace.contains("https://"))
        #expect(!html.contains("src=") && !html.contains("href=") && !html.contains("@import"))
        // The configuration cannot close its script element early.
        #expect(html.components(separatedBy: "</script>").count == 3)
        let nonceStart = try #require(html.range(of: #"<script id="live-configuration" type="application/json" nonce=""#))
        let nonce = html[nonceStart.upperBound...].prefix { $0 != "\"" }
        #expect(nonce.count == 24)
        // Every inline element carries the nonce: the policy runs them, and only them.
        #expect(html.components(separatedBy: "<script").count - 1 == html.components(separatedBy: "<script nonce=\"\(nonce)\"").count - 1 + 1)
        #expect(html.contains("<style nonce=\"\(nonce)\">"))
        let start = try #require(html.range(of: #"<script id="live-configuration" type="application/json" nonce="\#(nonce)">"#))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8)) as? [String: Any])
        let panels = try #require(json["panels"] as? [[String: Any]])
        #expect(panels.count == 2)
        #expect(panels[0]["title"] as? String == "</script><b>")
        #expect(panels[0]["events"] as? String == "/live/a?x=1")
        #expect(panels[0]["ordered"] as? Bool == true)
        #expect(panels[0]["keys"] as? [String] == ["id"])
        #expect(panels[0]["map"] as? String == "auto")
        #expect((panels[1]["map"] as? [String: String]) == ["x": "lon", "y": "lat"])

        let router = Router()
        router.get("/") { _, _ in page.response() }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                // The same page, with the nonce of this response, which its policy names.
                let policy = try #require(response.headers[.contentSecurityPolicy])
                let served = String(buffer: response.body)
                let servedNonce = try #require(policy.split(separator: "'").first { $0.hasPrefix("nonce-") }?.dropFirst(6))
                #expect(servedNonce != nonce)
                #expect(served == html.replacingOccurrences(of: String(nonce), with: String(servedNonce)))
                #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            }
        }
    }
}
#endif
