/// The non-generic part of `DatabaseRegionIndex`: regions registered under
/// small integer slots, bucketed by table.
///
/// Keeping the buckets free of the index's `Key` type lets the compiler
/// specialize all the dispatch code once, here, whatever the key type and
/// the module that uses the index.
@usableFromInline
struct DatabaseRegionIndexStorage: Sendable {
    /// What the index remembers about a registered region, to remove it.
    private struct SlotRecord: Sendable {
        var region: DatabaseRegion
        /// The position of the slot in `fullDatabaseSlots`, or -1.
        var fullDatabasePosition: Int32
        /// The region's watchers: (table name, watcher number) pairs.
        var watchers: [(table: CaseInsensitiveName, watcher: Int32)]
    }

    /// The records, by slot; `nil` for vacant slots.
    private var records: [SlotRecord?] = []

    /// Slots free for reuse.
    private var vacantSlots: [Int32] = []

    /// The slots of full-database regions.
    private var fullDatabaseSlots: [Int32] = []

    /// The buckets of each watched table.
    private var tables: [CaseInsensitiveName: TableBuckets] = [:]

    /// Creates an empty storage.
    @usableFromInline
    init() {}

    /// Registers a region and returns its slot.
    ///
    /// - Complexity: O(n), where n is the size of the region, plus O(c log c)
    ///   for c columns not watched before on a table.
    @usableFromInline
    mutating func insert(_ region: DatabaseRegion) -> Int32 {
        let slot: Int32
        if let vacant = vacantSlots.popLast() {
            slot = vacant
        } else {
            precondition(records.count < Int32.max, "DatabaseRegionIndex: too many regions")
            slot = Int32(records.count)
            records.append(nil)
        }
        var record = SlotRecord(region: region, fullDatabasePosition: -1, watchers: [])
        if let tableRegions = region.tableRegions {
            record.watchers.reserveCapacity(tableRegions.count)
            for (name, tableRegion) in tableRegions {
                let watcher = uniqueTable(named: name).insertWatcher(slot: slot, region: tableRegion)
                record.watchers.append((name, watcher))
            }
        } else {
            record.fullDatabasePosition = Int32(truncatingIfNeeded: fullDatabaseSlots.count)
            fullDatabaseSlots.append(slot)
        }
        records[Int(slot)] = record
        return slot
    }

    /// Unregisters the region at `slot` and returns it.
    ///
    /// - Complexity: O(n), where n is the size of the region.
    @usableFromInline
    mutating func remove(slot: Int32) -> DatabaseRegion {
        let record = records[Int(slot)]!
        records[Int(slot)] = nil
        vacantSlots.append(slot)
        if record.fullDatabasePosition >= 0 {
            let position = Int(record.fullDatabasePosition)
            let last = fullDatabaseSlots.removeLast()
            if position < fullDatabaseSlots.count {
                fullDatabaseSlots[position] = last
                records[Int(last)]!.fullDatabasePosition = Int32(truncatingIfNeeded: position)
            }
        }
        for (table, watcher) in record.watchers {
            let buckets = uniqueTable(named: table)
            buckets.removeWatcher(watcher)
            if buckets.isEmpty {
                tables[table] = nil
            }
        }
        return record.region
    }

    /// The region registered at `slot`.
    ///
    /// - Complexity: O(1).
    @usableFromInline
    func region(atSlot slot: Int32) -> DatabaseRegion {
        records[Int(slot)]!.region
    }

    /// Calls `body` with each slot whose region an event of this kind, on the
    /// row `rowID` (`nil`: any row), modifies. Each slot comes once: first
    /// the full-database regions, then the others (see `TableBuckets`).
    ///
    /// - Complexity: O(1 + u + v): see `TableBuckets.forEachSlot(impactedBy:rowID:rejected:_:)`.
    @usableFromInline
    func forEachSlot(impactedBy kind: DatabaseEventKind, rowID: Int64?, _ body: (Int32) -> Void) {
        for slot in fullDatabaseSlots { body(slot) }
        guard let table = tables[CaseInsensitiveName(kind.tableName)] else { return }
        table.forEachSlot(impactedBy: kind, rowID: rowID, body)
    }

    /// The number of entries `forEachSlot(impactedBy:rowID:_:)` visits: the
    /// slots it reports plus the entries it examines and rejects.
    ///
    /// - Complexity: The same as `forEachSlot(impactedBy:rowID:_:)`.
    func visitedEntryCount(impactedBy kind: DatabaseEventKind, rowID: Int64?) -> Int {
        var count = fullDatabaseSlots.count
        guard let table = tables[CaseInsensitiveName(kind.tableName)] else { return count }
        table.forEachSlot(impactedBy: kind, rowID: rowID, rejected: { count += 1 }) { _ in count += 1 }
        return count
    }

    /// The buckets of a table, created if needed, and copied first if
    /// another index shares them (copy on write).
    private mutating func uniqueTable(named name: CaseInsensitiveName) -> TableBuckets {
        guard let index = tables.index(forKey: name) else {
            let buckets = TableBuckets()
            tables[name] = buckets
            return buckets
        }
        if !isKnownUniquelyReferenced(&tables.values[index]) {
            tables.values[index] = tables.values[index].copy()
        }
        return tables.values[index]
    }
}
