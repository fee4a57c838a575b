/// A value of a row's column as a `DatabaseRegionIndex` compares pinned
/// values: the caller maps the values it considers equal to equal
/// `IndexedValue`s (SQLite's numbers compare by value, texts under a
/// collation, blobs by bytes).
///
/// The index only finds candidates: a caller may map values it considers
/// different to one `IndexedValue` (two large integers to the same
/// `Double`), and then decides itself. It must never map two values it
/// considers equal to different ones.
public enum IndexedValue: Hashable, Sendable {
    case null
    /// An integer or a real, by value.
    case number(Double)
    /// A text's bytes, as the caller's collation compares them (for
    /// example with ASCII letters lowercased for SQLite's `NOCASE`).
    case text([UInt8])
    case blob([UInt8])
}

/// A restriction of a key's region on one table to the rows whose column
/// holds one of some values, before or after a change: the region of a
/// request `SELECT ... FROM item WHERE owner = 42 AND ...`.
///
/// A `DatabaseRegionIndex` finds the keys pinned to a row's values in time
/// proportional to their number, whatever the number of keys pinned to
/// other values (see `DatabaseRegionIndex.forEachKey(impactedBy:pinnedValues:_:)`).
public struct ValuePin: Hashable, Sendable {
    /// The table, compared without regard to ASCII case.
    public var table: String
    /// The column, compared without regard to ASCII case.
    public var column: String
    /// The values a row must hold in `column`, before or after a change,
    /// for the change to concern the key.
    public var values: Set<IndexedValue>

    /// Creates a pin of `column` of `table` to `values`.
    public init(table: String, column: String, values: Set<IndexedValue>) {
        self.table = table
        self.column = column
        self.values = values
    }

    /// Whether both pin the same column of the same table (names compared
    /// without regard to ASCII case) to the same values.
    public static func == (lhs: ValuePin, rhs: ValuePin) -> Bool {
        CaseInsensitiveName(lhs.table) == CaseInsensitiveName(rhs.table)
            && CaseInsensitiveName(lhs.column) == CaseInsensitiveName(rhs.column) && lhs.values == rhs.values
    }

    /// Hashes the pin, so that equal pins hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(CaseInsensitiveName(table))
        hasher.combine(CaseInsensitiveName(column))
        hasher.combine(values)
    }
}

/// The pinned parts of the regions of a `DatabaseRegionIndex`: for each key
/// registered with a `ValuePin`, its region on the pin's table, found by
/// table, column and value.
@usableFromInline
struct PinnedRegions: Sendable {
    private struct Entry: Sendable {
        /// The key's region on the pin's table only.
        var region: DatabaseRegion
        var pin: ValuePin
    }

    /// The slots pinned to each value of one column.
    private struct Column: Sendable {
        var name: String
        var slotsByValue: [IndexedValue: [Int32]] = [:]
        var slots: Set<Int32> = []
    }

    private var entries: [Entry?] = []
    private var vacantSlots: [Int32] = []
    /// By table: the pinned columns.
    private var tables: [CaseInsensitiveName: [Column]] = [:]

    @usableFromInline init() {}

    /// Whether no region is pinned.
    @usableFromInline var isEmpty: Bool { tables.isEmpty }

    /// Registers the region of a key on `pin.table` (the other tables of
    /// the key's region are not given); returns its slot.
    ///
    /// - Complexity: O(v + s) for v values, plus the slots pinned to each
    ///   (an array append each).
    @usableFromInline
    mutating func insert(_ region: DatabaseRegion, pin: ValuePin) -> Int32 {
        let slot: Int32
        if let vacant = vacantSlots.popLast() {
            slot = vacant
            entries[Int(slot)] = Entry(region: region, pin: pin)
        } else {
            slot = Int32(entries.count)
            entries.append(Entry(region: region, pin: pin))
        }
        let table = CaseInsensitiveName(pin.table)
        var columns = tables[table] ?? []
        let columnName = CaseInsensitiveName(pin.column)
        let index = columns.firstIndex { CaseInsensitiveName($0.name) == columnName } ?? {
            columns.append(Column(name: pin.column))
            return columns.count - 1
        }()
        for value in pin.values { columns[index].slotsByValue[value, default: []].append(slot) }
        columns[index].slots.insert(slot)
        tables[table] = columns
        return slot
    }

