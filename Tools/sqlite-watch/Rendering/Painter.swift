/// The styles of the table output.
enum TextStyle {
    case plain
    case header
    /// NULL, and the old value of an updated column.
    case faint
    case inserted
    case deleted
    case updated
    case moved

    /// The ANSI SGR parameters of the style.
    fileprivate var parameters: String? {
        switch self {
        case .plain: nil
        case .header: "1"
        case .faint: "2"
        case .inserted: "32"
        case .deleted: "31"
        case .updated: "1;33"
        case .moved: "36"
        }
    }
}

/// Applies text styles as ANSI escape sequences, or not at all.
///
/// Colors go to a terminal only (see `ColorMode`): output read by another
/// program carries no escape sequence.
struct Painter {
    let usesColors: Bool

    /// A painter that colors text when `usesColors` is true.
    init(usesColors: Bool) {
        self.usesColors = usesColors
    }

    func paint(_ text: String, _ style: TextStyle) -> String {
        guard usesColors, let parameters = style.parameters, !text.isEmpty else { return text }
        return "\u{1B}[\(parameters)m\(text)\u{1B}[0m"
    }
}
