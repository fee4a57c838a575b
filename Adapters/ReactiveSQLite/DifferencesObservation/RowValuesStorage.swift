/// A chunk of a `RowValues`: values, row after row, in one allocation that
/// this object owns.
///
/// Unlike an array, it lets a fetch append a row with one capacity check
/// (no uniqueness check per value), a row of a previous fetch read its
/// values through a pointer with no reference counting
/// (`StatementRow`), and its release skip the values that hold no
/// reference (integers, reals, NULL), with no call per value.
///
/// `@unchecked Sendable`: a storage is mutated only through the one
/// `RowValues` that holds the only reference to it, as its open chunk
/// (`RowValues` checks `isKnownUniquelyReferenced` before each mutation,
/// and copies a shared storage first). Once shared (by a `KeyedRows`, a
/// `StatementRow`, a copy of the `RowValues`, other rows that share the
/// chunk) it never changes again: every thread only reads it.
final class RowValuesStorage: @unchecked Sendable {
    /// The values, `count` of them initialized, room for `capacity`.
    private(set) var base: UnsafeMutablePointer<DatabaseValue>
    /// The number of initialized values.
    private(set) var count = 0
    /// The number of values the allocation holds.
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        // Integers, reals and NULL hold no reference: nothing to release.
        for index in 0..<count where base[index].holdsReference {
            (base + index).deinitialize(count: 1)
        }
        base.deallocate()
    }

    /// Makes room for `newCapacity` values when the capacity is less: a new
    /// allocation, the values moved there.
    ///
    /// - Complexity: O(n) when it grows, where n is the number of values.
    @inline(__always)
    func reserveCapacity(exactly newCapacity: Int) {
        guard newCapacity > capacity else { return }
        grow(to: newCapacity)
    }

    @inline(never)
    private func grow(to newCapacity: Int) {
        let newBase = UnsafeMutablePointer<DatabaseValue>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends a value; the capacity suffices (see `reserveCapacity(exactly:)`).
    @inline(__always)
    func appendAssumingCapacity(_ value: consuming DatabaseValue) {
        assert(count < capacity, "RowValuesStorage: appended beyond its capacity")
        (base + count).initialize(to: value)
        count += 1
    }

    /// Appends `count` values that `initialize` initializes, given where
    /// they go; the capacity suffices.
    @inline(__always)
    func appendAssumingCapacity(count newCount: Int, _ initialize: (UnsafeMutablePointer<DatabaseValue>) -> Void) {
        assert(count + newCount <= capacity, "RowValuesStorage: appended beyond its capacity")
        initialize(base + count)
        count += newCount
    }

    /// Appends copies of `values`; the capacity suffices.
    @inline(__always)
    func appendAssumingCapacity(contentsOf values: UnsafeBufferPointer<DatabaseValue>) {
        guard let source = values.baseAddress else { return }
        assert(count + values.count <= capacity, "RowValuesStorage: appended beyond its capacity")
        (base + count).initialize(from: source, count: values.count)
        count += values.count
    }

    /// A storage with copies of the values, and room for `capacity` values.
    func copy(capacity: Int) -> RowValuesStorage {
        let copy = RowValuesStorage(capacity: max(capacity, count))
        copy.appendAssumingCapacity(contentsOf: values)
        return copy
    }

    /// The initialized values, in place. Valid while the storage is alive,
    /// and does not change (it is shared, or its owner does not mutate it).
    var values: UnsafeBufferPointer<DatabaseValue> {
        UnsafeBufferPointer(start: base, count: count)
    }
}

extension DatabaseValue {
    /// Whether the value holds a reference (a text or blob), which its
    /// deinitialization releases.
    @inline(__always)
    fileprivate var holdsReference: Bool {
        switch representation {
        case .storage(.null), .storage(.integer), .storage(.real): false
        case .storage(.text), .storage(.blob), .invalidUTF8Text: true
        }
    }
}
