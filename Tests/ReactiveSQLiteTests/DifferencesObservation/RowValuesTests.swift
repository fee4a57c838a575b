@testable import ReactiveSQLite
import TestSupport
import Testing

/// `RowValues`, the chunked rows of `trackingSetDifferences`, against a
/// plain array of rows: rows built from the rows of earlier ones (as a
/// commit's fetch builds them) share the chunks they keep whole, read the
/// same values, and never change the rows they come from.
@Suite(.onItsOwnThread) struct RowValuesTests {
    /// A model row: an integer key, a text and a number or NULL.
    typealias ModelRow = [DatabaseValue]

    static func randomRow(key: Int64, using random: inout SplitMix64) -> ModelRow {
        let text = DatabaseValue(storage: .text(String(repeating: "x", count: Int.random(in: 0...30, using: &random)) + "\(key)"))
        let other: DatabaseValue = Bool.random(using: &random) ? .null : DatabaseValue(storage: .integer(Int64.random(in: -5...5, using: &random)))
        return [DatabaseValue(storage: .integer(key)), text, other]
    }

    /// Checks every way of reading `rows` against `model`.
    static func expect(_ rows: RowValues, equals model: [ModelRow], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(rows.count == model.count, sourceLocation: sourceLocation)
        guard rows.count == model.count else { return }
        var chunkHint = 0
        for (index, row) in model.enumerated() {
            let values = rows.rowValues(index, chunkHint: &chunkHint)
            let (storage, start) = rows.storage(ofRow: index)
            // Plain comparisons: an expectation per row would be slow.
            guard values.elementsEqual(row), (0..<3).allSatisfy({ rows.value(index, $0) == row[$0] }),
                storage.values[start..<(start + 3)].elementsEqual(row)
            else {
                Issue.record("row \(index): \(Array(values)) != \(row)", sourceLocation: sourceLocation)
                return
            }
        }
        // Reading backwards and at random, with a stale hint.
        var random = SplitMix64(seed: UInt64(model.count))
        for _ in 0..<min(model.count, 200) {
            let index = Int.random(in: 0..<model.count, using: &random)
            if !rows.rowValues(index, chunkHint: &chunkHint).elementsEqual(model[index]) {
                Issue.record("row \(index), read at random", sourceLocation: sourceLocation)
                return
            }
        }
    }

    @Test func appendedRowsFillChunksOfAFixedNumberOfRows() {
        var random = SplitMix64(seed: 1)
        var rows = RowValues(width: 3)
        var model: [ModelRow] = []
        for key in 0..<5_000 {
            let row = Self.randomRow(key: Int64(key), using: &random)
            rows.appendRow(row)
            model.append(row)
        }
        Self.expect(rows, equals: model)
        #expect(rows.rowsPerChunk == 1_024)
        #expect(rows.chunkCount == (5_000 + 1_023) / 1_024)
        #expect(rows.compareKeysOfLastTwoRows(keyIndices: [0]) < 0)
    }

    /// Each step builds new rows from the previous ones as a commit's fetch
    /// does: runs of kept rows, with rows replaced, inserted and removed.
    @Test(arguments: [1, 2] as [UInt64]) func rowsBuiltFromEarlierRowsShareTheirWholeChunks(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var rows = RowValues(width: 3)
        var model: [ModelRow] = []
        var nextKey: Int64 = 0
        for _ in 0..<6_000 {
            let row = Self.randomRow(key: nextKey, using: &random)
            nextKey += 1
            rows.appendRow(row)
            model.append(row)
        }
        for step in 0..<30 {
            let previous = rows
            let previousModel = model
            var next = RowValues(width: 3)
            var nextModel: [ModelRow] = []
            var position = 0
            // A few changes (a commit's rows), and now and then many.
            let changeCount = step % 10 == 9 ? 2_000 : Int.random(in: 1...5, using: &random)
            let changed = (0..<changeCount).map { _ in Int.random(in: 0..<previousModel.count, using: &random) }.sorted()
            for index in changed where index >= position {
                next.appendRows(position..<index, of: previous)
                nextModel.append(contentsOf: previousModel[position..<index])
                switch Int.random(in: 0..<3, using: &random) {
                case 0:  // updated
                    let row = Self.randomRow(key: previousModel[index][0].integerPayload!, using: &random)
                    next.appendRow(row)
                    nextModel.append(row)
                case 1:  // deleted
                    break
                default:  // kept, and a row inserted after it
                    next.appendRows(index..<(index + 1), of: previous)
                    nextModel.append(previousModel[index])
                    let row = Self.randomRow(key: nextKey, using: &random)
                    nextKey += 1
                    next.appendRow(row)
                    nextModel.append(row)
                }
                position = index + 1
            }
            next.appendRows(position..<previousModel.count, of: previous)
            nextModel.append(contentsOf: previousModel[position...])
            Self.expect(next, equals: nextModel)
            // The previous rows did not change.
            Self.expect(previous, equals: previousModel)
            // Kept chunks are shared, and chunks stay about full: at most
            // four per full chunk's rows, and two more.
            #expect(next.chunkCount <= 4 * (nextModel.count / next.rowsPerChunk) + 2, "step \(step): \(next.chunkCount) chunks")
            rows = next
            model = nextModel
        }
    }

    @Test func aCopyThatAppendsLeavesTheOriginalAsItWas() {
        var random = SplitMix64(seed: 4)
        var rows = RowValues(width: 3)
        var model: [ModelRow] = []
        for key in 0..<1_500 {
            let row = Self.randomRow(key: Int64(key), using: &random)
            rows.appendRow(row)
            model.append(row)
        }
        var copy = rows
        let added = Self.randomRow(key: 2_000, using: &random)
        copy.appendRow(added)
        copy.appendRows(0..<1_500, of: rows)
        Self.expect(rows, equals: model)
        Self.expect(copy, equals: model + [added] + model)
        rows.appendRow(added)
        Self.expect(rows, equals: model + [added])
    }

    @Test func sortedRowsReadTheirValuesInTheGivenOrder() {
        var random = SplitMix64(seed: 5)
        var rows = RowValues(width: 3)
        var model: [ModelRow] = []
        for key in (0..<3_000).shuffled(using: &random) {
            let row = Self.randomRow(key: Int64(key), using: &random)
            rows.appendRow(row)
            model.append(row)
        }
        let sorted = rows.sorted { rows.compareKeys($0, $1, keyIndices: [0]) < 0 }
        Self.expect(sorted, equals: model.sorted { $0[0].integerPayload! < $1[0].integerPayload! })
    }
}
