import ReactiveSQLite
import Testing
import TestSupport

/// `RowDiffer` against brute force: for random successions of results, the
/// reported differences are exactly the rows that appeared, disappeared,
/// changed values and (ordered) moved, and their positions are right.
@Suite(.onItsOwnThread) struct RowDifferTests {
    /// A result: rows keyed by `id`, in some order.
    private static func randomResult(_ random: inout SplitMix64) -> [Row] {
        let ids = (0..<12).filter { _ in Int.random(in: 0..<3, using: &random) > 0 }.shuffled(using: &random)
        return ids.map { id in
            let value: (any DatabaseValueConvertible)? = switch Int.random(in: 0..<5, using: &random) {
            case 0: nil
            case 1: Int64(id % 2)
            case 2: Double(id % 2)  // 1.0 after 1: a change of storage class is a change
            case 3: "t\(id % 2)"
            default: Int64(7)
            }
            return Row(["id": Int64(id), "v": value])
        }
    }

    private static func id(_ row: Row) -> Int64 { try! row["id"] }

    @Test(arguments: [false, true])
    func changesAreExactlyWhatBruteForceFinds(isOrdered: Bool) throws {
        var random = SplitMix64(seed: isOrdered ? 31 : 17)
        var previous = Self.randomResult(&random)
        var differ = RowDiffer(
            identity: .columns(["id"]), isOrdered: isOrdered, columnNames: ["id", "v"], rows: previous)
        for step in 0..<400 {
            let next = Self.randomResult(&random)
            let outcome = differ.diff(to: next)
            let old = Dictionary(uniqueKeysWithValues: previous.map { (Self.id($0), $0) })
            let new = Dictionary(uniqueKeysWithValues: next.map { (Self.id($0), $0) })
            let expectedInserted = Set(new.keys).subtracting(old.keys)
            let expectedDeleted = Set(old.keys).subtracting(new.keys)
            let expectedUpdated = Set(new.keys.filter { key in
                guard let before = old[key] else { return false }
                return !before.hasIdenticalStorage(as: new[key]!)
            })
            let oldPositions = Dictionary(uniqueKeysWithValues: previous.enumerated().map { (Self.id($1), $0 + 1) })
            let newPositions = Dictionary(uniqueKeysWithValues: next.enumerated().map { (Self.id($1), $0 + 1) })
            guard case .changed(let changes) = outcome else {
                #expect(expectedInserted.isEmpty && expectedDeleted.isEmpty && expectedUpdated.isEmpty, "step \(step)")
                if isOrdered { #expect(previous.map(Self.id) == next.map(Self.id), "step \(step)") }
                previous = next
                continue
            }
            #expect(Set(changes.inserted.map { Self.id($0.row) }) == expectedInserted, "step \(step)")
            #expect(Set(changes.deleted.map { Self.id($0.row) }) == expectedDeleted, "step \(step)")
            #expect(Set(changes.updated.map { Self.id($0.row) }) == expectedUpdated, "step \(step)")
            for update in changes.updated {
                #expect(update.previous == old[Self.id(update.row)], "step \(step)")
                #expect(update.changedColumns == [1], "step \(step)")
            }
            if isOrdered {
                for entry in changes.inserted { #expect(entry.position == newPositions[Self.id(entry.row)]) }
                for entry in changes.deleted { #expect(entry.position == oldPositions[Self.id(entry.row)]) }
                for move in changes.moved {
                    #expect(move.from == oldPositions[Self.id(move.row)] && move.to == newPositions[Self.id(move.row)])
                }
                // The kept rows not reported moved are in the same relative order.
                let movedIDs = Set(changes.moved.map { Self.id($0.row) })
                let keptOld = previous.map(Self.id).filter { new[$0] != nil && !movedIDs.contains($0) }
                let keptNew = next.map(Self.id).filter { old[$0] != nil && !movedIDs.contains($0) }
                #expect(keptOld == keptNew, "step \(step)")
            } else {
                #expect(changes.moved.isEmpty)
                #expect(changes.inserted.allSatisfy { $0.position == nil })
            }
            previous = next
        }
    }

    @Test func rowsWithoutKeyAreComparedByAllTheirValues() {
        let arthur = Row(["name": "Arthur"])
        var differ = RowDiffer(identity: .allValues, isOrdered: false, columnNames: ["name"], rows: [arthur, arthur])
        #expect(differ.identifiesAllValues)
        guard case .changed(let changes) = differ.diff(to: [arthur, Row(["name": "Barbara"])]) else {
            Issue.record("expected a change")
            return
        }
        // One of the two equal rows went away: a deletion of one occurrence.
        #expect(changes.deleted.map(\.row) == [arthur])
        #expect(changes.inserted.map(\.row) == [Row(["name": "Barbara"])])
        #expect(changes.updated.isEmpty)
    }

    @Test func otherColumnsRestartTheComparison() {
        var differ = RowDiffer(
            identity: .columns(["id"]), isOrdered: false, columnNames: ["id"], rows: [Row(["id": 1])])
        guard case .columnsChanged = differ.diff(to: [Row(["id": 1, "name": "Arthur"])]) else {
            Issue.record("expected columnsChanged")
            return
        }
        #expect(differ.columnNames == ["id", "name"])
        guard case .unchanged = differ.diff(to: [Row(["id": 1, "name": "Arthur"])]) else {
            Issue.record("expected unchanged")
            return
        }
    }
}

extension Row {
    /// Same storage class and value in every column (1 and 1.0 differ).
    fileprivate func hasIdenticalStorage(as other: Row) -> Bool {
        databaseValues.count == other.databaseValues.count
            && zip(databaseValues, other.databaseValues).allSatisfy { lhs, rhs in
                switch (lhs.storage, rhs.storage) {
                case (.null, .null): true
                case (.integer(let l), .integer(let r)): l == r
                case (.real(let l), .real(let r)): l == r
                case (.text(let l), .text(let r)): Array(l.utf8) == Array(r.utf8)
                case (.blob(let l), .blob(let r)): l == r
                default: false
                }
            }
    }
}
