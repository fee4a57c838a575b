import DatabaseRegions
import Testing
import TestSupport

@Suite(.onItsOwnThread) struct DatabaseRegionIndexTests {
    @Test func anEmptyIndexConcernsNobody() {
        let index = DatabaseRegionIndex<String>()
        #expect(index.count == 0)
        #expect(index.keys(impactedBy: insert("player", 1)).isEmpty)
        #expect(index.keys(impactedByEventsOfKind: .delete(tableName: "player")).isEmpty)
    }

    @Test func insertingRegistersAndReplacesTheRegionOfAKey() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(table: "player"), for: "a")
        #expect(index.count == 1)
        #expect(index.keys(impactedBy: insert("player", 1)) == ["a"])
        #expect(index.keys(impactedBy: insert("team", 1)) == [])

        index.insert(DatabaseRegion(table: "team"), for: "a")
        #expect(index.count == 1)
        #expect(index.keys(impactedBy: insert("player", 1)) == [])
        #expect(index.keys(impactedBy: insert("team", 1)) == ["a"])

        index.insert(DatabaseRegion(table: "team"), for: "a")
        #expect(index.count == 1)
        #expect(index.keys(impactedBy: insert("team", 1)) == ["a"])
    }

    @Test func removingAKeyReturnsItsRegionAndForgetsIt() {
        var index = DatabaseRegionIndex<String>()
        let region = DatabaseRegion(table: "player", columns: ["name"], rowIDs: [1, 2])
        index.insert(region, for: "a")
        index.insert(.fullDatabase, for: "b")
        #expect(index.remove("a") == region)
        #expect(index.count == 1)
        #expect(index.remove("a") == nil)
        #expect(index.keys(impactedBy: update("player", ["name"], 1)) == ["b"])
        #expect(index.remove("b") == .fullDatabase)
        #expect(index.count == 0)
        #expect(index.keys(impactedBy: update("player", ["name"], 1)).isEmpty)
    }

    @Test func aKeyWithAnEmptyRegionCountsButIsNeverConcerned() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(), for: "empty")
        index.insert(DatabaseRegion(table: "player", columns: []), for: "no columns")
        #expect(index.count == 2)
        #expect(index.keys(impactedBy: insert("player", 1)).isEmpty)
        #expect(index.keys(impactedByEventsOfKind: .update(tableName: "player", columnNames: ["id"])).isEmpty)
        #expect(index.remove("empty") == DatabaseRegion())
    }

    @Test func aFullDatabaseKeyIsConcernedByEveryEvent() {
        var index = DatabaseRegionIndex<String>()
        index.insert(.fullDatabase, for: "full")
        #expect(index.keys(impactedBy: insert("anything", 1)) == ["full"])
        #expect(index.keys(impactedBy: update("player", [], nil)) == ["full"])
        #expect(index.keys(impactedByEventsOfKind: .delete(tableName: "x")) == ["full"])
    }

    @Test func aKeyCoveringSeveralUpdatedColumnsAndRowsIsReturnedOnce() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(table: "player", columns: ["a", "b"], rowIDs: [1, 2]), for: "rows")
        index.insert(DatabaseRegion(table: "player", columns: ["a", "b", "c"]), for: "table")
        #expect(index.keys(impactedBy: update("player", ["a", "b"], 1)).sorted() == ["rows", "table"])
        #expect(index.keys(impactedBy: update("player", ["a", "b", "c"], 2)).sorted() == ["rows", "table"])
        #expect(index.keys(impactedBy: update("player", ["a", "b"], nil)).sorted() == ["rows", "table"])
        #expect(index.keys(impactedByEventsOfKind: .update(tableName: "player", columnNames: ["b", "a"])).sorted() == ["rows", "table"])
        #expect(index.keys(impactedBy: update("player", ["a", "b"], 3)) == ["table"])
        #expect(index.keys(impactedBy: update("player", ["c"], 1)) == ["table"])
        #expect(index.keys(impactedBy: insert("player", 2)).sorted() == ["rows", "table"])
        #expect(index.keys(impactedBy: delete("player", nil)).sorted() == ["rows", "table"])
    }

    @Test func updatedColumnsSpelledInSeveralCasesConcernAKeyOnce() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(table: "Player", columns: ["Name"]), for: "table")
        index.insert(DatabaseRegion(table: "player", columns: ["NAME"], rowIDs: [1]), for: "row")
        #expect(index.keys(impactedBy: update("PLAYER", ["name", "NAME", "Name"], 1)).sorted() == ["row", "table"])
        #expect(index.keys(impactedBy: update("player", ["name", "NAME"], nil)).sorted() == ["row", "table"])
        #expect(index.keys(impactedBy: update("player", ["score", "SCORE"], 1)).isEmpty)
    }

    @Test func anEventWithoutRowIDConcernsRowRestrictedKeysAtTableLevel() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(table: "player", rowIDs: [1]), for: "all columns of row 1")
        index.insert(DatabaseRegion(table: "player", columns: ["name"], rowIDs: [2]), for: "name of row 2")
        #expect(index.keys(impactedBy: insert("player", nil)).sorted() == ["all columns of row 1", "name of row 2"])
        #expect(index.keys(impactedBy: update("player", ["score"], nil)) == ["all columns of row 1"])
        #expect(index.keys(impactedBy: update("player", ["name"], nil)).sorted() == ["all columns of row 1", "name of row 2"])
        #expect(index.keys(impactedBy: update("player", ["name"], 3)).isEmpty)
        #expect(index.keys(impactedBy: update("player", ["score"], 2)).isEmpty)
    }

    @Test func keysCoveringMoreThanSixtyFourColumnsAreFound() {
        var index = DatabaseRegionIndex<Int>()
        let columns = (0..<200).map { "c\($0)" }
        index.insert(DatabaseRegion(table: "wide", columns: Set(columns[0..<100])), for: 0)
        index.insert(DatabaseRegion(table: "wide", columns: Set(columns[100..<200]), rowIDs: [7]), for: 1)
        index.insert(DatabaseRegion(table: "wide", columns: ["c63", "c64", "c199"]), for: 2)
        #expect(index.keys(impactedBy: update("wide", ["c99"], 1)) == [0])
        #expect(index.keys(impactedBy: update("wide", ["c150"], 7)) == [1])
        #expect(index.keys(impactedBy: update("wide", ["c150"], 8)) == [])
        #expect(index.keys(impactedBy: update("wide", Set(columns), 7)).sorted() == [0, 1, 2])
        #expect(index.keys(impactedBy: update("wide", ["c150", "c199"], nil)).sorted() == [1, 2])
        #expect(index.keys(impactedBy: update("wide", ["c64", "c199"], nil)).sorted() == [0, 1, 2])
        #expect(index.keys(impactedBy: update("wide", ["c200"], 7)) == [])
    }

    @Test func manyKeysCoveringSingleRowsOfOneTableAreFoundByRow() {
        var index = DatabaseRegionIndex<Int64>()
        for rowID in Int64(1)...10_000 {
            index.insert(DatabaseRegion(table: "player", columns: ["name", "score"], rowIDs: [rowID]), for: rowID)
        }
        #expect(index.keys(impactedBy: update("player", ["score", "name"], 5_000)) == [5_000])
        #expect(index.keys(impactedBy: update("player", ["id"], 5_000)) == [])
        #expect(index.keys(impactedBy: delete("player", 10_001)) == [])
        #expect(index.keys(impactedBy: delete("player", 1)) == [1])
        #expect(index.keys(impactedBy: update("player", ["score"], nil)).count == 10_000)
        for rowID in Int64(1)...10_000 where rowID % 2 == 0 {
            index.remove(rowID)
        }
        #expect(index.count == 5_000)
        #expect(index.keys(impactedBy: delete("player", 2)) == [])
        #expect(index.keys(impactedBy: delete("player", 3)) == [3])
        #expect(Set(index.keys(impactedBy: delete("player", nil))) == Set(stride(from: Int64(1), to: 10_001, by: 2)))
    }

    @Test func indexesBuiltByTheSameOperationsAnswerInTheSameOrder() {
        func build() -> DatabaseRegionIndex<Int> {
            var random = RandomDatabase(seed: 0x5EED_0201)
            var index = DatabaseRegionIndex<Int>()
            for key in 0..<200 {
                index.insert(random.region(), for: key)
                if random.chance(0.3) { index.remove(random.int(in: 0...key)) }
            }
            return index
        }
        let first = build()
        let second = build()
        var random = RandomDatabase(seed: 0x5EED_0202)
        for _ in 0..<1_000 {
            let event = random.event()
            #expect(first.keys(impactedBy: event) == second.keys(impactedBy: event))
        }
    }
}

