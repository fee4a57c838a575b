/// The identification chosen by a `SortedDifference` initializer.
///
/// `SortedDifference` has one type for its three initializers, so the
/// choice is a stored value, and each id read switches on it. The
/// `comparable` and `identifiable` cases call no closure: they read the id
/// through a cast between types that the initializer proved equal, which
/// the optimizer resolves once the code is specialized. Only the general
/// initializer's `closures` case calls closures.
@usableFromInline
internal enum _SortedDifferenceIdentification<Left, Right, ID: Comparable>: _SortedMergeIdentification {
    /// `Left == Right == ID`: each element is its own id.
    case comparable
    /// `Left.ID == Right.ID == ID`: ids are `Identifiable.id`.
    case identifiable
    /// Ids given by closures.
    case closures(left: (Left) -> ID, right: (Right) -> ID)

    @inlinable @inline(__always)
    func leftID(_ element: Left) -> ID {
        switch self {
        case .comparable: _identity(element)
        case .identifiable: _identifiableID(element)
        case .closures(let leftID, _): leftID(element)
        }
    }

    @inlinable @inline(__always)
    func rightID(_ element: Right) -> ID {
        switch self {
        case .comparable: _identity(element)
        case .identifiable: _identifiableID(element)
        case .closures(_, let rightID): rightID(element)
        }
    }
}

// The two helpers below are casts between types that are equal at run time,
// as an initializer proved. Once the code is specialized for concrete types,
// the optimizer resolves them, and nothing of the casts remains. In
// unspecialized code (debug builds) they are runtime casts.

/// Returns `value` as an `ID`; the caller guarantees `T == ID`.
@inlinable @inline(__always)
internal func _identity<T, ID>(_ value: T) -> ID {
    value as! ID
}

/// Returns `element.id` as an `ID`; the caller guarantees that `Element` is
/// `Identifiable` with `Element.ID == ID`.
@inlinable @inline(__always)
internal func _identifiableID<Element, ID>(_ element: Element) -> ID {
    func id<E: Identifiable>(_: E.Type) -> ID {
        _identity((_identity(element) as E).id)
    }
    // A cast of the metatype, not of the element: no existential box.
    let type: any Identifiable.Type = Element.self as! any Identifiable.Type
    return id(type)
}
