import Foundation
import ReactiveSQLite
@testable import sqlite_watch
import Testing

/// The table and JSON outputs, in process: the formats `--help` documents
/// and the live-query server will share.
@Suite struct RenderingTests {
    private let rows = [Row(["id": 1, "name": "Arthur", "score": 100]), Row(["id": 2, "name": "Barbara", "score": 80])]

    private func changes(ordered: Bool) -> RowDifference {
        var differ = RowDiffer(
            identity: .columns(["id"]), isOrdered: ordered, columnNames: ["id", "name", "score"], rows: rows)
        let next = [Row(["id": 2, "name": "Barbara", "score": 80]), Row(["id": 1, "name": "Arthur", "score": 120]),
                    Row(["id": 3, "name": "Craig", "score": 50])]
        guard case .changed(let changes) = differ.diff(to: next) else { fatalError("the rows changed") }
        return changes
    }

    /// The rows written in parts (a large first result) make the very text
    /// of `initialResult`, whatever the batches, the values and the names.
    @Test(arguments: ["json", "table"])
    func rowsWrittenInPartsMakeTheSameText(format: String) {
        let renderer: any ResultRenderer = format == "json"
            ? JSONRenderer(isOrdered: false) : TableRenderer(isOrdered: false, painter: Painter(usesColors: false))
        let columnNames = ["id", "id", "na\"me", "é"]
        let rows = (0..<3_000).map { (index: Int) -> Row in
            let large: Int64? = index % 7 == 0 ? nil : Int64(index) << 50
            let text: String = "n\(index)\t\"\\é"
            let last: (any DatabaseValueConvertible)? = index % 3 == 0 ? Data([UInt8(index % 256)]) : Double(index) / 3
            return Row(["id": index, "id": large, "na\"me": text, "é": last])
        }
        for afterColumnsChange in [false, true] {
            let whole = afterColumnsChange
                ? renderer.columnsChanged(columnNames: columnNames, rows: rows)
                : renderer.initialResult(columnNames: columnNames, rows: rows)
            for batchSize in [1, 97, 3_000] {
                var parts: [String] = []
                let batches = stride(from: 0, to: rows.count, by: batchSize).map { Array(rows[$0..<min($0 + batchSize, rows.count)]) }
                renderer.streamInitialResult(
                    columnNames: columnNames, afterColumnsChange: afterColumnsChange, batches: batches,
                    write: { parts.append($0); return true })
                #expect(parts.joined() == whole, "batches of \(batchSize)")
            }
            var empty: [String] = []
            renderer.streamInitialResult(
                columnNames: columnNames, afterColumnsChange: afterColumnsChange, batches: [[Row]](),
                write: { empty.append($0); return true })
            #expect(empty.joined() == (afterColumnsChange
                ? renderer.columnsChanged(columnNames: columnNames, rows: [])
                : renderer.initialResult(columnNames: columnNames, rows: [])))
        }
    }

    @Test func tableForPeople() {
        let renderer = TableRenderer(isOrdered: false, painter: Painter(usesColors: false))
        #expect(renderer.initialResult(columnNames: ["id", "name", "score"], rows: rows) == """
            +----+---------+-------+
            | id | name    | score |
            +----+---------+-------+
            |  1 | Arthur  |   100 |
            |  2 | Barbara |    80 |
            +----+---------+-------+
            (2 rows)

            """)
        let text = renderer.changes(changes(ordered: false), number: 1, columnNames: ["id", "name", "score"])
        #expect(text.hasPrefix("change 1 at "))
        #expect(text.contains(": 1 inserted, 1 updated\n"))
        #expect(text.contains("| updated  |  1 | Arthur | 100 → 120 |"))
        #expect(text.contains("| inserted |  3 | Craig  |        50 |"))
    }

    @Test func valuesCannotBreakALineOrColorTheTerminal() {
        #expect(ValueText.table(DatabaseValue(storage: .text("a\nb\u{1B}[31m"))) == "a\\nb\\u{1B}[31m")
        #expect(ValueText.table(DatabaseValue(storage: .blob(Data(repeating: 1, count: 40)))).hasSuffix("… (40 bytes)"))
    }
}
