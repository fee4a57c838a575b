import DatabaseRegions
import Testing
import TestSupport

@Suite(.onItsOwnThread) struct DatabaseRegionEqualityTests {
    /// Groups of regions built in different ways; regions of one group have
    /// the same content, regions of different groups do not.
    static let groups: [[DatabaseRegion]] = [
        [
            DatabaseRegion(),
            DatabaseRegion(table: "player", columns: []),
            DatabaseRegion(table: "team", rowIDs: []),
            DatabaseRegion(table: "player").intersection(DatabaseRegion(table: "team")),
            DatabaseRegion(table: "player", columns: ["id"]).intersection(DatabaseRegion(table: "player", columns: ["name"])),
        ],
        [
            .fullDatabase,
            DatabaseRegion(table: "player").union(.fullDatabase),
            DatabaseRegion.fullDatabase.intersection(.fullDatabase),
        ],
        [
            DatabaseRegion(table: "player"),
            DatabaseRegion(table: "PLAYER"),
            DatabaseRegion(table: "Player", columns: nil, rowIDs: nil),
            DatabaseRegion(table: "player", columns: ["id"]).union(DatabaseRegion(table: "player")),
            DatabaseRegion(table: "player", rowIDs: [1]).union(DatabaseRegion(table: "Player")),
            DatabaseRegion(table: "player").intersection(.fullDatabase),
        ],
        [
            DatabaseRegion(table: "player", columns: ["id", "name"]),
            DatabaseRegion(table: "Player", columns: ["ID", "Name"]),
            DatabaseRegion(table: "player", columns: ["id", "ID", "name"]),
            DatabaseRegion(table: "player", columns: ["id"]).union(DatabaseRegion(table: "PLAYER", columns: ["NAME"])),
            DatabaseRegion(table: "player", columns: ["id", "name", "score"])
                .intersection(DatabaseRegion(table: "player", columns: ["Name", "Id", "team"])),
        ],
        [
            DatabaseRegion(table: "player", rowIDs: [1, 2]),
            DatabaseRegion(table: "player", rowIDs: [2]).union(DatabaseRegion(table: "player", rowIDs: [1])),
            DatabaseRegion(table: "player", rowIDs: [1, 2, 3]).intersection(DatabaseRegion(table: "Player", rowIDs: [2, 1, 0])),
        ],
        [
            DatabaseRegion(table: "player", columns: ["id"], rowIDs: [1]),
            DatabaseRegion(table: "player", columns: ["id", "name"]).intersection(DatabaseRegion(table: "player", columns: ["ID"], rowIDs: [1, 2]))
                .intersection(DatabaseRegion(table: "player", rowIDs: [1])),
        ],
        [
            DatabaseRegion(table: "player", columns: ["id"], rowIDs: [1]).union(DatabaseRegion(table: "team")),
            DatabaseRegion(table: "TEAM").union(DatabaseRegion(table: "player", columns: ["Id"], rowIDs: [1])),
        ],
        [DatabaseRegion(table: "player", columns: ["name"])],
        [DatabaseRegion(table: "player", rowIDs: [1])],
        [DatabaseRegion(table: "team")],
        [DatabaseRegion(table: "Équipe")],
        [DatabaseRegion(table: "équipe")],
    ]

    @Test func regionsWithTheSameContentAreEqualAndHashAlikeHoweverTheyWereBuilt() {
        for group in Self.groups {
            for lhs in group {
                for rhs in group {
                    #expect(lhs == rhs, "\(lhs) == \(rhs)")
                    #expect(lhs.hashValue == rhs.hashValue, "hash of \(lhs)")
                    #expect(lhs.description == rhs.description)
                }
            }
        }
    }

    @Test func regionsWithDifferentContentAreDifferent() {
        for (lhsIndex, lhsGroup) in Self.groups.enumerated() {
            for (rhsIndex, rhsGroup) in Self.groups.enumerated() where lhsIndex != rhsIndex {
                for lhs in lhsGroup {
                    for rhs in rhsGroup {
                        #expect(lhs != rhs, "\(lhs) != \(rhs)")
                    }
                }
            }
        }
        #expect(Set(Self.groups.flatMap { $0 }).count == Self.groups.count)
    }

    @Test func randomRegionsAreEqualExactlyWhenTheirDescriptionsAre() {
        var random = RandomDatabase(seed: 0x5EED_0101)
        var equalPairs = 0
        for _ in 0..<20_000 {
            let a = random.region()
            let b = random.region()
            #expect((a == b) == (a.description == b.description), "\(a) vs \(b)")
            if a == b {
                equalPairs += 1
                #expect(a.hashValue == b.hashValue, "hash of \(a)")
            }
        }
        #expect(equalPairs > 100)
    }

    @Test func aRandomRegionRebuiltInAnotherOrderAndCaseIsEqualAndHashesAlike() {
        var random = RandomDatabase(seed: 0x5EED_0102)
        for _ in 0..<5_000 {
            var parts: [DatabaseRegion] = []
            for _ in 0..<random.int(in: 1...4) {
                parts.append(random.tableRegion())
            }
            let region = parts.reduce(DatabaseRegion()) { $0.union($1) }
            let rebuilt = parts.shuffled(using: &random.generator).reversed()
                .reduce(DatabaseRegion()) { $0.union($1) }
            #expect(region == rebuilt, "\(region) vs \(rebuilt)")
            #expect(region.hashValue == rebuilt.hashValue, "hash of \(region)")
            #expect(region == region.union(rebuilt))
            #expect(region == region.intersection(rebuilt))
        }
    }
}
