import DatabaseRegions
import Testing

/// One line of a modification table: a region, an event, and whether the
/// event modifies the region.
struct ModificationCase: Sendable, CustomTestStringConvertible {
    var region: DatabaseRegion
    var event: DatabaseEvent
    var isModified: Bool

    var testDescription: String {
        "\(region) \(isModified ? "is" : "is not") modified by \(event.kind) at rowid \(event.rowID.map(String.init) ?? "nil")"
    }
}

@Suite struct DatabaseRegionModificationTests {
    static let player = DatabaseRegion(table: "player")
    static let playerNameScore = DatabaseRegion(table: "player", columns: ["Name", "score"])
    static let playerRows = DatabaseRegion(table: "player", rowIDs: [1, 2])
    static let playerNameRow = DatabaseRegion(table: "player", columns: ["name"], rowIDs: [1])
    static let playerIDRowAndTeam = DatabaseRegion(table: "player", columns: ["id"], rowIDs: [1])
        .union(DatabaseRegion(table: "team"))
    static let mixedCase = DatabaseRegion(table: "PlAyEr", columns: ["NaMe"])
    static let nonASCII = DatabaseRegion(table: "Équipe")

    /// Event kinds, tested as events without a rowid (which match at table
    /// level) and through `isModified(byEventsOfKind:)`.
    static let kindCases: [ModificationCase] = [
        // All columns, all rows.
        .init(region: player, event: insert("player"), isModified: true),
        .init(region: player, event: insert("PLAYER"), isModified: true),
        .init(region: player, event: delete("Player"), isModified: true),
        .init(region: player, event: update("player", []), isModified: true),
        .init(region: player, event: update("player", ["name"]), isModified: true),
        .init(region: player, event: update("player", ["whatever"]), isModified: true),
        .init(region: player, event: insert("team"), isModified: false),
        .init(region: player, event: update("team", ["name"]), isModified: false),
        .init(region: player, event: delete("players"), isModified: false),
        // Some columns.
        .init(region: playerNameScore, event: insert("player"), isModified: true),
        .init(region: playerNameScore, event: delete("player"), isModified: true),
        .init(region: playerNameScore, event: update("player", ["name"]), isModified: true),
        .init(region: playerNameScore, event: update("player", ["NAME"]), isModified: true),
        .init(region: playerNameScore, event: update("Player", ["Score"]), isModified: true),
        .init(region: playerNameScore, event: update("player", ["id", "score"]), isModified: true),
        .init(region: playerNameScore, event: update("player", ["id"]), isModified: false),
        .init(region: playerNameScore, event: update("player", ["names"]), isModified: false),
        .init(region: playerNameScore, event: update("player", []), isModified: false),
        .init(region: playerNameScore, event: update("team", ["name"]), isModified: false),
        // Some rows: kinds ignore rows.
        .init(region: playerRows, event: insert("player"), isModified: true),
        .init(region: playerRows, event: delete("player"), isModified: true),
        .init(region: playerRows, event: update("player", ["id"]), isModified: true),
        .init(region: playerNameRow, event: update("player", ["Name"]), isModified: true),
        .init(region: playerNameRow, event: update("player", ["score"]), isModified: false),
        // Several tables.
        .init(region: playerIDRowAndTeam, event: update("team", ["name"]), isModified: true),
        .init(region: playerIDRowAndTeam, event: update("player", ["id"]), isModified: true),
        .init(region: playerIDRowAndTeam, event: update("player", ["name"]), isModified: false),
        .init(region: playerIDRowAndTeam, event: insert("award"), isModified: false),
        // Case: ASCII letters fold, other characters do not.
        .init(region: mixedCase, event: update("player", ["name"]), isModified: true),
        .init(region: mixedCase, event: update("PLAYER", ["NAME"]), isModified: true),
        .init(region: nonASCII, event: insert("ÉQUIPE"), isModified: true),
        .init(region: nonASCII, event: insert("équipe"), isModified: false),
        // Empty and full.
        .init(region: DatabaseRegion(), event: insert("player"), isModified: false),
        .init(region: DatabaseRegion(), event: delete("player"), isModified: false),
        .init(region: DatabaseRegion(), event: update("player", ["id"]), isModified: false),
        .init(region: DatabaseRegion(table: "player", columns: []), event: insert("player"), isModified: false),
        .init(region: DatabaseRegion(table: "player", rowIDs: []), event: delete("player"), isModified: false),
        .init(region: .fullDatabase, event: insert("player"), isModified: true),
        .init(region: .fullDatabase, event: delete("anything"), isModified: true),
        .init(region: .fullDatabase, event: update("player", []), isModified: true),
    ]

