#if Server
import ReactiveSQLite

/// JSON text the server writes itself (event envelopes, errors), with the
/// same string escaping as `RowJSON`, which writes the rows and differences.
enum JSONText {
    static func string(_ text: String) -> String {
        RowJSON.string(text)
    }

    /// A JSON line of `RowJSON`, without its final newline.
    static func line(_ text: String) -> String {
        text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
#endif
