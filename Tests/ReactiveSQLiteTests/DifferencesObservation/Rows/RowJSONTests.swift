import Foundation
import ReactiveSQLite
import Testing

/// The JSON text of rows and differences: the format of `sqlite-watch
/// --format json` and of the live-query server's events.
@Suite struct RowJSONTests {
    private let rows = [Row(["id": 1, "name": "Arthur", "score": 100]), Row(["id": 2, "name": "Barbara", "score": 80])]

    private func difference(ordered: Bool) -> RowDifference {
        var differ = RowDiffer(
            identity: .columns(["id"]), isOrdered: ordered, columnNames: ["id", "name", "score"], rows: rows)
        let next = [Row(["id": 2, "name": "Barbara", "score": 80]), Row(["id": 1, "name": "Arthur", "score": 120]),
                    Row(["id": 3, "name": "Craig", "score": 50])]
        guard case .changed(let difference) = differ.diff(to: next) else { fatalError("the rows changed") }
        return difference
    }

    @Test func rowsAndADifference() {
                #expect(RowJSON.rows(rows, columnNames: ["id", "name", "score"]) == """
            {"rows":[{"id":1,"name":"Arthur","score":100},{"id":2,"name":"Barbara","score":80}]}

            """)
        #expect(RowJSON.difference(difference(ordered: false), columnNames: ["id", "name", "score"], isOrdered: false) == """
            {"inserted":[{"id":3,"name":"Craig","score":50}],"updated":[{"id":1,"name":"Arthur","score":120}],\
            "previous":[{"score":100}],"deleted":[]}

            """)
    }

    @Test func orderedDifferencesHaveMoves() throws {
        let line = RowJSON.difference(
            difference(ordered: true), columnNames: ["id", "name", "score"], isOrdered: true)
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let moved = try #require(object["moved"] as? [[String: Any]])
        #expect(moved.count == 1)
        #expect(moved.first?["from"] as? Int == 2 && moved.first?["to"] as? Int == 1)
    }

    @Test func valuesStayExactAndValid() throws {
        let row = Row([
            "big": Int64(1) << 60, "small": 42, "inf": Double.infinity, "real": 0.5,
            "text": "a\"b\\c\n\u{1}", "blob": Data([0, 255]), "null": nil,
        ])
        let line = RowJSON.rows([row], columnNames: row.columnNames)
        #expect(line.contains(#""big":"1152921504606846976""#))
        #expect(line.contains(#""small":42"#))
        #expect(line.contains(#""inf":"Infinity""#))
        #expect(line.contains(#""blob":{"blob":"00FF"}"#))
        #expect(line.contains(#""null":null"#))
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: [[String: Any]]])
        #expect(object["rows"]?.first?["text"] as? String == "a\"b\\c\n\u{1}")
    }

    @Test func repeatedColumnNamesGetDistinctKeys() {
        // In column order: the second `id` takes `id:2`, so the column named
        // `id:2` becomes `id:2:2`; no key hides another.
        let keys = RowJSON.objectKeys(["id", "id", "id:2", "id"])
        #expect(keys == ["id", "id:2", "id:2:2", "id:3"])
        #expect(Set(keys).count == keys.count)
    }

    @Test func invalidUTF8TextKeepsItsBytes() {
        let latin1 = DatabaseValue(textBytes: [0x63, 0x61, 0x66, 0xE9])
        #expect(RowJSON.value(latin1) == #"{"textBytes":"636166E9"}"#)
        #expect(RowJSON.value((-Double.infinity).databaseValue) == #""-Infinity""#)
        #expect(RowJSON.value(Int64(1 << 53).databaseValue) == "9007199254740992")
        #expect(RowJSON.value(Int64(1 << 53 + 1).databaseValue) == #""9007199254740993""#)
    }
}
