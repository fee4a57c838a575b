@testable import ReactiveSQLite
import TestSupport
import Testing

/// `RecordChunks`, the records of `trackingSetDifferences`, against a plain
/// array under seeded random reads, writes, insertions and removals.
@Suite(.onItsOwnThread) struct RecordChunksTests {
    @Test(arguments: [0, 1, 5_000] as [Int]) func recordsFollowAnArray(initialCount: Int) {
        var random = SplitMix64(seed: UInt64(initialCount) + 7)
        var model = Array(0..<initialCount).map { "r\($0)" }
        var chunks = RecordChunks(model)
        var next = initialCount
        for step in 0..<3_000 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !model.isEmpty:
                let offset = Int.random(in: 0..<model.count, using: &random)
                model.remove(at: offset)
                chunks.remove(at: offset)
            case 1:
                let offset = Int.random(in: 0...model.count, using: &random)
                model.insert("n\(next)", at: offset)
                chunks.insert("n\(next)", at: offset)
                next += 1
            case 2 where !model.isEmpty:
                let offset = Int.random(in: 0..<model.count, using: &random)
                model[offset] += "'"
                chunks[offset] += "'"
            default:
                if !model.isEmpty {
                    let offset = Int.random(in: 0..<model.count, using: &random)
                    guard chunks[offset] == model[offset] else {
                        Issue.record("step \(step): \(chunks[offset]) != \(model[offset]) at \(offset)")
                        return
                    }
                }
            }
            guard chunks.count == model.count else {
                Issue.record("step \(step): \(chunks.count) records for \(model.count)")
                return
            }
        }
        #expect(chunks.array == model)
        var iterator = chunks.makeIterator()
        #expect(model.allSatisfy { $0 == iterator.next() } && iterator.next() == nil)
    }

    /// Batches of removals and insertions (`replace`), as a fetch that
    /// refetched some rows makes them: runs of neighbours (the rows of a
    /// page), scattered rows, whole chunks and more, at the ends too.
    @Test(arguments: [0, 1, 3, 5_000] as [Int]) func batchesFollowAnArray(initialCount: Int) {
        var random = SplitMix64(seed: UInt64(initialCount) + 11)
        var model = Array(0..<initialCount).map { "r\($0)" }
        var chunks = RecordChunks(model)
        var next = initialCount
        for step in 0..<400 {
            // Offsets to remove: a run, or scattered ones.
            var removed = Set<Int>()
            if !model.isEmpty {
                if Bool.random(using: &random) {
                    let length = Int.random(in: 0...min(model.count, 3_000), using: &random)
                    let start = Int.random(in: 0...(model.count - length), using: &random)
                    removed.formUnion(start..<(start + length))
                } else {
                    for _ in 0..<Int.random(in: 0...20, using: &random) {
                        removed.insert(Int.random(in: 0..<model.count, using: &random))
                    }
                }
            }
            let removedOffsets = removed.sorted()
            var result = model
            for offset in removedOffsets.reversed() { result.remove(at: offset) }
            // Offsets of the result to insert at: a run, or scattered ones.
            let insertedCount = Int.random(in: 0...(Bool.random(using: &random) ? 2_500 : 20), using: &random)
            var positions = Set<Int>()
            if Bool.random(using: &random) {
                let start = Int.random(in: 0...result.count, using: &random)
                positions.formUnion(start..<(start + insertedCount))
            } else {
                while positions.count < insertedCount {
                    positions.insert(Int.random(in: 0...(result.count + insertedCount - 1), using: &random))
                }
            }
            var inserted: [(offset: Int, record: String)] = []
            for offset in positions.sorted() {
                inserted.append((offset, "n\(next)"))
                next += 1
            }
            // Valid final offsets: below the final count.
            let finalCount = result.count + inserted.count
            inserted = inserted.filter { $0.offset < finalCount }
            for (offset, record) in inserted { result.insert(record, at: offset) }
            chunks.replace(removing: removedOffsets, inserting: inserted)
            model = result
            guard chunks.count == model.count, chunks.array == model else {
                Issue.record("step \(step): the records differ from the array's")
                return
            }
        }
        var iterator = chunks.makeIterator()
        #expect(model.allSatisfy { $0 == iterator.next() } && iterator.next() == nil)
    }

    /// The ends of batches: every record removed, records inserted into
    /// none, nothing at all.
    @Test func batchesAtTheEnds() {
        var chunks = RecordChunks(["a", "b"])
        chunks.replace(removing: [0, 1], inserting: [])
        #expect(chunks.count == 0 && chunks.array.isEmpty)
        chunks.replace(removing: [], inserting: [(0, "c"), (1, "d")])
        #expect(chunks.array == ["c", "d"])
        chunks.replace(removing: [], inserting: [])
        chunks.replace(removing: [1], inserting: [(0, "e"), (2, "f")])
        #expect(chunks.array == ["e", "c", "f"])
    }

    @Test func theArrayTheyWereMadeFromDoesNotChange() {
        let array = (0..<3_000).map { $0 }
        var chunks = RecordChunks(array)
        chunks[10] = -1
        chunks.remove(at: 0)
        chunks.insert(-2, at: 2_000)
        #expect(array == Array(0..<3_000))
        #expect(chunks.array == Array(1..<10) + [-1] + Array(11..<2_001) + [-2] + Array(2_001..<3_000))
    }
}
