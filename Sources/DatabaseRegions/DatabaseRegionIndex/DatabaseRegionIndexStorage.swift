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
        /// The region's registrations: (table name, registration number) pairs.
        var registrations: [(table: CaseInsensitiveName, registration: Int32)]
    }

    /// The records, by slot; `nil` for vacant slots.
    private var records: [SlotRecord?] = []

    /// Slots free for reuse.
    private var vacantSlots: [Int32] = []

    /// The slots of full-database regions.
    private var fullDatabaseSlots: [Int32] = []

    /// The buckets of each covered table.
    private var tables = FlatHashTable<NameFingerprint, TableBuckets>()

    /// Creates an empty storage.
    @usableFromInline
    init() {}

    /// Registers a region and returns its slot.
    ///
    /// - Complexity: Expected amortized O(n), where n is the size of the region, plus O(c log c)
    ///   for c columns not covered before on a table.
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
        var record = SlotRecord(region: region, fullDatabasePosition: -1, registrations: [])
        if let tableRegions = region.tableRegions {
            record.registrations.reserveCapacity(tableRegions.count)
            for (name, tableRegion) in tableRegions {
                let registration = uniqueTable(named: name).insertRegistration(slot: slot, region: tableRegion)
                record.registrations.append((name, registration))
            }
        } else {
            record.fullDatabasePosition = Int32(truncatingIfNeeded: fullDatabaseSlots.count)
            fullDatabaseSlots.append(slot)
        }
        records[Int(slot)] = record
        #if DATABASE_REGIONS_INTERNAL_CHECKS
        tables.checkInvariants()
        #endif
        return slot
    }

    /// Unregisters the region at `slot` and returns it.
    ///
    /// - Complexity: Expected amortized O(n), where n is the size of the region.
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
        for (table, registration) in record.registrations {
            let buckets = uniqueTable(named: table)
            buckets.removeRegistration(registration)
            if buckets.isEmpty {
                tables.remove(at: tablePosition(named: table.rawValue)!)
            }
        }
        #if DATABASE_REGIONS_INTERNAL_CHECKS
        tables.checkInvariants()
        #endif
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
    /// - Complexity: Expected O(1 + u + v): see `TableBuckets.forEachSlot(impactedBy:rowID:rejected:_:)`.
    @usableFromInline
    func forEachSlot(impactedBy kind: borrowing DatabaseEventKind, rowID: Int64?, _ body: (Int32) -> Void) {
        // Iterating an array retains it: skip the empty one.
        if !fullDatabaseSlots.isEmpty {
            for slot in fullDatabaseSlots { body(slot) }
        }
        guard let position = tablePosition(named: kind.tableName) else { return }
        // `self` and its tables are not mutated during the call: no need to
        // retain the table's buckets.
        Unmanaged.passUnretained(tables.entries[position].value)._withUnsafeGuaranteedRef { buckets in
            buckets.forEachSlot(impactedBy: kind, rowID: rowID, body)
        }
    }

    /// The number of entries `forEachSlot(impactedBy:rowID:_:)` visits: the
    /// slots it reports plus the entries it examines and rejects.
    ///
    /// - Complexity: The same as `forEachSlot(impactedBy:rowID:_:)`.
    func visitedEntryCount(impactedBy kind: DatabaseEventKind, rowID: Int64?) -> Int {
        var count = fullDatabaseSlots.count
        guard let position = tablePosition(named: kind.tableName) else { return count }
        tables.entries[position].value.forEachSlot(impactedBy: kind, rowID: rowID, rejected: { count += 1 }) { _ in count += 1 }
        return count
    }

    /// The position of a table in `tables`, if it has registrations.
    ///
    /// - Complexity: Expected O(1) for names of no more than eight bytes, and
    ///   O(n) for longer names, where n is their length in UTF-8 bytes.
    @inline(__always)
    private func tablePosition(named name: String) -> Int? {
        let fingerprint = NameFingerprint(name)
        return tables.position(forKey: fingerprint) { buckets in
            fingerprint.isComplete || buckets.name == CaseInsensitiveName(name)
        }
    }

    /// The buckets of a table, created if needed, and copied first if
    /// another index shares them (copy on write).
    private mutating func uniqueTable(named name: CaseInsensitiveName) -> TableBuckets {
        guard let position = tablePosition(named: name.rawValue) else {
            let buckets = TableBuckets(name: name)
            tables.append(buckets, forKey: NameFingerprint(name))
            return buckets
        }
        return tables.updateValue(at: position) { buckets in
            if !isKnownUniquelyReferenced(&buckets) {
                buckets = buckets.copy()
            }
            return buckets
        }
    }
}
