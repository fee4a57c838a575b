/// A table of text with ASCII borders, sized to its widest cells:
///
/// ```
/// +----+--------+-------+
/// | id | name   | score |
/// +----+--------+-------+
/// |  1 | Arthur |   100 |
/// +----+--------+-------+
/// ```
///
/// Widths count characters (grapheme clusters), so text that a terminal
/// draws in double width (CJK, many emoji) misaligns its row.
struct TextTable {
    /// The content of one cell: pieces of text, each in its own style.
    struct Cell {
        var pieces: [(text: String, style: TextStyle)]

        init(_ text: String, _ style: TextStyle = .plain) {
            pieces = [(text, style)]
        }

        init(pieces: [(text: String, style: TextStyle)]) {
            self.pieces = pieces
        }

        var width: Int { pieces.reduce(0) { $0 + $1.text.count } }
    }

    var headers: [String]
    var rows: [[Cell]] = []
    /// Per column: whether cells are aligned to the right (numbers).
    var rightAligned: [Bool]

    init(headers: [String], rightAligned: [Bool]? = nil) {
        self.headers = headers
        self.rightAligned = rightAligned ?? Array(repeating: false, count: headers.count)
    }

    /// The table, one line per border, header and row, each ending with a newline.
    func render(with painter: Painter) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.width)
            }
        }
        let border = "+" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+\n"
        var text = border
        text += line(headers.map { Cell($0, .header) }, widths: widths, alignsNumbers: false, painter: painter)
        text += border
        for row in rows {
            text += line(row, widths: widths, alignsNumbers: true, painter: painter)
        }
        if !rows.isEmpty { text += border }
        return text
    }

    private func line(_ cells: [Cell], widths: [Int], alignsNumbers: Bool, painter: Painter) -> String {
        var text = "|"
        for (index, width) in widths.enumerated() {
            let cell = index < cells.count ? cells[index] : Cell("")
            let padding = String(repeating: " ", count: width - cell.width)
            let content = cell.pieces.map { painter.paint($0.text, $0.style) }.joined()
            let alignsRight = alignsNumbers && index < rightAligned.count && rightAligned[index]
            text += " " + (alignsRight ? padding + content : content + padding) + " |"
        }
        return text + "\n"
    }
}
