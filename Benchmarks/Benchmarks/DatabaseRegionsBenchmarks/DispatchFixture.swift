import DatabaseRegions
import BenchmarkSupport

/// The regions of K observers, registered in an index, and the events
/// dispatched to them.
///
/// Half the observers (even keys) watch one row of `player` (rowids
/// 1 ... 20 000), some or all of its columns. The other half (odd keys)
/// depends on the layout:
/// - `sharedTables`: each watches 1 to 3 rows of one of 50 other tables
///   `t0` ... `t49` (rowids 1 ... 100 000), some or all columns;
/// - `tablePerObserver`: each watches a table of its own among `t0` ...
///   `t4999`, some or all columns, all rows (7 times in 10) or a few of
///   rowids 1 ... 100.
///
/// Events: 1 000 000, half on `player` at a random rowid, half on a random
/// other table (among 50 or 5 000) at a random rowid; a third are
/// insertions, a third deletions, a third updates of 1 to 3 random columns.
struct DispatchFixture: Sendable {
    enum Layout: Sendable {
        case sharedTables
        case tablePerObserver

        var otherTableCount: Int {
            switch self {
            case .sharedTables: 50
            case .tablePerObserver: 5_000
            }
        }

        var otherRowCount: Int64 {
            switch self {
            case .sharedTables: 100_000
            case .tablePerObserver: 100
            }
        }
    }

    static let eventCount = 1_000_000
    static let playerRowCount: Int64 = 20_000
    static let playerColumns = ["id", "name", "score", "teamId", "bonus", "rank", "level", "email"]
    static let otherColumns = ["a", "b", "c", "d"]

    /// The same events for every K.
    static func events(for layout: Layout) -> [DatabaseEvent] {
        switch layout {
        case .sharedTables: sharedTablesEvents
        case .tablePerObserver: tablePerObserverEvents
        }
    }

    private static let sharedTablesEvents = makeEvents(layout: .sharedTables)
    private static let tablePerObserverEvents = makeEvents(layout: .tablePerObserver)

    let layout: Layout

    /// The events.
    let events: [DatabaseEvent]

    /// The regions, by key.
    let regions: [DatabaseRegion]

    /// The same regions in an index.
    let index: DatabaseRegionIndex<Int>

    /// The number of keys the index returns over all events.
    let indexTotal: Int

    /// The number of keys the index returns over the first `loopEventCount` events.
    let loopTotal: Int

    /// Builds the fixture for K observers and checks that the index and the
    /// loop agree on the first `loopEventCount` events.
    init(layout: Layout, observerCount: Int, loopEventCount: Int) {
        var generator = SplitMix64(seed: 0xBE4C_0000 &+ UInt64(observerCount))
        var regions: [DatabaseRegion] = []
        var index = DatabaseRegionIndex<Int>()
        for key in 0..<observerCount {
            let region: DatabaseRegion
            if key.isMultiple(of: 2) {
                region = DatabaseRegion(
                    table: "player",
                    columns: Self.randomColumns(from: Self.playerColumns, using: &generator),
                    rowIDs: [Int64.random(in: 1...Self.playerRowCount, using: &generator)])
            } else {
                let table: String
                let rowIDs: Set<Int64>?
                switch layout {
                case .sharedTables:
                    table = "t\(Int.random(in: 0..<layout.otherTableCount, using: &generator))"
                    rowIDs = Self.randomRowIDs(count: 1...3, upTo: layout.otherRowCount, using: &generator)
                case .tablePerObserver:
                    table = "t\(key / 2)"
                    rowIDs =
                        Int.random(in: 0..<10, using: &generator) < 7
                        ? nil
                        : Self.randomRowIDs(count: 1...5, upTo: layout.otherRowCount, using: &generator)
                }
                region = DatabaseRegion(
                    table: table,
                    columns: Self.randomColumns(from: Self.otherColumns, using: &generator),
                    rowIDs: rowIDs)
            }
            regions.append(region)
            index.insert(region, for: key)
        }

        let events = Self.events(for: layout)
        var indexTotal = 0
        var loopTotal = 0
        for (offset, event) in events.enumerated() {
            let keys = index.keys(impactedBy: event)
            indexTotal += keys.count
            if offset < loopEventCount {
                loopTotal += keys.count
                let expected = Self.bruteForceKeys(in: regions, impactedBy: event)
                precondition(keys.sorted() == expected, "index and loop disagree on \(event)")
            }
        }
        self.layout = layout
        self.events = events
        self.regions = regions
        self.index = index
        self.indexTotal = indexTotal
        self.loopTotal = loopTotal
    }

    /// The loop the index replaces: ask every region.
    static func bruteForceKeys(in regions: [DatabaseRegion], impactedBy event: DatabaseEvent) -> [Int] {
        var keys: [Int] = []
        for (key, region) in regions.enumerated() where region.isModified(by: event) {
            keys.append(key)
        }
        return keys
    }

    /// All columns (one time in five), or 1 to 3 columns.
    private static func randomColumns(from columns: [String], using generator: inout SplitMix64) -> Set<String>? {
        if Int.random(in: 0..<5, using: &generator) == 0 { return nil }
        return Set(columns.shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator)))
    }

    private static func randomRowIDs(
        count: ClosedRange<Int>, upTo rowCount: Int64, using generator: inout SplitMix64
    ) -> Set<Int64> {
        Set((0..<Int.random(in: count, using: &generator)).map { _ in
            Int64.random(in: 1...rowCount, using: &generator)
        })
    }

    private static func makeEvents(layout: Layout) -> [DatabaseEvent] {
        var generator = SplitMix64(seed: 0xE7E7_0001)
        // Column sets are drawn from a pool, so that events share their storage.
        let playerUpdates = (0..<256).map { _ in
            Set(playerColumns.shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator)))
        }
        let otherUpdates = (0..<64).map { _ in
            Set(otherColumns.shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator)))
        }
        let otherTables = (0..<layout.otherTableCount).map { "t\($0)" }
        var events: [DatabaseEvent] = []
        events.reserveCapacity(eventCount)
        for _ in 0..<eventCount {
            let onPlayer = Bool.random(using: &generator)
            let table = onPlayer ? "player" : otherTables.randomElement(using: &generator)!
            let rowID = Int64.random(in: 1...(onPlayer ? playerRowCount : layout.otherRowCount), using: &generator)
            let kind: DatabaseEventKind =
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: .insert(tableName: table)
                case 1: .delete(tableName: table)
                default:
                    .update(
                        tableName: table,
                        columnNames: (onPlayer ? playerUpdates : otherUpdates).randomElement(using: &generator)!)
                }
            events.append(DatabaseEvent(kind: kind, rowID: rowID))
        }
        return events
    }
}
