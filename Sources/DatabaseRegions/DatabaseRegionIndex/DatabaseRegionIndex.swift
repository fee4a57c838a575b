/// An index of regions by key, that tells which keys an event concerns in a
/// time that depends on the answer, not on the number of registered regions.
///
/// Register a region for each observer, then ask, for each change, which
/// observers it concerns:
///
/// ```swift
/// var index = DatabaseRegionIndex<String>()
/// index.insert(DatabaseRegion(table: "player", columns: ["score"]), for: "scores")
/// index.insert(DatabaseRegion(table: "player", rowIDs: [42]), for: "player 42")
/// index.insert(DatabaseRegion(table: "team"), for: "teams")
///
/// let event = DatabaseEvent(kind: .update(tableName: "player", columnNames: ["name"]), rowID: 42)
/// index.keys(impactedBy: event) // ["player 42"]
/// ```
///
/// The answers are exactly those of a loop that asks every registered region
/// `isModified(by:)` or `isModified(byEventsOfKind:)`, each key once. But
/// instead of asking every region, the index keeps, for each table, the keys
/// covering all of it, the keys covering each column, and the keys covering
/// each row, so that an event only visits the keys it may concern. For every
/// changed row, prefer `forEachKey(impactedBy:_:)`, which builds no array.
///
/// `DatabaseRegionIndex` is a value type, `Sendable` when its keys are.
public struct DatabaseRegionIndex<Key: Hashable> {
    // The generic part of the index is inlinable, so that it is specialized
    // for the key type in the module that uses the index; the rest lives in
    // the non-generic `DatabaseRegionIndexStorage`.

    /// The slot of each key in `storage`.
    @usableFromInline var slotsByKey: [Key: Int32]

    /// The key of each slot; `nil` for vacant slots.
    @usableFromInline var keysBySlot: [Key?]

    /// The regions, by slot (of a key with a `ValuePin`: its region
    /// without the pin's table).
    @usableFromInline var storage: DatabaseRegionIndexStorage

    /// The regions of keys with a `ValuePin` on the pin's table, and the
    /// key of each of their slots (`nil` for vacant slots).
    @usableFromInline var pinned: PinnedRegions
    @usableFromInline var pinnedKeysBySlot: [Key?]
    @usableFromInline var pinnedSlotsByKey: [Key: Int32]

    /// Creates an empty index.
    ///
    /// - Complexity: O(1).
    @inlinable
    public init() {
        slotsByKey = [:]
        keysBySlot = []
        storage = DatabaseRegionIndexStorage()
        pinned = PinnedRegions()
        pinnedKeysBySlot = []
        pinnedSlotsByKey = [:]
    }

    /// The number of registered keys, including keys registered with an
    /// empty region.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var count: Int { slotsByKey.count }

    /// Registers the region of a key, replacing the key's previous region if any.
    ///
    /// A key registered with the empty region counts in `count` but no event
    /// concerns it. Inserting the region a key already has does nothing.
    ///
    /// - Parameters:
    ///   - region: The region the key depends on.
    ///   - key: The key, for example an observer's identifier.
    /// - Complexity: Expected amortized O(n + m), where n is the size of
    ///   `region` and m the size of the key's previous region, the size of a
    ///   region being the sum, over its tables, of (1 + columns + rowids ×
    ///   (1 + columns)): a key restricted to rowids and columns is indexed by
    ///   (rowid, column) pair; plus O(c log c) for the c columns of `region`
    ///   that no key covered before.
    @inlinable
    public mutating func insert(_ region: DatabaseRegion, for key: Key) {
        insert(region, for: key, pinning: nil)
    }

    /// Registers the region of a key, restricted on one table to the rows
    /// that hold some values in one column (see `ValuePin`), replacing the
    /// key's previous region if any.
    ///
    /// An event of the pin's table concerns the key when it modifies the
    /// region (the full database ignores its pin) and, when `forEachKey(impactedBy:pinnedValues:_:)` is given
    /// the row's values, when the row holds one of the pinned values before
    /// or after the change. Without the row's values, the pin is ignored.
    ///
    /// - Parameters:
    ///   - region: The region the key depends on.
    ///   - key: The key, for example an observer's identifier.
    ///   - pin: The values of a column the key is restricted to, or nil.
    /// - Complexity: As `insert(_:for:)`, plus O(v) for the v pinned values.
    @inlinable
    public mutating func insert(_ region: DatabaseRegion, for key: Key, pinning pin: ValuePin?) {
        if let slot = slotsByKey[key] {
            let pinnedSlot = pinnedSlotsByKey[key]
            if pin == nil, pinnedSlot == nil, storage.region(atSlot: slot) == region { return }
            _ = storage.remove(slot: slot)
            keysBySlot[Int(slot)] = nil
            if let pinnedSlot {
                pinned.remove(slot: pinnedSlot)
                pinnedKeysBySlot[Int(pinnedSlot)] = nil
                pinnedSlotsByKey[key] = nil
            }
        }
        var unpinned = region
        // The full database is modified by every event: nothing to pin.
        if let pin, !region.isFullDatabase {
            let parts = region.split(onTable: pin.table)
            unpinned = parts.rest
            if !parts.table.isEmpty {
                let pinnedSlot = pinned.insert(parts.table, pin: pin)
                if Int(pinnedSlot) == pinnedKeysBySlot.count {
                    pinnedKeysBySlot.append(key)
                } else {
                    pinnedKeysBySlot[Int(pinnedSlot)] = key
                }
                pinnedSlotsByKey[key] = pinnedSlot
            }
        }
        let slot = storage.insert(unpinned)
        if Int(slot) == keysBySlot.count {
            keysBySlot.append(key)
        } else {
            keysBySlot[Int(slot)] = key
        }
        slotsByKey[key] = slot
    }

