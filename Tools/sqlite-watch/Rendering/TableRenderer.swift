#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ReactiveSQLite

/// Tables for people. The current rows first:
///
/// ```
/// +----+---------+-------+
/// | id | name    | score |
/// +----+---------+-------+
/// |  1 | Arthur  |   100 |
/// |  2 | Barbara |    80 |
/// +----+---------+-------+
/// (2 rows)
/// ```
///
/// Then each change, one line per affected row, its kind first, changed
/// columns of updated rows as `old → new`; with `--ordered`, a position
/// column (`3 → 1` for a move):
///
/// ```
/// change 1 at 14:03:07: 1 inserted, 1 updated
/// +----------+----+--------+-----------+
/// | change   | id | name   | score     |
/// +----------+----+--------+-----------+
/// | inserted |  3 | Craig  |        50 |
/// | updated  |  1 | Arthur | 100 → 120 |
/// +----------+----+--------+-----------+
/// ```
///
/// On a terminal, kinds and rows are colored (inserted green, deleted red,
/// updated columns yellow, moves cyan).
struct TableRenderer: ResultRenderer {
    let isOrdered: Bool
    let painter: Painter

    init(isOrdered: Bool, painter: Painter) {
        self.isOrdered = isOrdered
        self.painter = painter
    }

    /// The local time now, `HH:mm:ss`, for the title of a change.
    private static func localTime() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec))"
    }

    func initialResult(columnNames: [String], rows: [Row]) -> String {
        var table = TextTable(headers: Self.headers(columnNames), rightAligned: Self.numericColumns(columnNames.count, rows: rows))
        table.rows = rows.map { row in row.databaseValues.map(valueCell) }
        let count = rows.count == 1 ? "(1 row)" : rows.isEmpty ? "(no rows)" : "(\(rows.count) rows)"
        return table.render(with: painter) + count + "\n"
    }

    func columnsChanged(columnNames: [String], rows: [Row]) -> String {
        "the query's columns changed; the new result:\n" + initialResult(columnNames: columnNames, rows: rows)
    }

    func changes(_ changes: RowDifference, number: Int, columnNames: [String]) -> String {
        let lines = lines(of: changes)
        let leadingHeaders = isOrdered ? ["change", "position"] : ["change"]
        let numeric = Self.numericColumns(columnNames.count, rows: lines.map(\.row) + lines.compactMap(\.previous))
        var table = TextTable(
            headers: leadingHeaders + Self.headers(columnNames),
            rightAligned: Array(repeating: false, count: leadingHeaders.count) + numeric)
        table.rows = lines.map(cells)
        let time = Self.localTime()
        let title = painter.paint("change \(number) at \(time):", .header) + " " + changes.summary
        return title + "\n" + table.render(with: painter)
    }

    // MARK: - Lines

    /// One line of a change table: a row and what happened to it.
    private struct Line {
        var kind: String
        var style: TextStyle
        var row: Row
        /// For an updated row: its old values, and the columns that changed.
        var previous: Row?
        var changedColumns: [Int] = []
        var position: String
    }

    /// Insertions, updates, then deletions, each in key order; with
    /// `--ordered`, deletions by old position, then the rest by new
    /// position, a moved and updated row on one line.
    private func lines(of changes: RowDifference) -> [Line] {
        func text(_ position: Int?) -> String { position.map(String.init) ?? "" }
        let deleted = changes.deleted.map { Line(kind: "deleted", style: .deleted, row: $0.row, position: text($0.position)) }
        var others = changes.inserted.map { (order: $0.position ?? 0, line: Line(kind: "inserted", style: .inserted, row: $0.row, position: text($0.position))) }
        var updatesByPosition: [Int: Int] = [:]
        for update in changes.updated {
            let line = Line(
                kind: "updated", style: .updated, row: update.row, previous: update.previous,
                changedColumns: update.changedColumns, position: text(update.position))
            if let position = update.position { updatesByPosition[position] = others.count }
            others.append((update.position ?? 0, line))
        }
        for move in changes.moved {
            let position = "\(move.from) → \(move.to)"
            if let index = updatesByPosition[move.to] {
                others[index].line.kind = "moved, updated"
                others[index].line.style = .moved
                others[index].line.position = position
            } else {
                others.append((move.to, Line(kind: "moved", style: .moved, row: move.row, position: position)))
            }
        }
        guard isOrdered else { return others.map(\.line) + deleted }
        let sorted = others.enumerated().sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }
        return deleted + sorted.map(\.element.line)
    }

    private func cells(_ line: Line) -> [TextTable.Cell] {
        var cells = [TextTable.Cell(line.kind, line.style)]
        if isOrdered {
            cells.append(TextTable.Cell(line.position, line.kind.hasPrefix("moved") ? .moved : .plain))
        }
        for (index, value) in line.row.databaseValues.enumerated() {
            if let previous = line.previous, line.changedColumns.contains(index), index < previous.databaseValues.count {
                cells.append(TextTable.Cell(pieces: [
                    (ValueText.table(previous.databaseValues[index]), .faint),
                    (" → ", .plain),
                    (ValueText.table(value), .updated),
                ]))
            } else {
                let style: TextStyle = line.style == .inserted || line.style == .deleted ? line.style : .plain
                cells.append(value.isNull ? TextTable.Cell("NULL", .faint) : TextTable.Cell(ValueText.table(value), style))
            }
        }
        return cells
    }

    private func valueCell(_ value: DatabaseValue) -> TextTable.Cell {
        TextTable.Cell(ValueText.table(value), value.isNull ? .faint : .plain)
    }

    /// The column names as headers: control characters escaped, as in
    /// values, so that a name cannot break a line or color the terminal.
    private static func headers(_ columnNames: [String]) -> [String] {
        columnNames.map(ValueText.escapingControlCharacters)
    }

    /// The columns whose values are all numbers or NULL, aligned to the right.
    private static func numericColumns(_ count: Int, rows: [Row]) -> [Bool] {
        (0..<count).map { index in
            !rows.isEmpty && rows.allSatisfy { row in
                index >= row.databaseValues.count || ValueText.isNumeric(row.databaseValues[index])
            }
        }
    }
}