    /// Events with a rowid.
    static let eventCases: [ModificationCase] = [
        .init(region: player, event: insert("player", 1), isModified: true),
        .init(region: player, event: update("player", ["name"], 99), isModified: true),
        .init(region: playerNameScore, event: update("player", ["score"], 99), isModified: true),
        .init(region: playerNameScore, event: update("player", ["id"], 99), isModified: false),
        .init(region: playerRows, event: insert("player", 1), isModified: true),
        .init(region: playerRows, event: insert("player", 3), isModified: false),
        .init(region: playerRows, event: delete("PLAYER", 2), isModified: true),
        .init(region: playerRows, event: delete("player", 0), isModified: false),
        .init(region: playerRows, event: update("player", ["id"], 2), isModified: true),
        .init(region: playerRows, event: update("player", ["id"], 5), isModified: false),
        .init(region: playerRows, event: update("player", [], 1), isModified: true),
        .init(region: playerNameRow, event: update("player", ["name"], 1), isModified: true),
        .init(region: playerNameRow, event: update("player", ["name"], 2), isModified: false),
        .init(region: playerNameRow, event: update("player", ["score"], 1), isModified: false),
        .init(region: playerNameRow, event: update("player", ["score", "NAME"], 1), isModified: true),
        .init(region: playerNameRow, event: insert("player", 1), isModified: true),
        .init(region: playerNameRow, event: delete("player", 2), isModified: false),
        .init(region: playerNameRow, event: insert("team", 1), isModified: false),
        .init(region: playerIDRowAndTeam, event: delete("team", 99), isModified: true),
        .init(region: playerIDRowAndTeam, event: update("player", ["id"], 1), isModified: true),
        .init(region: playerIDRowAndTeam, event: update("player", ["id"], 2), isModified: false),
        .init(region: DatabaseRegion(), event: insert("player", 1), isModified: false),
        .init(region: .fullDatabase, event: insert("player", 1), isModified: true),
        .init(region: .fullDatabase, event: update("team", [], -7), isModified: true),
        .init(region: DatabaseRegion(table: "player", rowIDs: [Int64.min, Int64.max]), event: insert("player", .max), isModified: true),
        .init(region: DatabaseRegion(table: "player", rowIDs: [Int64.min, Int64.max]), event: insert("player", .max - 1), isModified: false),
    ]

    /// Events without a rowid (`WITHOUT ROWID` tables): they match at table level.
    static let rowlessEventCases: [ModificationCase] = [
        .init(region: playerRows, event: insert("player"), isModified: true),
        .init(region: playerRows, event: delete("player"), isModified: true),
        .init(region: playerRows, event: update("player", ["id"]), isModified: true),
        .init(region: playerNameRow, event: update("player", ["name"]), isModified: true),
        .init(region: playerNameRow, event: update("player", ["score"]), isModified: false),
        .init(region: playerNameRow, event: insert("team"), isModified: false),
        .init(region: DatabaseRegion(), event: delete("player"), isModified: false),
        .init(region: .fullDatabase, event: delete("player"), isModified: true),
    ]

    @Test(arguments: kindCases)
    func aRegionIsModifiedByEventsOfAKindAsTheTableSays(_ testCase: ModificationCase) {
        #expect(testCase.region.isModified(byEventsOfKind: testCase.event.kind) == testCase.isModified)
        #expect(testCase.region.isModified(by: testCase.event) == testCase.isModified)
    }

    @Test(arguments: eventCases)
    func aRegionIsModifiedByEventsWithARowIDAsTheTableSays(_ testCase: ModificationCase) {
        #expect(testCase.region.isModified(by: testCase.event) == testCase.isModified)
        // The kind alone never says less than the event.
        if testCase.isModified {
            #expect(testCase.region.isModified(byEventsOfKind: testCase.event.kind))
        }
    }

    @Test(arguments: rowlessEventCases)
    func aRegionIsModifiedByEventsWithoutRowIDAtTableLevel(_ testCase: ModificationCase) {
        #expect(testCase.event.rowID == nil)
        #expect(testCase.region.isModified(by: testCase.event) == testCase.isModified)
        #expect(testCase.region.isModified(byEventsOfKind: testCase.event.kind) == testCase.isModified)
    }
}
