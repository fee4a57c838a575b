/// One step of a ``SortedDifference``: an element found only in the left
/// sequence, only in the right sequence, or in both.
///
/// Changes come out of a sorted difference in ascending id order, so a
/// stream of changes is itself sorted.
///
/// ```swift
/// for change in SortedDifference(left: [1, 2, 3], right: [2, 3, 4]) {
///     switch change {
///     case .left(let id):         print("only left:", id)   // 1
///     case .common(let l, _):     print("both:", l)         // 2, 3
///     case .right(let id):        print("only right:", id)  // 4
///     }
/// }
/// ```
@frozen
public enum SortedDifferenceChange<Left, Right> {
    /// An element whose id appears only in the left sequence.
    case left(Left)

    /// An element whose id appears only in the right sequence.
    case right(Right)

    /// The left and right elements that share one id.
    case common(Left, Right)
}

extension SortedDifferenceChange: Equatable where Left: Equatable, Right: Equatable {}

extension SortedDifferenceChange: Hashable where Left: Hashable, Right: Hashable {}

extension SortedDifferenceChange: Sendable where Left: Sendable, Right: Sendable {}

extension SortedDifferenceChange: CustomStringConvertible {
    /// A textual form such as `left(1)`, `right(2)` or `common(3, 3)`.
    public var description: String {
        switch self {
        case .left(let element): "left(\(element))"
        case .right(let element): "right(\(element))"
        case .common(let left, let right): "common(\(left), \(right))"
        }
    }
}
