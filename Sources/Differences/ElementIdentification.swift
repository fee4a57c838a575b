/// How the set and ordered differences identify elements and tell an
/// updated element from an unchanged one.
///
/// The algorithms are generic over this protocol so that the
/// `Identifiable & Equatable` conveniences read `id` and `!=` statically
/// (inlined once specialized); only the general initializers call closures.
@usableFromInline
internal protocol _ElementIdentification {
    associatedtype Element
    associatedtype ID

    func id(of element: Element) -> ID
    func isUpdated(_ old: Element, _ new: Element) -> Bool
}

/// `Identifiable.id`, and `!=`.
@usableFromInline
internal struct _IdentifiableEquatableIdentification<Element: Identifiable & Equatable>: _ElementIdentification {
    @inlinable init() {}
    @inlinable @inline(__always) func id(of element: Element) -> Element.ID { element.id }
    @inlinable @inline(__always) func isUpdated(_ old: Element, _ new: Element) -> Bool { old != new }
}

/// Ids and updates given by closures.
@usableFromInline
internal struct _ClosureIdentification<Element, ID>: _ElementIdentification {
    @usableFromInline let idClosure: (Element) -> ID
    @usableFromInline let isUpdatedClosure: (Element, Element) -> Bool

    @inlinable
    init(id: @escaping (Element) -> ID, isUpdated: @escaping (Element, Element) -> Bool) {
        self.idClosure = id
        self.isUpdatedClosure = isUpdated
    }

    @inlinable @inline(__always) func id(of element: Element) -> ID { idClosure(element) }
    @inlinable @inline(__always) func isUpdated(_ old: Element, _ new: Element) -> Bool { isUpdatedClosure(old, new) }
}

// A sorted merge of two snapshots of one element type reads ids the same way
// on both sides.

extension _IdentifiableEquatableIdentification: _SortedMergeIdentification where Element.ID: Comparable {
    @inlinable @inline(__always) func leftID(_ element: Element) -> Element.ID { element.id }
    @inlinable @inline(__always) func rightID(_ element: Element) -> Element.ID { element.id }
}

extension _ClosureIdentification: _SortedMergeIdentification where ID: Comparable {
    @inlinable @inline(__always) func leftID(_ element: Element) -> ID { idClosure(element) }
    @inlinable @inline(__always) func rightID(_ element: Element) -> ID { idClosure(element) }
}
