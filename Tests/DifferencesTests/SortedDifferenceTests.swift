import Differences
import Testing
import TestSupport

/// The expected difference of two sorted id arrays: their ascending merge.
private func expectedChanges(_ left: [Int], _ right: [Int]) -> [SortedDifferenceChange<Int, Int>] {
    Set(left).union(right).sorted().map { id in
        switch (left.contains(id), right.contains(id)) {
        case (true, true): .common(id, id)
        case (true, false): .left(id)
        default: .right(id)
        }
    }
}

@Suite(.onItsOwnThread) struct SortedDifferenceTests {
    @Test func everyPairOfSubsetsOfFourIdsGivesTheirAscendingMerge() {
        for left in subsets(of: 4) {
            for right in subsets(of: 4) {
                let changes = Array(SortedDifference(left: left, right: right))
                #expect(changes == expectedChanges(left, right), "left \(left), right \(right)")
            }
        }
    }

    @Test func theThreeInitializersAgree() {
        var generator = SplitMix64(seed: 1)
        for _ in 0..<500 {
            let leftIDs = randomSortedIDs(maxCount: 20, range: 40, using: &generator)
            let rightIDs = randomSortedIDs(maxCount: 20, range: 40, using: &generator)
            let expected = expectedChanges(leftIDs, rightIDs)

            let comparable = Array(SortedDifference(left: leftIDs, right: rightIDs))
            #expect(comparable == expected)

            // Identifiable elements of two different types.
            let items = leftIDs.map { Item(id: $0, value: -$0) }
            let strings = rightIDs.map { IdentifiedString(id: $0, text: "#\($0)") }
            let identifiable = SortedDifference(left: items, right: strings).map(ids)
            #expect(identifiable == expected)

            // Closures, over a single-pass sequence and an array.
            let log = SinglePassLog()
            let closures = SortedDifference(
                left: SinglePassSequence(elements: items, log: log), identifiedBy: { $0.id },
                right: strings, identifiedBy: { $0.id }
            ).map(ids)
            #expect(closures == expected)
        }
    }

    @Test func readsEachInputOnceInOrderAndOnlyAsFarAsIterated() {
        let leftLog = SinglePassLog()
        let rightLog = SinglePassLog()
        let left = SinglePassSequence(elements: [1, 3, 5, 7], log: leftLog)
        let right = SinglePassSequence(elements: [2, 3, 4], log: rightLog)
        let difference = SortedDifference(left: left, right: right)
        #expect(leftLog.iteratorsMade == 0 && rightLog.iteratorsMade == 0)

        var iterator = difference.makeIterator()
        #expect(leftLog.reads == 0 && rightLog.reads == 0)
        #expect(iterator.next() == .left(1))  // needs 1 and 2
        #expect(leftLog.reads == 1 && rightLog.reads == 1)
        #expect(iterator.next() == .right(2))  // needs 3
        #expect(leftLog.reads == 2 && rightLog.reads == 1)
        #expect(iterator.next() == .common(3, 3))  // needs the right 3
        #expect(leftLog.reads == 2 && rightLog.reads == 2)
        #expect(iterator.next() == .right(4))
        #expect(iterator.next() == .left(5))
        #expect(iterator.next() == .left(7))
        #expect(iterator.next() == nil)
        #expect(iterator.next() == nil)
        #expect(iterator.next() == nil)
        #expect(leftLog.reads == 4 && rightLog.reads == 3)
        #expect(leftLog.iteratorsMade == 1 && rightLog.iteratorsMade == 1)
        #expect(leftLog.callsAfterEnd == 0 && rightLog.callsAfterEnd == 0)
    }