    /// Unregisters a key.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The region the key was registered with, or `nil` if the key
    ///   was not registered.
    /// - Complexity: Expected amortized O(n), where n is the size of the
    ///   key's region (see `insert(_:for:)`).
    @inlinable @discardableResult
    public mutating func remove(_ key: Key) -> DatabaseRegion? {
        guard let slot = slotsByKey.removeValue(forKey: key) else { return nil }
        keysBySlot[Int(slot)] = nil
        let region = storage.remove(slot: slot)
        guard let pinnedSlot = pinnedSlotsByKey.removeValue(forKey: key) else { return region }
        pinnedKeysBySlot[Int(pinnedSlot)] = nil
        return region.union(pinned.remove(slot: pinnedSlot).region)
    }

    /// The keys whose region the event modifies, each once.
    ///
    /// The answer holds the same keys as
    /// `regions.filter { $0.value.isModified(by: event) }.map(\.key)`. Their
    /// order is unspecified but deterministic: it depends only on the
    /// sequence of insertions and removals that built the index.
    ///
    /// To visit the keys without building an array, use
    /// `forEachKey(impactedBy:_:)`.
    ///
    /// - Parameter event: A change of one row.
    /// - Returns: The keys the event concerns.
    /// - Complexity: Expected O(1 + u + m + d), whatever the number of
    ///   registered regions, where u is the number of updated columns of an
    ///   update (0 for an insertion or a deletion), m the number of keys
    ///   returned, and d the number of extra examinations of keys that cover
    ///   several of the updated columns: such a key is examined once per
    ///   updated column it covers, and returned once, so d ≤ m × (u − 1).
    ///   Insertions, deletions, and updates that no key covers through two
    ///   of the updated columns cost O(1 + u + m). No index can drop d in
    ///   general: one that found the keys whose columns meet the updated
    ///   ones in O(1 + u + m) would multiply a Boolean matrix (keys by
    ///   columns) by a vector (the updated columns) in time linear in its
    ///   side, which the online matrix-vector multiplication (OMv)
    ///   conjecture rules out (Henzinger et al., STOC 2015). Keys that cover the
    ///   event's row through other columns only are not examined. Hashing
    ///   names adds time proportional to their length; for a table whose keys
    ///   cover c > 64 distinct columns, add O(c / 64) word operations per
    ///   update and per examination. An event without a rowid costs the same
    ///   as one with a rowid. Allocates nothing when no key is concerned.
    @inlinable
    public func keys(impactedBy event: DatabaseEvent) -> [Key] {
        keys(impactedBy: event.kind, rowID: event.rowID)
    }

    /// Calls a closure with each key whose region the event modifies, each
    /// once, without allocating.
    ///
    /// `body` receives the keys that `keys(impactedBy:)` returns, in the same
    /// order, synchronously, before `forEachKey(impactedBy:_:)` returns. The
    /// index allocates nothing, whether keys are concerned or not: this is
    /// the method to call for every changed row of a transaction.
    ///
    /// ```swift
    /// var changed: Set<String> = []
    /// index.forEachKey(impactedBy: event) { key in
    ///     changed.insert(key)
    /// }
    /// ```
    ///
    /// `body` must not modify the index (Swift's exclusivity rules forbid
    /// it: the index is being read during the call).
    ///
    /// - Parameters:
    ///   - event: A change of one row.
    ///   - body: A closure called with each key the event concerns.
    /// - Complexity: The same as `keys(impactedBy:)`, plus the calls to `body`.
    @inlinable
    public func forEachKey(impactedBy event: DatabaseEvent, _ body: (Key) -> Void) {
        storage.forEachSlot(impactedBy: event.kind, rowID: event.rowID) { slot in
            body(keysBySlot[Int(slot)]!)
        }
        if !pinned.isEmpty {
            var examined = 0
            pinned.forEachSlot(impactedBy: event, values: { _ in nil }, examined: &examined) { slot in
                body(pinnedKeysBySlot[Int(slot)]!)
            }
        }
    }

