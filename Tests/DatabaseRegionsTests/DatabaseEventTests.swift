import DatabaseRegions
import Testing

@Suite struct DatabaseEventTests {
    @Test func everyKindGivesItsTableName() {
        #expect(DatabaseEventKind.insert(tableName: "Player").tableName == "Player")
        #expect(DatabaseEventKind.delete(tableName: "team").tableName == "team")
        #expect(DatabaseEventKind.update(tableName: "award", columnNames: ["year"]).tableName == "award")
    }

    @Test func anEventKeepsItsKindAndRowID() {
        let event = DatabaseEvent(kind: .update(tableName: "player", columnNames: ["score"]), rowID: 42)
        #expect(event.kind == .update(tableName: "player", columnNames: ["score"]))
        #expect(event.rowID == 42)
        #expect(DatabaseEvent(kind: .insert(tableName: "player"), rowID: nil).rowID == nil)
    }

    @Test func eventsAreValuesThatCompareExactlyAsWritten() {
        let events: [DatabaseEvent] = [
            DatabaseEvent(kind: .insert(tableName: "player"), rowID: 1),
            DatabaseEvent(kind: .insert(tableName: "player"), rowID: 2),
            DatabaseEvent(kind: .insert(tableName: "player"), rowID: nil),
            DatabaseEvent(kind: .insert(tableName: "Player"), rowID: 1),
            DatabaseEvent(kind: .delete(tableName: "player"), rowID: 1),
            DatabaseEvent(kind: .update(tableName: "player", columnNames: []), rowID: 1),
            DatabaseEvent(kind: .update(tableName: "player", columnNames: ["id"]), rowID: 1),
        ]
        #expect(Set(events).count == events.count)
        #expect(
            DatabaseEvent(kind: .update(tableName: "player", columnNames: ["id", "name"]), rowID: 1)
                == DatabaseEvent(kind: .update(tableName: "player", columnNames: ["name", "id"]), rowID: 1))
    }
}

// Sendable conformance is a compile-time property, not a test: this
// declaration does not build when one of these types stops being Sendable.
private let eventsRegionsAndIndexesAreSendable: [any Sendable] = [
    DatabaseEvent(kind: .insert(tableName: "player"), rowID: 1),
    DatabaseEventKind.insert(tableName: "player"),
    DatabaseRegion.fullDatabase,
    DatabaseRegionIndex<Int>(),
]
