import DatabaseRegions
import Testing

// An update of row r with updated columns C must visit only the keys of row r
// that cover all columns or one of C, never those that cover row r through
// other columns only. `visitedEntryCount(impactedBy:)` (package access)
// counts the index entries a query visits: the keys it returns plus the
// entries it examines and rejects.

@Suite struct DatabaseRegionIndexRowColumnTests {
    /// 10 000 keys on row 7 through `name`, one on row 7 through `score`.
    private func crowdedRow() -> DatabaseRegionIndex<Int> {
        var index = DatabaseRegionIndex<Int>()
        for key in 0..<10_000 {
            index.insert(DatabaseRegion(table: "player", columns: ["name"], rowIDs: [7]), for: key)
        }
        index.insert(DatabaseRegion(table: "player", columns: ["score"], rowIDs: [7]), for: -1)
        return index
    }

    @Test func anUpdateOfARowFindsTheOneKeyOfItsColumnAmongManyKeysOfTheRow() {
        let index = crowdedRow()
        let event = update("player", ["score"], 7)
        #expect(index.keys(impactedBy: event) == [-1])
        #expect(index.visitedEntryCount(impactedBy: event) == 1)
    }

    @Test func anUpdateOfARowVisitsNoKeyThatCoversOtherColumnsOfTheRow() {
        let index = crowdedRow()
        for event in [update("player", ["bonus"], 7), update("Player", ["ID", "teamId"], 7)] {
            #expect(index.keys(impactedBy: event).isEmpty)
            #expect(index.visitedEntryCount(impactedBy: event) == 0)
        }
    }

    @Test func anUpdateOfARowVisitsTheKeysOfItsColumnsAndOfAllColumns() {
        var index = crowdedRow()
        index.insert(DatabaseRegion(table: "player", rowIDs: [7]), for: -2)
        index.insert(DatabaseRegion(table: "player", columns: ["score", "name"], rowIDs: [7, 8]), for: -3)
        let scoreUpdate = update("player", ["SCORE", "bonus"], 7)
        #expect(Set(index.keys(impactedBy: scoreUpdate)) == [-1, -2, -3])
        #expect(index.visitedEntryCount(impactedBy: scoreUpdate) == 3)

        // A key that covers two updated columns is returned once, examined
        // at most once per updated column it covers.
        let bothUpdate = update("player", ["score", "name"], 7)
        let keys = index.keys(impactedBy: bothUpdate)
        #expect(keys.count == 10_003)
        #expect(Set(keys) == Set(-3..<10_000))
        #expect(index.visitedEntryCount(impactedBy: bothUpdate) == 10_004)
    }

    @Test func insertionsAndDeletionsOfARowStillConcernEveryKeyOfTheRow() {
        var index = crowdedRow()
        index.insert(DatabaseRegion(table: "player", rowIDs: [7]), for: -2)
        for kind in [DatabaseEventKind.insert(tableName: "player"), .delete(tableName: "PLAYER")] {
            let event = DatabaseEvent(kind: kind, rowID: 7)
            #expect(Set(index.keys(impactedBy: event)) == Set(-2..<10_000))
            #expect(index.visitedEntryCount(impactedBy: event) == 10_002)
            #expect(index.keys(impactedBy: DatabaseEvent(kind: kind, rowID: 8)).isEmpty)
        }
    }

    @Test func eventsWithoutRowIDStillConcernRowRestrictedKeysAtTableLevel() {
        let index = crowdedRow()
        #expect(index.keys(impactedBy: update("player", ["score"])) == [-1])
        #expect(index.keys(impactedBy: update("player", ["name"])).count == 10_000)
        #expect(index.keys(impactedBy: update("player", ["bonus"])).isEmpty)
        #expect(index.keys(impactedByEventsOfKind: .update(tableName: "player", columnNames: ["score"])) == [-1])
    }

    @Test func removingAndReplacingKeysOfARowKeepsItsColumnBucketsExact() {
        var index = crowdedRow()
        for key in 0..<10_000 where !key.isMultiple(of: 3) {
            index.remove(key)
        }
        // Move some of the remaining keys from `name` to `score`, and one to
        // another row.
        for key in stride(from: 0, to: 3_000, by: 3) {
            index.insert(DatabaseRegion(table: "player", columns: ["score"], rowIDs: [7]), for: key)
        }
        index.insert(DatabaseRegion(table: "player", columns: ["score"], rowIDs: [8]), for: -1)
        let nameKeys = Set(stride(from: 3_000, to: 10_000, by: 3))
        let scoreKeys = Set(stride(from: 0, to: 3_000, by: 3))
        #expect(Set(index.keys(impactedBy: update("player", ["name"], 7))) == nameKeys)
        #expect(index.visitedEntryCount(impactedBy: update("player", ["name"], 7)) == nameKeys.count)
        #expect(Set(index.keys(impactedBy: update("player", ["score"], 7))) == scoreKeys)
        #expect(index.visitedEntryCount(impactedBy: update("player", ["score"], 7)) == scoreKeys.count)
        #expect(index.keys(impactedBy: update("player", ["score"], 8)) == [-1])
        #expect(index.visitedEntryCount(impactedBy: update("player", ["score"], 8)) == 1)
        #expect(
            Set(index.keys(impactedBy: DatabaseEvent(kind: .delete(tableName: "player"), rowID: 7)))
                == nameKeys.union(scoreKeys))
        for key in nameKeys { index.remove(key) }
        #expect(index.keys(impactedBy: update("player", ["name"], 7)).isEmpty)
        #expect(index.visitedEntryCount(impactedBy: update("player", ["name"], 7)) == 0)
        #expect(Set(index.keys(impactedBy: update("player", ["name", "score"], 7))) == scoreKeys)
        for key in scoreKeys { index.remove(key) }
        index.remove(-1)
        #expect(index.count == 0)
        #expect(index.visitedEntryCount(impactedBy: update("player", ["score", "name"], 7)) == 0)
    }
}
