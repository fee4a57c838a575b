import Differences
import Testing
import TestSupport

/// Applies a set difference to a snapshot sorted by id.
private func apply(_ difference: SetDifference<Item>, to snapshot: [Item]) -> [Item] {
    var byID = Dictionary(uniqueKeysWithValues: snapshot.map { ($0.id, $0) })
    for element in difference.deleted { byID[element.id] = nil }
    for element in difference.updated { byID[element.id] = element }
    for element in difference.inserted { byID[element.id] = element }
    return byID.values.sorted { $0.id < $1.id }
}

/// A random snapshot sorted by id, with small values so that updates and
/// unchanged elements both happen.
private func randomSnapshot(using generator: inout SplitMix64) -> [Item] {
    randomSortedIDs(maxCount: 12, range: 16, using: &generator)
        .map { Item(id: $0, value: Int.random(in: 0..<3, using: &generator)) }
}

/// The set difference that a scanner of `Item`s reports for the changes of a
/// sorted difference.
private func setDifference(_ changes: SortedDifference<[Item], [Item], Int>) -> SetDifference<Item> {
    var difference = SetDifference<Item>()
    for change in changes {
        switch change {
        case .left(let old): difference.deleted.append(old)
        case .right(let new): difference.inserted.append(new)
        case .common(let old, let new) where old != new: difference.updated.append(new)
        case .common: break
        }
    }
    return difference
}

@Suite(.onItsOwnThread) struct SetDifferenceScannerTests {
    @Test func everyPairOfSubsetsOfFourIdsWithEveryChangeOfValues() {
        for oldIDs in subsets(of: 4) {
            for newIDs in subsets(of: 4) {
                let commonIDs = oldIDs.filter(newIDs.contains)
                // Each subset of the common ids gets a new value.
                for changed in subsets(of: commonIDs.count) {
                    let changedIDs = changed.map { commonIDs[$0] }
                    let old = oldIDs.map { Item(id: $0, value: 0) }
                    let new = newIDs.map { Item(id: $0, value: changedIDs.contains($0) ? 1 : 0) }
                    var scanner = SetDifferenceScanner(initialElements: old)
                    let difference = scanner.diff(to: new)
                    #expect(difference.inserted == new.filter { !oldIDs.contains($0.id) })
                    #expect(difference.updated == new.filter { changedIDs.contains($0.id) })
                    #expect(difference.deleted == old.filter { !newIDs.contains($0.id) })
                    #expect(difference.isEmpty == (oldIDs == newIDs && changedIDs.isEmpty))
                    #expect(scanner.elements == new)
                }
            }
        }
    }

    @Test func theFirstDiffStartsFromTheInitialElements() {
        var empty = SetDifferenceScanner<Item, Int>()
        #expect(empty.diff(to: [Item(id: 1, value: 0)]) == SetDifference(inserted: [Item(id: 1, value: 0)]))

        var scanner = SetDifferenceScanner(initialElements: [Item(id: 1, value: 0), Item(id: 2, value: 0)])
        let difference = scanner.diff(to: [Item(id: 2, value: 0), Item(id: 3, value: 0)])
        #expect(difference == SetDifference(inserted: [Item(id: 3, value: 0)], deleted: [Item(id: 1, value: 0)]))
        #expect(scanner.diff(to: scanner.elements).isEmpty)
    }

    @Test func updateElementDecidesWhatIsReportedAndWhatIsKept() {
        // updateElement adds the old and new values: the scanner must keep
        // the sum, report it, and later delete it.
        var scanner = SetDifferenceScanner(
            initialElements: [Item(id: 1, value: 10), Item(id: 2, value: 20)],
            updateElement: { old, new in Item(id: old.id, value: old.value + new.value) })
        let first = scanner.diff(to: [Item(id: 1, value: 1), Item(id: 2, value: 20)])
        #expect(first == SetDifference(updated: [Item(id: 1, value: 11)]))
        #expect(scanner.elements == [Item(id: 1, value: 11), Item(id: 2, value: 20)])

        // Compared with the kept 11, the value 11 is not an update.
        let second = scanner.diff(to: [Item(id: 1, value: 11)])
        #expect(second == SetDifference(deleted: [Item(id: 2, value: 20)]))

        let third = scanner.diff(to: [])
        #expect(third == SetDifference(deleted: [Item(id: 1, value: 11)]))
    }

    @Test func unchangedElementsKeepTheirPreviousInstance() {
        let first = Tagged(id: 1, value: 0, tag: "first")
        var scanner = SetDifferenceScanner(initialElements: [first])
        let difference = scanner.diff(to: [Tagged(id: 1, value: 0, tag: "second")])
        #expect(difference.isEmpty)
        #expect(scanner.elements.map(\.tag) == ["first"])
        let update = scanner.diff(to: [Tagged(id: 1, value: 1, tag: "third")])
        #expect(update.updated.map(\.tag) == ["third"])
        #expect(scanner.elements.map(\.tag) == ["third"])
    }

    @Test func theGeneralInitializerUsesItsClosures() {
        // Tuples are neither Identifiable nor Equatable.
        var scanner = SetDifferenceScanner<(key: String, count: Int), String>(
            initialElements: [("a", 1), ("b", 2)],
            id: { $0.key },
            isUpdated: { $0.count != $1.count })
        let difference = scanner.diff(to: [("b", 3), ("c", 1)])
        #expect(difference.inserted.map(\.key) == ["c"])
        #expect(difference.updated.map(\.key) == ["b"])
        #expect(difference.updated.map(\.count) == [3])
        #expect(difference.deleted.map(\.key) == ["a"])
    }