    @Test func neverAsksAnExhaustedInputAgain() {
        var generator = SplitMix64(seed: 2)
        for _ in 0..<1_000 {
            let leftLog = SinglePassLog()
            let rightLog = SinglePassLog()
            let leftIDs = randomSortedIDs(maxCount: 8, range: 16, using: &generator)
            let rightIDs = randomSortedIDs(maxCount: 8, range: 16, using: &generator)
            var iterator = SortedDifference(
                left: SinglePassSequence(elements: leftIDs, log: leftLog),
                right: SinglePassSequence(elements: rightIDs, log: rightLog)
            ).makeIterator()
            var changes: [SortedDifferenceChange<Int, Int>] = []
            while let change = iterator.next() { changes.append(change) }
            for _ in 0..<3 { #expect(iterator.next() == nil) }
            #expect(changes == expectedChanges(leftIDs, rightIDs))
            #expect(leftLog.callsAfterEnd == 0 && rightLog.callsAfterEnd == 0)
            #expect(leftLog.reads == leftIDs.count && rightLog.reads == rightIDs.count)
        }
    }

    @Test func makesAtMostTwoIDComparisonsPerElement() {
        // Every pair of subsets of 8 ids, then random longer inputs. In debug
        // builds the count includes the checks of sortedness.
        var cases: [([Int], [Int])] = []
        let all = subsets(of: 8)
        for left in all where left.count % 2 == 0 {
            for right in all { cases.append((left, right)) }
        }
        var generator = SplitMix64(seed: 3)
        for _ in 0..<500 {
            cases.append((
                randomSortedIDs(maxCount: 200, range: 400, using: &generator),
                randomSortedIDs(maxCount: 200, range: 400, using: &generator)))
        }
        var worst = 0.0
        for (left, right) in cases {
            let counter = Counter()
            let difference = SortedDifference(
                left: left.map { CountingID(value: $0, counter: counter) },
                right: right.map { CountingID(value: $0, counter: counter) })
            var count = 0
            for _ in difference { count += 1 }
            #expect(count == Set(left).union(right).count)
            #expect(counter.value <= 2 * (left.count + right.count), "left \(left), right \(right)")
            if left.count + right.count > 0 {
                worst = max(worst, Double(counter.value) / Double(left.count + right.count))
            }
        }
        #expect(worst <= 2)
    }

    @Test func changesAreEquatableAndDescribeThemselves() {
        let change: SortedDifferenceChange<Int, String> = .common(1, "1")
        #expect(change == .common(1, "1"))
        #expect(change != .common(1, "2"))
        #expect(change != .common(2, "1"))
        #expect(change != .left(1))
        #expect(SortedDifferenceChange<Int, String>.left(1) != .right("1"))
        #expect(SortedDifferenceChange<Int, String>.right("2").description == "right(2)")
    }

    #if !DEBUG
    @Test func unsortedInputsStillYieldEveryElementExactlyOnceInRelease() {
        var generator = SplitMix64(seed: 4)
        for _ in 0..<2_000 {
            let left = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Int.random(in: 0..<6, using: &generator) }
            let right = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Int.random(in: 0..<6, using: &generator) }
            var lefts: [Int] = []
            var rights: [Int] = []
            for change in SortedDifference(left: left, right: right) {
                switch change {
                case .left(let l): lefts.append(l)
                case .right(let r): rights.append(r)
                case .common(let l, let r):
                    lefts.append(l)
                    rights.append(r)
                }
            }
            // Every element once, each side in its input order.
            #expect(lefts == left)
            #expect(rights == right)
        }
    }
    #endif
}

/// The ids of a change of items and identified strings.
private func ids(_ change: SortedDifferenceChange<Item, IdentifiedString>) -> SortedDifferenceChange<Int, Int> {
    switch change {
    case .left(let item): .left(item.id)
    case .right(let string): .right(string.id)
    case .common(let item, let string): .common(item.id, string.id)
    }
}

/// An identifiable type distinct from `Item`, for differences of two types.
struct IdentifiedString: Identifiable {
    var id: Int
    var text: String
}

// Sendable conformance is a compile-time property: this declaration does not
// build when `SortedDifferenceChange` of Sendable elements stops being Sendable.
private let sortedDifferenceChangeIsSendable: any Sendable = SortedDifferenceChange<Int, String>.common(1, "1")
