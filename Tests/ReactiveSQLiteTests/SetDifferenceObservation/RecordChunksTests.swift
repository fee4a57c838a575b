@testable import ReactiveSQLite
import TestSupport
import Testing

/// `RecordChunks`, the records of `trackingSetDifferences`, against a plain
/// array under seeded random reads, writes, insertions and removals.
@Suite struct RecordChunksTests {
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
