import Foundation
@testable import ReactiveSQLite
import Testing
import TestSupport

/// `EncodedRows` against a dictionary: random insertions, replacements and
/// removals, rows built in any order, and values of every storage class.
@Suite(.onItsOwnThread) struct EncodedRowsTests {
    static func randomValues(using random: inout SplitMix64) -> [DatabaseValue] {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in
            switch Int.random(in: 0..<8, using: &random) {
            case 0: .null
            case 1: DatabaseValue(storage: .integer(Int64.random(in: -200...200, using: &random)))
            case 2: DatabaseValue(storage: .integer(Int64.random(in: Int64.min...Int64.max, using: &random)))
            case 3: DatabaseValue(storage: .integer(Int64.random(in: -70_000...70_000, using: &random)))
            case 4: DatabaseValue(storage: .real(Double.random(in: -1e9...1e9, using: &random)))
            case 5: DatabaseValue(storage: .text(String(repeating: "é", count: Int.random(in: 0...200, using: &random))))
            case 6: DatabaseValue(textBytes: [0x63, 0x61, 0x66, 0xE9])
            default: DatabaseValue(storage: .blob(Data((0..<Int.random(in: 0...300, using: &random)).map { UInt8($0 % 256) })))
            }
        }
    }

    static func encoded(_ values: [DatabaseValue]) -> [UInt8] {
        var bytes: [UInt8] = []
        EncodedRows.encode(values, into: &bytes)
        return bytes
    }

    static func contents(_ rows: EncodedRows) -> [Int64: [UInt8]] {
        var contents: [Int64: [UInt8]] = [:]
        var previous: Int64?
        rows.forEach { row in
            #expect(previous.map { $0 < row.key } ?? true, "keys in ascending order")
            previous = row.key
            contents[row.key] = Array(row.encoded)
        }
        return contents
    }

    @Test func valuesComeBackAsTheyWere() {
        var random = SplitMix64(seed: 1)
        for _ in 0..<500 {
            let values = Self.randomValues(using: &random)
            let decoded = EncodedRows.decode(Self.encoded(values)[...])
            #expect(decoded.count == values.count)
            for (old, new) in zip(values, decoded) { #expect(new.isStored(as: old) && new.isInvalidUTF8Text == old.isInvalidUTF8Text) }
            // The key, kept apart, goes back in its place.
            let keyIndex = Int.random(in: 0...values.count, using: &random)
            var withKey = values
            withKey.insert(DatabaseValue(storage: .integer(42)), at: keyIndex)
            var bytes: [UInt8] = []
            EncodedRows.encode(withKey, skipping: keyIndex, into: &bytes)
            #expect(EncodedRows.decode(bytes[...], key: 42, at: keyIndex).elementsEqual(withKey) { $0.isStored(as: $1) })
        }
        #expect(Self.encoded([DatabaseValue(storage: .integer(1))]) != Self.encoded([DatabaseValue(storage: .real(1))]))
    }

    /// Integers at the edges of each byte count, texts and blobs at the
    /// edge of a length kept in the tag.
    @Test func valuesAtTheEdgesOfTheirSizesComeBack() {
        var values: [DatabaseValue] = [Int64.min, Int64.max, 0, -1, 1].map { DatabaseValue(storage: .integer($0)) }
        for bits in stride(from: 7, through: 55, by: 8) {
            let edge = Int64(1) << bits
            values += [edge - 1, edge, -edge, -edge - 1].map { DatabaseValue(storage: .integer($0)) }
        }
        for count in [0, 1, 110, 111, 112, 113, 127, 128, 300] {
            values.append(DatabaseValue(storage: .text(String(repeating: "a", count: count))))
            values.append(DatabaseValue(storage: .blob(Data(repeating: 7, count: count))))
        }
        let decoded = EncodedRows.decode(Self.encoded(values)[...])
        #expect(decoded.count == values.count)
        for (old, new) in zip(values, decoded) { #expect(new.isStored(as: old), "\(old)") }
        // The fewest bytes: a tag and one byte for -128...127.
        #expect(Self.encoded([DatabaseValue(storage: .integer(-128))]).count == 2)
        #expect(Self.encoded([DatabaseValue(storage: .integer(128))]).count == 3)
        #expect(Self.encoded([DatabaseValue(storage: .text("abc"))]).count == 4)
    }

    @Test(arguments: [false, true])
    func rowsFollowADictionary(builtInOrder: Bool) {
        var random = SplitMix64(seed: builtInOrder ? 2 : 3)
        var model: [Int64: [UInt8]] = [:]
        var builder = EncodedRows.Builder()
        var keys = Array(Set((0..<3_000).map { _ in Int64.random(in: -1_000_000...1_000_000, using: &random) }))
        if builtInOrder { keys.sort() } else { keys.shuffle(using: &random) }
        for key in keys {
            let bytes = Self.encoded(Self.randomValues(using: &random))
            model[key] = bytes
            builder.append(key: key) { $0 += bytes }
        }
        guard var rows = builder.finish() else { Issue.record("no rows"); return }
        #expect(Self.contents(rows) == model)
        for step in 0..<4_000 {
            let key = Bool.random(using: &random)
                ? (model.keys.randomElement(using: &random) ?? 0) : Int64.random(in: -1_100_000...1_100_000, using: &random)
            if Int.random(in: 0..<3, using: &random) == 0 {
                rows.remove(key: key)
                model[key] = nil
            } else {
                let bytes = Self.encoded(Self.randomValues(using: &random))
                rows.set(key: key, encoded: bytes)
                model[key] = bytes
            }
            #expect(rows.encodedRow(forKey: key).map(Array.init) == model[key], "step \(step)")
            if step % 500 == 0 {
                #expect(Self.contents(rows) == model, "step \(step)")
                #expect(rows.count == model.count)
                let low = Int64.random(in: -1_000_000...1_000_000, using: &random)
                let range = low...(low + Int64.random(in: 0...100_000, using: &random))
                #expect(rows.keys(in: range) == model.keys.filter(range.contains).sorted())
            }
        }
        #expect(Self.contents(rows) == model)
        // Everything removed, then added again.
        for key in model.keys { rows.remove(key: key) }
        #expect(rows.count == 0 && Self.contents(rows).isEmpty)
        rows.set(key: 5, encoded: [1])
        #expect(Self.contents(rows) == [5: [1]])
    }

    /// Rows by position, given the running sums of the blocks' row counts.
    static func rowsByPosition(_ rows: EncodedRows) -> [Int64] {
        var starts: [Int] = []
        var start = 0
        for count in rows.blockRowCounts {
            starts.append(start)
            start += count
        }
        #expect(start == rows.count)
        return (0..<rows.count).map { rows.row(at: $0, blockStarts: starts).key }
    }

    /// Insertions crowded in one key range split chunks, then blocks; the
    /// removal of most rows empties chunks and blocks. Rows by key, by
    /// position and in order follow a dictionary throughout.
    @Test func blocksSplitAndEmpty() {
        var random = SplitMix64(seed: 4)
        var model: [Int64: [UInt8]] = [:]
        var builder = EncodedRows.Builder()
        for key in stride(from: Int64(0), to: 10_000_000, by: 1_000) {
            let bytes = Self.encoded([DatabaseValue(storage: .integer(key))])
            model[key] = bytes
            builder.append(key: key) { $0 += bytes }
        }
        guard var rows = builder.finish() else { Issue.record("no rows"); return }
        let builtBlocks = rows.blockRowCounts.count
        // About 13 000 rows in a range that held 300: about 100 chunks more, in one or two blocks.
        for _ in 0..<13_000 {
            let key = Int64.random(in: 0..<300_000, using: &random)
            let bytes = Self.encoded([DatabaseValue(storage: .integer(-key))])
            rows.set(key: key, encoded: bytes)
            model[key] = bytes
        }
        #expect(rows.blockRowCounts.count > builtBlocks + 1, "blocks split")
        #expect(rows.blockRowCounts.allSatisfy { $0 > 0 })
        #expect(Self.contents(rows) == model)
        #expect(Self.rowsByPosition(rows) == model.keys.sorted())
        for key in model.keys.sorted() where key < 8_000_000 {
            rows.remove(key: key)
            model[key] = nil
        }
        #expect(rows.blockRowCounts.count < builtBlocks, "blocks removed")
        #expect(rows.blockRowCounts.allSatisfy { $0 > 0 })
        #expect(Self.contents(rows) == model)
        #expect(Self.rowsByPosition(rows) == model.keys.sorted())
        for key in model.keys.shuffled(using: &random) { #expect(rows.encodedRow(forKey: key).map(Array.init) == model[key]) }
        // A key before every other, on rows whose first chunks are gone.
        rows.set(key: -1, encoded: [1])
        model[-1] = [1]
        #expect(Self.rowsByPosition(rows).first == -1 && Self.contents(rows) == model)
    }

    @Test func twoRowsWithTheSameKeyAreRefused() {
        var builder = EncodedRows.Builder()
        for key: Int64 in [3, 1, 2, 1] { builder.append(key: key) { $0 += [0] } }
        #expect(builder.finish() == nil)
    }
}
