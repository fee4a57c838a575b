import DatabaseRegions
import Testing

@Suite struct DatabaseRegionDescriptionTests {
    @Test func representativeRegionsHaveTheExpectedDescriptions() {
        for (index, (region, description)) in RepresentativeRegions.all.enumerated() {
            #expect(region.description == description, "region #\(index)")
        }
    }

    @Test func emptyAndFullDatabaseAreDescribedInWords() {
        #expect(DatabaseRegion().description == "empty")
        #expect(DatabaseRegion.fullDatabase.description == "full database")
    }

    @Test func anEmptyColumnOrRowIDSetGivesTheEmptyRegion() {
        let regions = [
            DatabaseRegion(table: "player", columns: []),
            DatabaseRegion(table: "player", rowIDs: []),
            DatabaseRegion(table: "player", columns: [], rowIDs: []),
            DatabaseRegion(table: "player", columns: ["id"], rowIDs: []),
            DatabaseRegion(table: "player", columns: [], rowIDs: [1]),
        ]
        for region in regions {
            #expect(region.isEmpty)
            #expect(!region.isFullDatabase)
            #expect(region.description == "empty")
            #expect(region == DatabaseRegion())
        }
    }

    @Test func isEmptyAndIsFullDatabaseTellTheTwoExtremesApart() {
        #expect(DatabaseRegion().isEmpty)
        #expect(!DatabaseRegion().isFullDatabase)
        #expect(DatabaseRegion.fullDatabase.isFullDatabase)
        #expect(!DatabaseRegion.fullDatabase.isEmpty)
        #expect(!DatabaseRegion(table: "player").isEmpty)
        #expect(!DatabaseRegion(table: "player").isFullDatabase)
    }

    @Test func namesAreLowercasedAndColumnsSortedAndDeduplicated() {
        #expect(DatabaseRegion(table: "PLAYER", columns: ["b", "A", "c"]).description == "player(a,b,c)")
        #expect(DatabaseRegion(table: "player", columns: ["name", "NAME", "Name"]).description == "player(name)")
        #expect(DatabaseRegion(table: "Équipe").description == "Équipe(*)")
        #expect(DatabaseRegion(table: "TEAM_A").union(DatabaseRegion(table: "teamb")).description == "team_a(*), teamb(*)")
    }

    @Test func rowIDsAreSortedAsNumbers() {
        #expect(DatabaseRegion(table: "player", rowIDs: [10, -3, 2]).description == "player(*)[-3,2,10]")
        #expect(
            DatabaseRegion(table: "player", rowIDs: [.max, .min]).description
                == "player(*)[-9223372036854775808,9223372036854775807]")
    }

    @Test func tablesAreSortedWhateverTheOrderOfConstruction() {
        let region = DatabaseRegion(table: "team")
            .union(DatabaseRegion(table: "Award", columns: ["year"]))
            .union(DatabaseRegion(table: "player", rowIDs: [3]))
        #expect(region.description == "award(year), player(*)[3], team(*)")
    }
}
