import DatabaseRegions
import TestSupport

/// Draws random regions and events over a small vocabulary of tables,
/// columns and rowids, spelled in several cases, so that random regions and
/// events often meet.
struct RandomDatabase {
    /// Table names; different spellings of one table on purpose.
    var tables = ["player", "Player", "PLAYER", "team", "Team", "award"]

    /// Table names that no region contains.
    var unknownTables = ["coach", "sqlite_sequence"]

    /// Column names; different spellings of one column on purpose.
    var columns = ["id", "ID", "name", "Name", "score", "teamId", "TEAMID", "bonus"]

    /// Column names that no region contains.
    var unknownColumns = ["unknown", "rowid"]

    /// The rowids regions and events pick from.
    var rowIDs: ClosedRange<Int64> = 1...6

    var generator: SplitMix64

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &generator) < probability
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &generator)
    }

    mutating func element<T>(of array: [T]) -> T {
        array.randomElement(using: &generator)!
    }

    mutating func subset<T: Hashable>(of array: [T], count: ClosedRange<Int>) -> Set<T> {
        var result = Set<T>()
        for _ in 0..<int(in: count) {
            result.insert(element(of: array))
        }
        return result
    }

    /// A region of one table: all or some columns, all or some rows, and
    /// now and then an empty column or rowid set.
    mutating func tableRegion() -> DatabaseRegion {
        let table = element(of: tables)
        let columns: Set<String>? =
            if chance(0.3) { nil } else if chance(0.03) { [] } else { subset(of: self.columns, count: 1...4) }
        let rowIDs: Set<Int64>? =
            if chance(0.45) { nil } else if chance(0.03) { [] } else { subset(of: Array(self.rowIDs), count: 1...3) }
        return DatabaseRegion(table: table, columns: columns, rowIDs: rowIDs)
    }

    /// Any region: sometimes full or empty, usually the union of a few table regions.
    mutating func region() -> DatabaseRegion {
        if chance(0.04) { return .fullDatabase }
        if chance(0.04) { return DatabaseRegion() }
        var region = DatabaseRegion()
        for _ in 0..<int(in: 1...3) {
            region.formUnion(tableRegion())
        }
        return region
    }

    mutating func eventKind() -> DatabaseEventKind {
        let table = chance(0.1) ? element(of: unknownTables) : element(of: tables)
        switch int(in: 0...3) {
        case 0: return .insert(tableName: table)
        case 1: return .delete(tableName: table)
        default:
            var columnNames = subset(of: columns, count: 0...4)
            if chance(0.2) { columnNames.insert(element(of: unknownColumns)) }
            return .update(tableName: table, columnNames: columnNames)
        }
    }

    mutating func event() -> DatabaseEvent {
        let rowID: Int64? = chance(0.2) ? nil : Int64.random(in: rowIDs.lowerBound...rowIDs.upperBound + 1, using: &generator)
        return DatabaseEvent(kind: eventKind(), rowID: rowID)
    }
}
