#if Server
import SQLiteWatchKit

/// JSON text the server writes itself (event envelopes, errors), with the
/// same string escaping as the tool's JSON output.
enum JSONText {
    static func string(_ text: String) -> String {
        ValueText.jsonString(text)
    }

    /// A JSON line of `JSONRenderer`, without its final newline.
    static func line(_ text: String) -> String {
        text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
#endif
