import DatabaseRegions
import Testing
import TestSupport

// The index hashes tables, columns and rows into tables that grow and shrink
// with the registered regions. These tests register and remove many of
// them, in random order, and compare the index with a loop over the regions.

@Suite(.onItsOwnThread) struct DatabaseRegionIndexScaleTests {
    @Test func manyTablesAndRowsAreFoundWhileTheIndexGrowsAndShrinks() throws {
        var random = RandomDatabase(seed: 0x5EED_0501)
        random.tables = (0..<300).map { $0.isMultiple(of: 2) ? "table_number_\($0)" : "T\($0)" }
        random.columns = ["a", "b", "c", "long_column_name_1", "LONG_COLUMN_NAME_2"]
        random.rowIDs = 1...5_000
        var index = DatabaseRegionIndex<Int>()
        var regions: [Int: DatabaseRegion] = [:]

        func check(_ label: String) throws {
            try #require(index.count == regions.count, "\(label)")
            for _ in 0..<200 {
                let event = random.event()
                let expected = regions.filter { $0.value.isModified(by: event) }.keys.sorted()
                try #require(index.keys(impactedBy: event).sorted() == expected, "\(label): \(event)")
            }
            // Every row of every region is found.
            for (key, region) in regions.prefix(50) {
                for event in events(touching: region) {
                    try #require(index.keys(impactedBy: event).contains(key), "\(label): \(event) misses \(key)")
                }
            }
        }

        // Grow: 3 000 keys, many rows each.
        for key in 0..<3_000 {
            var region = DatabaseRegion()
            for _ in 0..<random.int(in: 1...3) {
                let table = random.element(of: random.tables)
                let columns: Set<String>? = random.chance(0.3) ? nil : random.subset(of: random.columns, count: 1...3)
                let rowIDs = Set((0..<random.int(in: 1...20)).map { _ in Int64(random.int(in: 1...5_000)) })
                region.formUnion(DatabaseRegion(table: table, columns: columns, rowIDs: random.chance(0.1) ? nil : rowIDs))
            }
            index.insert(region, for: key)
            regions[key] = region
            if key % 1_000 == 999 { try check("after inserting \(key + 1) keys") }
        }

        // Shrink: remove in random order, replacing some.
        var keys = Array(regions.keys).shuffled(using: &random.generator)
        while let key = keys.popLast() {
            if random.chance(0.05) {
                let region = random.region()
                index.insert(region, for: key)
                regions[key] = region
            } else {
                try #require(index.remove(key) == regions.removeValue(forKey: key))
            }
            if keys.count % 500 == 0 { try check("\(keys.count) keys left to remove") }
        }
        for key in Array(regions.keys) {
            index.remove(key)
            regions[key] = nil
        }
        try check("empty")
        #expect(index.count == 0)
    }

    @Test func namesThatShareTheirFirstBytesAreTold() {
        var index = DatabaseRegionIndex<String>()
        index.insert(DatabaseRegion(table: "observation_table_1", columns: ["observed_column_a"]), for: "1a")
        index.insert(DatabaseRegion(table: "observation_table_2", columns: ["observed_column_b"]), for: "2b")
        index.insert(DatabaseRegion(table: "observation_table_10", columns: ["observed_column_a"]), for: "10a")
        index.insert(DatabaseRegion(table: "Observation_Table_1", columns: ["OBSERVED_COLUMN_B"]), for: "1b")

        #expect(Set(index.keys(impactedBy: insert("OBSERVATION_TABLE_1", 1))) == ["1a", "1b"])
        #expect(index.keys(impactedBy: insert("observation_table_3", 1)).isEmpty)
        #expect(index.keys(impactedBy: insert("observation_table_", 1)).isEmpty)
        #expect(index.keys(impactedBy: update("observation_table_1", ["Observed_Column_A"], 1)) == ["1a"])
        #expect(index.keys(impactedBy: update("observation_table_1", ["observed_column_c"], 1)).isEmpty)
        #expect(index.keys(impactedBy: update("observation_table_10", ["observed_column_a"], 1)) == ["10a"])
        #expect(index.keys(impactedBy: update("observation_table_10", ["observed_column_b"], 1)).isEmpty)
        #expect(index.keys(impactedBy: update("observation_table_2", ["observed_column_b"])) == ["2b"])
    }

    /// One event per (table, rowid) of a region, that the region sees.
    private func events(touching region: DatabaseRegion) -> [DatabaseEvent] {
        // The description lists `table(columns)[rowids]`: parse it back.
        region.description.split(separator: ", ").flatMap { part -> [DatabaseEvent] in
            let table = String(part.prefix { $0 != "(" })
            guard let open = part.firstIndex(of: "[") else { return [insert(table, 1)] }
            return part[part.index(after: open)..<part.index(before: part.endIndex)]
                .split(separator: ",").prefix(3)
                .map { insert(table, Int64($0)!) }
        }
    }
}