@Suite(.onItsOwnThread) struct DatabaseRegionIndexValueSemanticsTests {
    @Test func aCopyOfAnIndexIsIndependentOfTheOriginal() {
        var original = DatabaseRegionIndex<String>()
        original.insert(DatabaseRegion(table: "player", columns: ["name"], rowIDs: [1]), for: "a")
        original.insert(DatabaseRegion(table: "team"), for: "b")

        var copy = original
        copy.insert(DatabaseRegion(table: "player", columns: ["score"], rowIDs: [1]), for: "c")
        copy.remove("b")
        copy.insert(DatabaseRegion(table: "player", rowIDs: [2]), for: "a")

        // The original did not change.
        #expect(original.count == 2)
        #expect(original.keys(impactedBy: update("player", ["name"], 1)) == ["a"])
        #expect(original.keys(impactedBy: update("player", ["score"], 1)) == [])
        #expect(original.keys(impactedBy: insert("team", 1)) == ["b"])

        // The copy did.
        #expect(copy.count == 2)
        #expect(copy.keys(impactedBy: update("player", ["name"], 1)) == [])
        #expect(copy.keys(impactedBy: update("player", ["score"], 1)) == ["c"])
        #expect(copy.keys(impactedBy: update("player", ["score"], 2)) == ["a"])
        #expect(copy.keys(impactedBy: insert("team", 1)) == [])

        // Mutating the original leaves the copy alone.
        original.remove("a")
        #expect(copy.keys(impactedBy: update("player", ["score"], 2)) == ["a"])
        #expect(original.keys(impactedBy: update("player", ["name"], 1)) == [])
    }

    @Test func randomCopiesStayIndependentOfTheirOriginals() throws {
        var random = RandomDatabase(seed: 0x5EED_0401)
        for _ in 0..<300 {
            var index = DatabaseRegionIndex<Int>()
            var regions: [Int: DatabaseRegion] = [:]
            for _ in 0..<20 {
                let key = random.int(in: 0...15)
                let region = random.region()
                index.insert(region, for: key)
                regions[key] = region
            }
            let snapshot = index
            let snapshotRegions = regions
            for _ in 0..<20 {
                let key = random.int(in: 0...15)
                if random.chance(0.5) {
                    let region = random.region()
                    index.insert(region, for: key)
                    regions[key] = region
                } else {
                    index.remove(key)
                    regions[key] = nil
                }
            }
            for _ in 0..<20 {
                let event = random.event()
                let expectedNow = regions.filter { $0.value.isModified(by: event) }.keys.sorted()
                let expectedBefore = snapshotRegions.filter { $0.value.isModified(by: event) }.keys.sorted()
                try #require(index.keys(impactedBy: event).sorted() == expectedNow)
                try #require(snapshot.keys(impactedBy: event).sorted() == expectedBefore)
            }
        }
    }
}
