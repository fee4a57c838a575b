import DatabaseRegions
import Testing
import TestSupport

/// Keys registered with a `ValuePin`: found from a changed row's values,
/// exactly as a loop over the registered regions and pins decides, and in
/// time proportional to the keys pinned to the row's values.
@Suite(.onItsOwnThread) struct DatabaseRegionIndexPinTests {
    /// What a brute force loop answers: the region is modified, and the pin
    /// (on the event's table, with known values) holds one of the values.
    static func isConcerned(
        region: DatabaseRegion, pin: ValuePin?, event: DatabaseEvent, values: (String) -> [IndexedValue]?
    ) -> Bool {
        guard region.isModified(by: event) else { return false }
        guard let pin, !region.isFullDatabase, pin.table.lowercased() == event.kind.tableName.lowercased(), let rowValues = values(pin.column.lowercased())
        else { return true }
        return rowValues.contains(where: pin.values.contains)
    }

    @Test func theIndexAnswersLikeTheBruteForceLoop() {
        var random = RandomDatabase(seed: 0x5EED_0333)
        random.rowIDs = 1...8
        let pinnedColumns = ["score", "Name"]
        let values: [IndexedValue] = [.null, .number(1), .number(2), .number(2.5), .text([97]), .text([65]), .blob([97])]
        var index = DatabaseRegionIndex<Int>()
        var registered: [Int: (region: DatabaseRegion, pin: ValuePin?)] = [:]
        var concernedAnswers = 0
        for step in 0..<3_000 {
            let key = random.int(in: 0...60)
            switch random.int(in: 0...9) {
            case 0:
                index.remove(key)
                registered[key] = nil
            default:
                let region = random.chance(0.3) ? random.region() : random.tableRegion()
                let pin: ValuePin? = random.chance(0.8)
                    ? ValuePin(
                        table: random.element(of: random.tables), column: random.element(of: pinnedColumns),
                        values: random.subset(of: values, count: 0...3))
                    : nil
                index.insert(region, for: key, pinning: pin)
                registered[key] = (region, pin)
            }
            #expect(index.count == registered.count)
            for _ in 0..<4 {
                let event = random.event()
                // Per column: unknown, or the values of one or two sides.
                var rowValues: [String: [IndexedValue]?] = [:]
                for column in pinnedColumns.map({ $0.lowercased() }) {
                    rowValues[column] = random.chance(0.15)
                        ? .some(nil) : (0..<random.int(in: 1...2)).map { _ in random.element(of: values) }
                }
                let valuesOf: (String) -> [IndexedValue]? = { rowValues[$0.lowercased()] ?? nil }
                var found: [Int] = []
                index.forEachKey(impactedBy: event, pinnedValues: valuesOf) { found.append($0) }
                let expected = registered.filter {
                    Self.isConcerned(region: $0.value.region, pin: $0.value.pin, event: event, values: valuesOf)
                }.keys
                #expect(found.sorted() == expected.sorted(), "step \(step), \(event)")
                if !found.isEmpty { concernedAnswers += 1 }
                // Without values, pins do not restrict: the region decides.
                #expect(
                    index.keys(impactedBy: event).sorted()
                        == registered.filter { $0.value.region.isModified(by: event) }.keys.sorted())
                #expect(
                    Set(index.keys(impactedByEventsOfKind: event.kind))
                        == Set(registered.filter { $0.value.region.isModified(byEventsOfKind: event.kind) }.keys))
            }
        }
        #expect(concernedAnswers > 1_000)
    }

    /// 10 000 keys pinned to distinct owners: a change of one owner's row
    /// examines the keys of that owner (old and new), not the others.
    @Test func aRowChangeExaminesOnlyTheKeysPinnedToItsValues() {
        var index = DatabaseRegionIndex<Int>()
        for owner in 0..<10_000 {
            index.insert(
                DatabaseRegion(table: "item"), for: owner,
                pinning: ValuePin(table: "item", column: "owner", values: [.number(Double(owner))]))
        }
        index.insert(DatabaseRegion(table: "item", columns: ["name"]), for: -1)
        let update = DatabaseEvent(kind: .update(tableName: "Item", columnNames: ["owner"]), rowID: 7)
        var found: [Int] = []
        index.forEachKey(impactedBy: update, pinnedValues: { $0 == "owner" ? [.number(41), .number(42)] : nil }) {
            found.append($0)
        }
        #expect(found.sorted() == [41, 42])
        #expect(index.visitedEntryCount(impactedBy: update, pinnedValues: { _ in [.number(41), .number(42)] }) <= 3)
        // Unknown values: every pinned key, as its region says.
        #expect(index.visitedEntryCount(impactedBy: update, pinnedValues: { _ in nil }) >= 10_000)
        var all = 0
        index.forEachKey(impactedBy: update) { _ in all += 1 }
        #expect(all == 10_000)
        // The key of names only is not concerned by an update of owners,
        // and is by an update of names, with any values.
        var names: [Int] = []
        index.forEachKey(
            impactedBy: DatabaseEvent(kind: .update(tableName: "item", columnNames: ["name"]), rowID: 7),
            pinnedValues: { _ in [.number(5)] }
        ) { names.append($0) }
        #expect(names.sorted() == [-1, 5])
        // Removed and replaced without pin.
        #expect(index.remove(5) == DatabaseRegion(table: "item"))
        index.insert(DatabaseRegion(table: "item"), for: 6)
        var afterReplacement: [Int] = []
        index.forEachKey(impactedBy: update, pinnedValues: { _ in [.number(5)] }) { afterReplacement.append($0) }
        #expect(afterReplacement == [6])
        #expect(index.count == 10_000)
    }

    /// The pin restricts its table only: the key's other tables answer as
    /// their region says.
    @Test func aPinLeavesTheOtherTablesOfItsRegionAlone() {
        var index = DatabaseRegionIndex<String>()
        index.insert(
            DatabaseRegion(table: "item").union(DatabaseRegion(table: "owner", columns: ["name"])), for: "join",
            pinning: ValuePin(table: "ITEM", column: "Owner", values: [.text([97])]))
        let ownerEvent = DatabaseEvent(kind: .update(tableName: "owner", columnNames: ["name"]), rowID: 1)
        var found: [String] = []
        index.forEachKey(impactedBy: ownerEvent, pinnedValues: { _ in [.text([98])] }) { found.append($0) }
        #expect(found == ["join"])
        found = []
        index.forEachKey(
            impactedBy: DatabaseEvent(kind: .delete(tableName: "item"), rowID: 1), pinnedValues: { _ in [.text([98])] }
        ) { found.append($0) }
        #expect(found.isEmpty)
        index.forEachKey(
            impactedBy: DatabaseEvent(kind: .delete(tableName: "item"), rowID: 1), pinnedValues: { _ in [.text([97])] }
        ) { found.append($0) }
        #expect(found == ["join"])
    }
}