    /// Calls a closure with each key whose region the event modifies, each
    /// once, keys with a `ValuePin` on the event's table only when the
    /// changed row holds one of their values.
    ///
    /// `pinnedValues` is asked for the values of the changed row in each
    /// pinned column of the event's table: the values on the sides the
    /// event changes (the old row of a deletion, the new row of an
    /// insertion, both for an update), or nil when they are unknown (every
    /// key pinned on that column is then a candidate, as its region says).
    ///
    /// ```swift
    /// index.insert(
    ///     DatabaseRegion(table: "item"), for: "owner 42",
    ///     pinning: ValuePin(table: "item", column: "owner", values: [.number(42)]))
    /// let event = DatabaseEvent(kind: .update(tableName: "item", columnNames: ["name"]), rowID: 7)
    /// index.forEachKey(impactedBy: event, pinnedValues: { _ in [.number(41)] }) { _ in } // no key
    /// ```
    ///
    /// - Parameters:
    ///   - event: A change of one row.
    ///   - pinnedValues: The row's values in a column, by column name.
    ///   - body: A closure called with each key the event concerns.
    /// - Complexity: The same as `forEachKey(impactedBy:_:)` for the keys
    ///   without pin, plus O(p + m) for p pinned columns of the event's
    ///   table and m keys pinned to the row's values: keys pinned to other
    ///   values are not examined.
    @inlinable
    public func forEachKey(
        impactedBy event: DatabaseEvent, pinnedValues: (_ column: String) -> [IndexedValue]?, _ body: (Key) -> Void
    ) {
        storage.forEachSlot(impactedBy: event.kind, rowID: event.rowID) { slot in
            body(keysBySlot[Int(slot)]!)
        }
        if !pinned.isEmpty {
            var examined = 0
            pinned.forEachSlot(impactedBy: event, values: pinnedValues, examined: &examined) { slot in
                body(pinnedKeysBySlot[Int(slot)]!)
            }
        }
    }

    /// The keys whose region some event of this kind can modify, each once.
    ///
    /// The answer holds the same keys as
    /// `regions.filter { $0.value.isModified(byEventsOfKind: kind) }.map(\.key)`,
    /// which are also the keys that an event of this kind without rowid
    /// concerns. Their order is unspecified but deterministic: it depends
    /// only on the sequence of insertions and removals that built the index.
    ///
    /// - Parameter kind: A kind of change.
    /// - Returns: The keys events of this kind may concern.
    /// - Complexity: The same as `keys(impactedBy:)` for an event of this
    ///   kind without rowid. Allocates nothing when no key is concerned.
    @inlinable
    public func keys(impactedByEventsOfKind kind: DatabaseEventKind) -> [Key] {
        keys(impactedBy: kind, rowID: nil)
    }

    /// The number of index entries `keys(impactedBy:)` visits for this
    /// event: the keys it returns plus the entries it examines and rejects.
    /// For tests of the complexity.
    ///
    /// - Complexity: The same as `keys(impactedBy:)`.
    package func visitedEntryCount(impactedBy event: DatabaseEvent) -> Int {
        storage.visitedEntryCount(impactedBy: event.kind, rowID: event.rowID)
    }

    /// The number of index entries `forEachKey(impactedBy:pinnedValues:_:)`
    /// visits for this event. For tests of the complexity.
    package func visitedEntryCount(
        impactedBy event: DatabaseEvent, pinnedValues: (_ column: String) -> [IndexedValue]?
    ) -> Int {
        var examined = 0
        pinned.forEachSlot(impactedBy: event, values: pinnedValues, examined: &examined) { _ in }
        return storage.visitedEntryCount(impactedBy: event.kind, rowID: event.rowID) + examined
    }

    @inlinable
    func keys(impactedBy kind: DatabaseEventKind, rowID: Int64?) -> [Key] {
        var keys: [Key] = []
        storage.forEachSlot(impactedBy: kind, rowID: rowID) { slot in
            keys.append(keysBySlot[Int(slot)]!)
        }
        if !pinned.isEmpty {
            // Without values, a pin does not restrict its key.
            var examined = 0
            pinned.forEachSlot(impactedBy: DatabaseEvent(kind: kind, rowID: rowID), values: { _ in nil }, examined: &examined) {
                keys.append(pinnedKeysBySlot[Int($0)]!)
            }
        }
        return keys
    }
}

// Sendable conformances of a generic type must be declared in its file.
extension DatabaseRegionIndex: Sendable where Key: Sendable {}
