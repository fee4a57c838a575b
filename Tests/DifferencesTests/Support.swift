import Differences
import TestSupport

/// An identifiable element with a value, as a row with a primary key.
struct Item: Identifiable, Hashable, Sendable, CustomStringConvertible {
    var id: Int
    var value: Int
    var description: String { "\(id):\(value)" }
}

/// Every subset of `0..<count`, as sorted arrays.
func subsets(of count: Int) -> [[Int]] {
    (0..<(1 << count)).map { mask in (0..<count).filter { mask & (1 << $0) != 0 } }
}

/// A random sorted array of distinct ids taken from `0..<range`.
func randomSortedIDs(maxCount: Int, range: Int, using generator: inout SplitMix64) -> [Int] {
    let count = Int.random(in: 0...maxCount, using: &generator)
    var ids = Set<Int>()
    while ids.count < min(count, range) { ids.insert(Int.random(in: 0..<range, using: &generator)) }
    return ids.sorted()
}

/// Counts the calls made through an instrumented id or sequence.
final class Counter {
    var value = 0
}

/// An id that counts its comparisons (`<` and `==`).
struct CountingID: Comparable, CustomStringConvertible {
    let value: Int
    let counter: Counter

    static func < (lhs: CountingID, rhs: CountingID) -> Bool {
        lhs.counter.value += 1
        return lhs.value < rhs.value
    }

    static func == (lhs: CountingID, rhs: CountingID) -> Bool {
        lhs.counter.value += 1
        return lhs.value == rhs.value
    }

    var description: String { "\(value)" }
}

/// A single-pass sequence that records how many elements were read, and
/// fails the test run if it is asked for an element after it returned nil.
final class SinglePassLog {
    var reads = 0
    var callsAfterEnd = 0
    var iteratorsMade = 0
}

struct SinglePassSequence<Element>: Sequence {
    let elements: [Element]
    let log: SinglePassLog

    func makeIterator() -> Iterator {
        log.iteratorsMade += 1
        return Iterator(elements: elements, log: log)
    }

    struct Iterator: IteratorProtocol {
        let elements: [Element]
        let log: SinglePassLog
        var index = 0
        var ended = false

        mutating func next() -> Element? {
            if ended {
                log.callsAfterEnd += 1
                return nil
            }
            guard index < elements.count else {
                ended = true
                return nil
            }
            defer { index += 1 }
            log.reads += 1
            return elements[index]
        }
    }
}