    /// Unregisters a slot; returns its region and pin.
    ///
    /// - Complexity: O(v × s) for v values, and s slots pinned to each.
    @usableFromInline @discardableResult
    mutating func remove(slot: Int32) -> (region: DatabaseRegion, pin: ValuePin) {
        guard let entry = entries[Int(slot)] else { preconditionFailure("no pinned region at this slot") }
        entries[Int(slot)] = nil
        vacantSlots.append(slot)
        let table = CaseInsensitiveName(entry.pin.table)
        guard var columns = tables[table],
            let index = columns.firstIndex(where: { CaseInsensitiveName($0.name) == CaseInsensitiveName(entry.pin.column) })
        else { return (entry.region, entry.pin) }
        for value in entry.pin.values {
            columns[index].slotsByValue[value]?.removeAll { $0 == slot }
            if columns[index].slotsByValue[value]?.isEmpty == true { columns[index].slotsByValue[value] = nil }
        }
        columns[index].slots.remove(slot)
        if columns[index].slots.isEmpty { columns.remove(at: index) }
        tables[table] = columns.isEmpty ? nil : columns
        return (entry.region, entry.pin)
    }

    /// The region and pin at a slot.
    @usableFromInline
    func entry(atSlot slot: Int32) -> (region: DatabaseRegion, pin: ValuePin) {
        guard let entry = entries[Int(slot)] else { preconditionFailure("no pinned region at this slot") }
        return (entry.region, entry.pin)
    }

    /// Calls `body` with each slot whose region the event modifies and
    /// whose pin holds one of the row's values in its column (every pinned
    /// slot of a column whose values `values` does not know), each
    /// once; `examined` counts the slots looked at.
    ///
    /// - Parameter values: The values of the changed row in a column, on
    ///   the sides the event changes; nil when they are unknown.
    /// - Complexity: O(p + m) for p pinned columns of the table and m slots
    ///   pinned to the row's values (every slot of a column whose values
    ///   are unknown).
    @usableFromInline
    func forEachSlot(
        impactedBy event: DatabaseEvent, values: (String) -> [IndexedValue]?, examined: inout Int,
        _ body: (Int32) -> Void
    ) {
        guard !tables.isEmpty, let columns = tables[CaseInsensitiveName(event.kind.tableName)] else { return }
        for column in columns {
            guard let rowValues = values(column.name) else {
                for slot in column.slots {
                    examined += 1
                    if entries[Int(slot)]!.region.isModified(by: event) { body(slot) }
                }
                continue
            }
            for (position, value) in rowValues.enumerated() {
                guard let slots = column.slotsByValue[value] else { continue }
                for slot in slots {
                    examined += 1
                    let entry = entries[Int(slot)]!
                    // Reported for an earlier value of the row already.
                    if position > 0, rowValues[..<position].contains(where: entry.pin.values.contains) { continue }
                    if entry.region.isModified(by: event) { body(slot) }
                }
            }
        }
    }
}

extension DatabaseRegion {
    /// The region's part on one table, and the rest.
    @usableFromInline
    func split(onTable table: String) -> (table: DatabaseRegion, rest: DatabaseRegion) {
        guard let tableRegions else { return (DatabaseRegion(), self) }
        let name = CaseInsensitiveName(table)
        var rest = tableRegions
        guard let part = rest.removeValue(forKey: name) else { return (DatabaseRegion(), self) }
        return (DatabaseRegion(tableRegions: [name: part]), DatabaseRegion(tableRegions: rest))
    }
}
