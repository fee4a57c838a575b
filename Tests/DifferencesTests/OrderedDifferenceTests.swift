import Differences
import Testing
import TestSupport

/// Applies a difference as DESIGN.md describes: remove the deletions and
/// move sources, insert the insertions and move destinations in ascending
/// order, then replace the updated values.
private func apply(_ difference: OrderedDifference<Item>, from old: [Item], to new: [Item]) -> [Item] {
    let removed = Set(difference.deletions).union(difference.moves.map(\.from))
    var result = old.indices.filter { !removed.contains($0) }.map { old[$0] }
    let destinations = (difference.insertions + difference.moves.map(\.to)).sorted()
    for offset in destinations { result.insert(new[offset], at: offset) }
    for offset in difference.updates { result[offset] = new[offset] }
    return result
}

/// The length of a longest strictly increasing subsequence, by brute force
/// over every subsequence.
private func bruteForceLongestIncreasingSubsequence(_ values: [Int]) -> Int {
    var best = 0
    for mask in 0..<(1 << values.count) {
        let subsequence = values.indices.filter { mask & (1 << $0) != 0 }.map { values[$0] }
        if zip(subsequence, subsequence.dropFirst()).allSatisfy({ $0 < $1 }) {
            best = max(best, subsequence.count)
        }
    }
    return best
}

/// A random collection of distinct ids, in random order.
private func randomCollection(maxCount: Int, range: Int, using generator: inout SplitMix64) -> [Item] {
    randomSortedIDs(maxCount: maxCount, range: range, using: &generator)
        .shuffled(using: &generator)
        .map { Item(id: $0, value: Int.random(in: 0..<2, using: &generator)) }
}

@Suite(.onItsOwnThread) struct OrderedDifferenceTests {
    @Test func reportsDeletionsInsertionsMovesAndUpdates() {
        let old = [Item(id: 0, value: 0), Item(id: 1, value: 0), Item(id: 2, value: 0), Item(id: 3, value: 0)]
        let new = [Item(id: 3, value: 0), Item(id: 0, value: 0), Item(id: 2, value: 1), Item(id: 4, value: 0)]
        let difference = OrderedDifference(from: old, to: new)
        #expect(difference.deletions == [1])
        #expect(difference.insertions == [3])
        #expect(difference.moves == [.init(from: 3, to: 0)])
        #expect(difference.updates == [2])
        #expect(!difference.isEmpty)
        #expect(apply(difference, from: old, to: new) == new)
        #expect(old.applying(difference.collectionDifference) == new)
        #expect(difference.description == "OrderedDifference(deletions: [1], insertions: [3], moves: [3->0], updates: [2])")
    }

    @Test func identicalCollectionsHaveAnEmptyDifference() {
        let items = (0..<10).map { Item(id: $0, value: $0) }
        let difference = OrderedDifference(from: items, to: items)
        #expect(difference.isEmpty)
        #expect(difference.collectionDifference.isEmpty)
        #expect(OrderedDifference(from: [Item](), to: []).isEmpty)
    }

    @Test func movedElementsWhoseValueChangedAreBothMovesAndUpdates() {
        let old = [Item(id: 0, value: 0), Item(id: 1, value: 0)]
        let new = [Item(id: 1, value: 5), Item(id: 0, value: 0)]
        let difference = OrderedDifference(from: old, to: new)
        #expect(difference.moves.count == 1)
        #expect(difference.updates == [0])
        #expect(old.applying(difference.collectionDifference) == new)
    }

