import Differences
import Testing
import TestSupport

/// The two ways `OrderedDifference` matches ids (a `Dictionary` below
/// `_partitionedMatchingThreshold` ids, partitions by hash value above)
/// agree on every input: the same matches, and the same `DuplicateIDError`
/// for ids that repeat.
@Suite(.onItsOwnThread) struct IDMatchingTests {
    /// An id whose hash value has three possible values: partitions and
    /// tables full of collisions, told apart by `==` only.
    struct Collider: Hashable, CustomStringConvertible {
        var value: Int
        func hash(into hasher: inout Hasher) { hasher.combine(value % 3) }
        var description: String { "\(value)" }
    }

    typealias Matching = Result<[Int], DuplicateIDError>

    static func matchings<ID: Hashable>(_ old: [ID], _ new: [ID]) -> (dictionary: Matching, partition: Matching) {
        (Result { () throws(DuplicateIDError) in try _matchIDsWithDictionary(old: old, new: new) },
         Result { () throws(DuplicateIDError) in try _matchIDsByPartition(old: old, new: new) })
    }

    /// Random ids, sometimes repeated (one collection in four has a
    /// duplicate, at a random place).
    static func randomIDs(_ generator: inout SplitMix64, maxCount: Int) -> [Int] {
        var ids = Array((0..<(2 * maxCount)).shuffled(using: &generator).prefix(Int.random(in: 0...maxCount, using: &generator)))
        if ids.count > 1, Int.random(in: 0..<4, using: &generator) == 0 {
            ids[Int.random(in: 0..<ids.count, using: &generator)] = ids.randomElement(using: &generator)!
        }
        return ids
    }

    /// Compares the two matchings on `trials` pairs of random id arrays of
    /// at most `maxCount` ids, checks the matches, and returns the number
    /// of pairs with a duplicate id.
    static func compareMatchings(trials: Int, maxCount: Int, seed: UInt64) -> Int {
        var generator = SplitMix64(seed: seed)
        var duplicateCount = 0
        for _ in 0..<trials {
            let old = randomIDs(&generator, maxCount: maxCount)
            let new = randomIDs(&generator, maxCount: maxCount)
            let (dictionary, partition) = matchings(old, new)
            #expect(dictionary == partition, "\(old.prefix(50)) -> \(new.prefix(50))")
            switch dictionary {
            case .failure:
                duplicateCount += 1
            case .success(let newToOld):
                // Every match has equal ids; the others are insertions.
                for (newOffset, oldOffset) in newToOld.enumerated() where oldOffset >= 0 {
                    #expect(old[oldOffset] == new[newOffset])
                }
                #expect(newToOld.filter { $0 < 0 }.count == Set(new).subtracting(old).count)
            }
        }
        return duplicateCount
    }

    @Test func partitionsAgreeWithTheDictionary() {
        let duplicateCount = Self.compareMatchings(trials: 2_000, maxCount: 40, seed: 0x1D5)
        // Both outcomes were exercised.
        #expect(duplicateCount > 200 && duplicateCount < 1_800)
    }

    /// Thousands of ids: several partitions (about 256 ids each), and
    /// duplicates that may fall in any of them.
    @Test func severalPartitionsAgreeWithTheDictionary() {
        let duplicateCount = Self.compareMatchings(trials: 60, maxCount: 3_000, seed: 0x9A47)
        #expect(duplicateCount > 5 && duplicateCount < 55)
    }

    @Test func collidingHashValuesAreToldApartByEquality() {
        var generator = SplitMix64(seed: 0xC011)
        for _ in 0..<500 {
            let old = Self.randomIDs(&generator, maxCount: 30).map(Collider.init)
            let new = Self.randomIDs(&generator, maxCount: 30).map(Collider.init)
            let (dictionary, partition) = Self.matchings(old, new)
            #expect(dictionary == partition, "\(old) -> \(new)")
        }
    }

    /// Several duplicates: the error names the one whose second occurrence
    /// comes first, in `old` before `new`, whatever the partitions.
    @Test func theFirstDuplicateIsReported() {
        let old = Array(0..<1_000) + [900, 5]
        let new = Array(0..<1_000) + [7, 3]
        let (dictionary, partition) = Self.matchings(old, new)
        #expect(dictionary == .failure(DuplicateIDError(collection: .old, id: "900")))
        #expect(partition == dictionary)
        let (newDictionary, newPartition) = Self.matchings(Array(0..<1_000), new)
        #expect(newDictionary == .failure(DuplicateIDError(collection: .new, id: "7")))
        #expect(newPartition == newDictionary)
    }

    /// Above the threshold, `OrderedDifference` goes through the partitions:
    /// a difference of 300 000 elements applies, and a duplicate throws.
    @Test func largeDifferencesUseThePartitions() throws {
        var generator = SplitMix64(seed: 0xB16)
        let count = 300_000
        #expect(2 * count >= _partitionedMatchingThreshold)
        let old = (0..<count).map { Item(id: $0, value: 0) }
        var new = old.filter { _ in Int.random(in: 0..<100, using: &generator) != 0 }
        for index in stride(from: 0, to: new.count, by: 97) { new[index].value = 1 }
        new.append(contentsOf: (count..<(count + 500)).map { Item(id: $0, value: 0) })
        new.swapAt(10, new.count - 600)  // two old elements: two moves
        let difference = OrderedDifference(from: old, to: new)
        #expect(old.applying(difference.collectionDifference) == new)
        #expect(difference.insertions.count == 500)
        #expect(difference.deletions.count == count - (new.count - 500))
        #expect(difference.moves.count == 2)
        var duplicated = new
        duplicated[123_456] = duplicated[7]
        #expect(throws: DuplicateIDError(collection: .new, id: "\(duplicated[7].id)")) {
            try OrderedDifference(checkingIDsFrom: old, to: duplicated)
        }
    }
}
