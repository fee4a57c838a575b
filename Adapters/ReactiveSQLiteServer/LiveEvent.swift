#if Server
/// One message for a subscriber: the same for every transport, written as
/// a Server-Sent Event or as a WebSocket frame.
struct LiveEvent: Sendable {
    enum Kind: String, Sendable {
        /// `{"rows":[...]}`: the whole result.
        case rows
        /// `{"inserted":...}`: the difference from the rows last sent.
        case diff
        /// `{"error":"..."}`: the subscription ends, for this reason.
        case error
        /// Nothing to say: a keep-alive comment (Server-Sent Events only).
        case ping
        /// `{"notice":"…"}`: what the server says about the data (a lock
        /// that delays it), or `{"notice":null}` when it no longer says it.
        case notice
    }

    var kind: Kind
    /// The revision this event brings the client to (rows, diff).
    var id: String?
    /// One JSON object, on one line, without its newline.
    var data: String

    /// Whether the subscription ends after this event.
    var isFinal: Bool { kind == .error }

    static func error(_ reason: String) -> LiveEvent {
        LiveEvent(kind: .error, id: nil, data: "{\"error\":\(JSONText.string(reason))}")
    }

    static let ping = LiveEvent(kind: .ping, id: nil, data: "")

    static func notice(_ text: String?) -> LiveEvent {
        LiveEvent(kind: .notice, id: nil, data: "{\"notice\":\(text.map(JSONText.string) ?? "null")}")
    }

    /// The event as Server-Sent Events text: `id`, `event` and `data` lines
    /// and the blank line that ends it (the data holds no newline: JSON
    /// strings escape it).
    var serverSentEvent: String {
        if kind == .ping { return ": keep-alive\n\n" }
        var text = ""
        if let id { text += "id: \(id)\n" }
        return text + "event: \(kind.rawValue)\ndata: \(data)\n\n"
    }

    /// The event as a WebSocket text frame:
    /// `{"subscription":"s1","event":"diff","id":"…","data":{...}}`.
    func webSocketText(subscription: String) -> String {
        var text = "{\"subscription\":\(JSONText.string(subscription)),\"event\":\"\(kind.rawValue)\""
        if let id { text += ",\"id\":\(JSONText.string(id))" }
        return text + ",\"data\":\(data)}"
    }
}
#endif