    @Test func applyingADifferenceToTheOldSnapshotGivesTheNewOne() {
        var generator = SplitMix64(seed: 10)
        for _ in 0..<5_000 {
            let old = randomSnapshot(using: &generator)
            let new = randomSnapshot(using: &generator)
            var scanner = SetDifferenceScanner(initialElements: old)
            let difference = scanner.diff(to: new)
            #expect(apply(difference, to: old) == new)
            #expect(scanner.elements == new)
            // Each array is in id order, and ids are where they belong.
            for elements in [difference.inserted, difference.updated, difference.deleted] {
                #expect(elements.map(\.id) == elements.map(\.id).sorted())
            }
            #expect(difference.deleted.allSatisfy { d in !new.contains { $0.id == d.id } })
            #expect(difference.inserted.allSatisfy { i in !old.contains { $0.id == i.id } })
        }
    }

    @Test func aLongSequenceOfSnapshotsReportsEachElementsHistory() {
        var generator = SplitMix64(seed: 11)
        var scanner = SetDifferenceScanner<Item, Int>()
        var previous: [Int: Int] = [:]  // id -> value
        var reported: [Int: [String]] = [:]
        var expected: [Int: [String]] = [:]
        for _ in 0..<3_000 {
            let snapshot = randomSnapshot(using: &generator)
            let difference = scanner.diff(to: snapshot)
            for item in difference.inserted { reported[item.id, default: []].append("+\(item.value)") }
            for item in difference.updated { reported[item.id, default: []].append("~\(item.value)") }
            for item in difference.deleted { reported[item.id, default: []].append("-\(item.value)") }

            // Brute force: compare dictionaries.
            let current = Dictionary(uniqueKeysWithValues: snapshot.map { ($0.id, $0.value) })
            for id in Set(previous.keys).union(current.keys).sorted() {
                switch (previous[id], current[id]) {
                case (nil, let new?): expected[id, default: []].append("+\(new)")
                case (let old?, nil): expected[id, default: []].append("-\(old)")
                case (let old?, let new?) where old != new: expected[id, default: []].append("~\(new)")
                default: break
                }
            }
            previous = current
        }
        #expect(reported == expected)
        #expect(reported.values.map(\.count).reduce(0, +) > 10_000)
    }

    @Test func agreesWithTheSortedDifferenceOfItsSnapshots() {
        // The scanner runs the eager merge of two arrays, SortedDifference
        // the lazy merge of two iterators: same changes, in the same order.
        var generator = SplitMix64(seed: 12)
        for _ in 0..<2_000 {
            let old = randomSnapshot(using: &generator)
            let new = randomSnapshot(using: &generator)
            var scanner = SetDifferenceScanner(initialElements: old)
            #expect(scanner.diff(to: new) == setDifference(SortedDifference(left: old, right: new)))
        }
    }

    @Test func makesAtMostTwoIDComparisonsPerElement() {
        // In debug builds the count includes the checks of sortedness.
        var generator = SplitMix64(seed: 13)
        let counter = Counter()
        var scanner = SetDifferenceScanner<Item, CountingID>(
            id: { CountingID(value: $0.id, counter: counter) },
            isUpdated: { $0 != $1 })
        var kept: [Item] = []
        for _ in 0..<1_000 {
            let new = randomSortedIDs(maxCount: 60, range: 100, using: &generator)
                .map { Item(id: $0, value: Int.random(in: 0..<2, using: &generator)) }
            counter.value = 0
            _ = scanner.diff(to: new)
            #expect(counter.value <= 2 * (kept.count + new.count), "old \(kept), new \(new)")
            kept = new
        }
    }

    @Test func readsTheIDOfEachElementAtMostOncePerDiff() {
        var generator = SplitMix64(seed: 14)
        var calls = 0
        var scanner = SetDifferenceScanner<Item, Int>(
            id: { calls += 1; return $0.id },
            isUpdated: { $0 != $1 })
        var kept: [Item] = []
        for _ in 0..<1_000 {
            let new = randomSnapshot(using: &generator)
            calls = 0
            _ = scanner.diff(to: new)
            #expect(calls <= kept.count + new.count)
            kept = new
        }
    }

    #if !DEBUG
    @Test func unsortedSnapshotsNeverTrapAndKeepEveryNewElementInRelease() {
        var generator = SplitMix64(seed: 15)
        for _ in 0..<2_000 {
            func randomUnsorted() -> [Item] {
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    Item(id: Int.random(in: 0..<6, using: &generator), value: Int.random(in: 0..<2, using: &generator))
                }
            }
            let old = randomUnsorted()
            let new = randomUnsorted()
            var scanner = SetDifferenceScanner(initialElements: old)
            let difference = scanner.diff(to: new)
            // The same unspecified changes as the lazy merge: every element
            // once, each side in its input order.
            #expect(difference == setDifference(SortedDifference(left: old, right: new)))
            #expect(scanner.elements.count == new.count)
        }
    }
    #endif
}

/// An element whose equality ignores its tag: the tag shows which instance
/// the scanner kept.
struct Tagged: Identifiable, Equatable {
    var id: Int
    var value: Int
    var tag: String

    static func == (lhs: Tagged, rhs: Tagged) -> Bool {
        lhs.id == rhs.id && lhs.value == rhs.value
    }
}
