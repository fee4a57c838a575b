import DatabaseRegions
import Testing

// `forEachKey(impactedBy:_:)` visits the keys `keys(impactedBy:)` returns,
// each once, in the same order. The property test compares both on random
// indexes; these tests pin the cases where a key could come twice: a key
// that covers several of the updated columns, of one row, of all rows, of a
// table wider than 64 columns, or through an event without rowid.

@Suite struct DatabaseRegionIndexVisitorTests {
    /// The keys `forEachKey(impactedBy:_:)` visits, in order.
    private func visitedKeys<Key>(_ index: DatabaseRegionIndex<Key>, _ event: DatabaseEvent) -> [Key] {
        var keys: [Key] = []
        index.forEachKey(impactedBy: event) { keys.append($0) }
        return keys
    }

    @Test func theVisitorSeesNothingWhenNoKeyIsConcerned() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(table: "player", columns: ["name"], rowIDs: [1]), for: "a")
        index.insert(DatabaseRegion(table: "team"), for: "b")
        for event in [insert("player", 2), update("player", ["score"], 1), update("player", ["name"], 2), delete("award", 1)] {
            var calls = 0
            index.forEachKey(impactedBy: event) { _ in calls += 1 }
            #expect(calls == 0, "\(event)")
        }
    }

    @Test func theVisitorSeesTheKeysOfTheArrayInTheSameOrder() {
        var index = DatabaseRegionIndex<String>()
        index.insert(.fullDatabase, for: "full")
        index.insert(DatabaseRegion(table: "player"), for: "table")
        index.insert(DatabaseRegion(table: "player", columns: ["score"]), for: "scores")
        index.insert(DatabaseRegion(table: "player", rowIDs: [1]), for: "row 1")
        index.insert(DatabaseRegion(table: "player", columns: ["score", "name"], rowIDs: [1, 2]), for: "rows 1, 2")
        for event in [insert("player", 1), update("player", ["score", "name"], 1), update("player", ["name"]), delete("team", 1)] {
            let keys = index.keys(impactedBy: event)
            #expect(visitedKeys(index, event) == keys, "\(event)")
        }
        #expect(Set(visitedKeys(index, update("player", ["score", "name"], 1))) == ["full", "table", "scores", "row 1", "rows 1, 2"])
    }

    /// Keys that cover several columns, each of which an update changes:
    /// each key must come once, however many of its columns are updated.
    @Test(arguments: [8, 200])
    func aKeyCoveringSeveralUpdatedColumnsIsVisitedOnce(columnCount: Int) {
        let columns = (0..<columnCount).map { "c\($0)" }
        var index = DatabaseRegionIndex<Int>()
        // Registered in an order that numbers the columns 0 ..< columnCount.
        index.insert(DatabaseRegion(table: "t", columns: Set(columns)), for: 0)
        index.insert(DatabaseRegion(table: "t", columns: Set(columns.suffix(3))), for: 1)
        index.insert(DatabaseRegion(table: "t", columns: Set(columns), rowIDs: [1, 2]), for: 2)
        index.insert(DatabaseRegion(table: "t", columns: [columns[0], columns[columnCount - 1]], rowIDs: [1]), for: 3)
        index.insert(DatabaseRegion(table: "t", columns: [columns[1]], rowIDs: [1]), for: 4)

        let everyColumn = Set(columns)
        let firstAndLast: Set = [columns[0], columns[columnCount - 1]]
        let cases: [(DatabaseEvent, Set<Int>)] = [
            (update("t", everyColumn, 1), [0, 1, 2, 3, 4]),
            (update("t", everyColumn, 2), [0, 1, 2]),
            (update("t", everyColumn), [0, 1, 2, 3, 4]),
            (update("t", firstAndLast, 1), [0, 1, 2, 3]),
            (update("t", firstAndLast), [0, 1, 2, 3]),
            (update("T", ["C0", "c0"], 1), [0, 2, 3]),
        ]
        for (event, expected) in cases {
            let keys = index.keys(impactedBy: event)
            let visited = visitedKeys(index, event)
            // Counts, not sets: a duplicate would make the count too large.
            #expect(keys.count == expected.count, "\(event)")
            #expect(Set(keys) == expected, "\(event)")
            #expect(visited == keys, "\(event)")
        }
        #expect(index.keys(impactedByEventsOfKind: .update(tableName: "t", columnNames: everyColumn)).count == 5)
    }
}
