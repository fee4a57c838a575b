#if Server
import Foundation
import HTTPTypes
import Hummingbird

/// A web page that shows live queries as they change: a table per query,
/// and beside it a plane of points when the rows have coordinates.
///
/// The page is one HTML document with its CSS and JavaScript inside (no
/// network access but its own event streams: it works offline). Each panel
/// follows one Server-Sent Events stream of a `LiveQueryServer` (or of
/// `sqlite-watch --serve`'s `/events`):
/// - inserted rows appear highlighted, updated cells flash with their old
///   and new values, deleted rows fade out, and with an ordered query
///   moved rows slide to their new position;
/// - with coordinates, each row is a point: added, moved and removed as
///   its row is;
/// - a status line shows the connection and the time of the last change;
///   the page reconnects by itself, resuming from the last event it got.
///
/// The table draws only the rows around its viewport (fast at 100 000
/// rows); a click on a header sorts by that column, a filter keeps the rows
/// whose text contains it, and a button scrolls to the changed rows outside
/// the viewport. A server's `error` event (a result over `maxRows`) is shown
/// in the panel, and the page tries again every ten seconds.
///
/// For tests and tools, the DOM says what the page shows: each drawn row is
/// a `tr.row[data-key]` of `#panel-N` whose cells have a `data-value` (the
/// value's JSON); the first drawn row is at the position in the table
/// body's `data-first`, and the panel's `data-rows` counts the rows shown
/// (filtered). Each point is a `g.point[data-key]` with `data-x` and
/// `data-y`, up to 1 500 points (a canvas above; the plane's `data-points`
/// counts them); rows and points on their way out have the class
/// `leaving`. `window.livePageMetrics` holds the time the page took to
/// show its first rows and to apply each change.
public struct LivePage: Sendable {
    /// One live query on the page.
    public struct Panel: Sendable {
        /// Where coordinates come from.
        public enum Map: Sendable, Equatable {
            /// No plane.
            case none
            /// Columns named `x` and `y`, or `lon` and `lat` (also
            /// `lng`/`longitude` and `latitude`), when the rows have them.
            case automatic
            /// These result columns: horizontal, then vertical.
            case columns(x: String, y: String)
        }

        /// The panel's heading (the query, in `sqlite-watch --serve`).
        public var title: String
        /// The URL of the panel's Server-Sent Events stream, relative to
        /// the page (`/events`, `/live/leaderboard?team=red`).
        public var eventsURL: String
        /// Whether the rows are a list (differences with moves and positions).
        public var isOrdered: Bool
        /// The result columns that identify a row (the query's key); empty:
        /// the whole row.
        public var keyColumns: [String]
        /// Whether and how rows are plotted as points.
        public var map: Map

        /// A panel. See the properties.
        public init(
            title: String, eventsURL: String, isOrdered: Bool, keyColumns: [String], map: Map = .automatic
        ) {
            self.title = title
            self.eventsURL = eventsURL
            self.isOrdered = isOrdered
            self.keyColumns = keyColumns
            self.map = map
        }
    }

    /// The page's title and heading.
    public var title: String
    /// The live queries shown, top to bottom.
    public var panels: [Panel]

    /// A page with a title and its panels, in order.
    public init(title: String, panels: [Panel]) {
        self.title = title
        self.panels = panels
    }

    /// The whole HTML document.
    public var html: String {
        html(nonce: Self.makeNonce())
    }

    func html(nonce: String) -> String {
        LivePageAssets.document(title: escapingHTML(title), configuration: configurationJSON, nonce: nonce)
    }

    /// The page, with headers that keep it to itself: a
    /// Content-Security-Policy that runs only its own inline script and
    /// style (a nonce new at each response), loads nothing from elsewhere,
    /// connects only to its own origin and cannot be framed;
    /// `X-Content-Type-Options: nosniff`; no referrer.
    public func response() -> Response {
        let nonce = Self.makeNonce()
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        headers[.contentSecurityPolicy] = Self.contentSecurityPolicy(nonce: nonce)
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html(nonce: nonce))))
    }

    /// The policy of a page whose inline elements carry `nonce`.
    static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
            + "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// 128 random bits in base64.
    static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    var configurationJSON: String {
        let panels = panels.map { panel in
            let map: String = switch panel.map {
            case .none: "null"
            case .automatic: "\"auto\""
            case .columns(let x, let y): "{\"x\":\(JSONText.string(x)),\"y\":\(JSONText.string(y))}"
            }
            let keys = panel.keyColumns.map(JSONText.string).joined(separator: ",")
            return "{\"title\":\(JSONText.string(panel.title)),\"events\":\(JSONText.string(panel.eventsURL)),"
                + "\"ordered\":\(panel.isOrdered),\"keys\":[\(keys)],\"map\":\(map)}"
        }
        let json = "{\"title\":\(JSONText.string(title)),\"panels\":[\(panels.joined(separator: ","))]}"
        // "</script>" cannot end the element early: "<" is written "\u003C".
        return json.replacingOccurrences(of: "<", with: "\\u003C")
    }

    private func escapingHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
#endif