    @Test func randomDifferencesApplyAndHaveMinimalMoves() {
        var generator = SplitMix64(seed: 20)
        for _ in 0..<5_000 {
            let old = randomCollection(maxCount: 10, range: 14, using: &generator)
            let new = randomCollection(maxCount: 10, range: 14, using: &generator)
            let difference = OrderedDifference(from: old, to: new)

            #expect(apply(difference, from: old, to: new) == new)
            #expect(old.applying(difference.collectionDifference) == new)

            // Minimal moves: the common elements outside a longest
            // increasing subsequence of their old offsets, in new order.
            let oldOffsets = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.id, $0) })
            let commonOldOffsets = new.compactMap { oldOffsets[$0.id] }
            let lis = bruteForceLongestIncreasingSubsequence(commonOldOffsets)
            #expect(difference.moves.count == commonOldOffsets.count - lis)

            // Offsets ascending, updates exact.
            #expect(difference.deletions == difference.deletions.sorted())
            #expect(difference.insertions == difference.insertions.sorted())
            #expect(difference.moves.map(\.to) == difference.moves.map(\.to).sorted())
            let expectedUpdates = new.indices.filter { offset in
                old.first { $0.id == new[offset].id }.map { $0 != new[offset] } ?? false
            }
            #expect(difference.updates == expectedUpdates)
            #expect(difference.isEmpty == (old == new))
        }
    }

    @Test func largeRandomDifferencesApply() {
        var generator = SplitMix64(seed: 21)
        for _ in 0..<200 {
            let old = randomCollection(maxCount: 300, range: 400, using: &generator)
            let new = randomCollection(maxCount: 300, range: 400, using: &generator)
            let difference = OrderedDifference(from: old, to: new)
            #expect(apply(difference, from: old, to: new) == new)
            #expect(old.applying(difference.collectionDifference) == new)
        }
    }

    @Test func theGeneralInitializerUsesItsClosures() {
        let old = [("a", 1), ("b", 2), ("c", 3)]
        let new = [("c", 3), ("a", 1), ("b", 5), ("d", 0)]
        let difference = OrderedDifference(
            from: old, to: new, identifiedBy: { $0.0 }, isEqual: { $0.1 == $1.1 })
        #expect(difference.deletions == [])
        #expect(difference.insertions == [3])
        #expect(difference.moves == [.init(from: 2, to: 0)])
        #expect(difference.updates == [2])
        let applied = old.applying(difference.collectionDifference)
        #expect(applied?.map(\.0) == new.map(\.0))
        #expect(applied?.map(\.1) == new.map(\.1))
    }

    /// Ids that may repeat (read from a database): `init(checkingIDsFrom:to:)`
    /// throws where `init(from:to:)` stops, and agrees with it otherwise.
    @Test func checkingIDsThrowsOnDuplicatesAndAgreesOtherwise() throws {
        let one = Item(id: 1, value: 0), two = Item(id: 2, value: 0), twoUpdated = Item(id: 2, value: 1)
        #expect(throws: DuplicateIDError(collection: .old, id: "1")) {
            try OrderedDifference(checkingIDsFrom: [one, one], to: [])
        }
        #expect(throws: DuplicateIDError(collection: .new, id: "2")) {
            try OrderedDifference(checkingIDsFrom: [], to: [two, twoUpdated])
        }
        // The second occurrence matches an old element: still a duplicate.
        #expect(throws: DuplicateIDError(collection: .new, id: "2")) {
            try OrderedDifference(checkingIDsFrom: [two], to: [two, twoUpdated])
        }
        #expect(
            DuplicateIDError(collection: .new, id: "2").description
                == "OrderedDifference: the new collection contains the id 2 twice. Ids must be unique.")
        var generator = SplitMix64(seed: 0x0D1F)
        for _ in 0..<500 {
            let old = (0..<8).filter { _ in generator.next() % 2 == 0 }.map { Item(id: $0, value: 0) }
            let new = old.filter { _ in generator.next() % 4 != 0 }.shuffled(using: &generator)
                .map { generator.next() % 5 == 0 ? Item(id: $0.id, value: 1) : $0 }
            #expect(try OrderedDifference(checkingIDsFrom: old, to: new) == OrderedDifference(from: old, to: new))
        }
    }
}
