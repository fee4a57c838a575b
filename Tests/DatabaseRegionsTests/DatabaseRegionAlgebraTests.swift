import DatabaseRegions
import Testing
import TestSupport

/// The union and the intersection of two representative regions, derived by hand.
struct PairExpectation: Sendable, CustomTestStringConvertible {
    var lhs: Int
    var rhs: Int
    var union: String
    var intersection: String

    var testDescription: String { "regions #\(lhs) and #\(rhs)" }
}

@Suite(.onItsOwnThread) struct DatabaseRegionAlgebraTests {
    /// Every unordered pair of `RepresentativeRegions.all` (78 with the
    /// diagonal). The other order is checked against the same line.
    static let pairs: [PairExpectation] = [
        // empty
        .init(lhs: 0, rhs: 0, union: "empty", intersection: "empty"),
        .init(lhs: 0, rhs: 1, union: "full database", intersection: "empty"),
        .init(lhs: 0, rhs: 2, union: "player(*)", intersection: "empty"),
        .init(lhs: 0, rhs: 3, union: "player(id,name)", intersection: "empty"),
        .init(lhs: 0, rhs: 4, union: "player(name,score)", intersection: "empty"),
        .init(lhs: 0, rhs: 5, union: "player(*)[1,2]", intersection: "empty"),
        .init(lhs: 0, rhs: 6, union: "player(*)[2,3]", intersection: "empty"),
        .init(lhs: 0, rhs: 7, union: "player(id,name)[1]", intersection: "empty"),
        .init(lhs: 0, rhs: 8, union: "player(score)[3]", intersection: "empty"),
        .init(lhs: 0, rhs: 9, union: "team(*)", intersection: "empty"),
        .init(lhs: 0, rhs: 10, union: "team(id)[1]", intersection: "empty"),
        .init(lhs: 0, rhs: 11, union: "player(id,name)[1], team(*)", intersection: "empty"),
        // full database
        .init(lhs: 1, rhs: 1, union: "full database", intersection: "full database"),
        .init(lhs: 1, rhs: 2, union: "full database", intersection: "player(*)"),
        .init(lhs: 1, rhs: 3, union: "full database", intersection: "player(id,name)"),
        .init(lhs: 1, rhs: 4, union: "full database", intersection: "player(name,score)"),
        .init(lhs: 1, rhs: 5, union: "full database", intersection: "player(*)[1,2]"),
        .init(lhs: 1, rhs: 6, union: "full database", intersection: "player(*)[2,3]"),
        .init(lhs: 1, rhs: 7, union: "full database", intersection: "player(id,name)[1]"),
        .init(lhs: 1, rhs: 8, union: "full database", intersection: "player(score)[3]"),
        .init(lhs: 1, rhs: 9, union: "full database", intersection: "team(*)"),
        .init(lhs: 1, rhs: 10, union: "full database", intersection: "team(id)[1]"),
        .init(lhs: 1, rhs: 11, union: "full database", intersection: "player(id,name)[1], team(*)"),
        // player(*)
        .init(lhs: 2, rhs: 2, union: "player(*)", intersection: "player(*)"),
        .init(lhs: 2, rhs: 3, union: "player(*)", intersection: "player(id,name)"),
        .init(lhs: 2, rhs: 4, union: "player(*)", intersection: "player(name,score)"),
        .init(lhs: 2, rhs: 5, union: "player(*)", intersection: "player(*)[1,2]"),
        .init(lhs: 2, rhs: 6, union: "player(*)", intersection: "player(*)[2,3]"),
        .init(lhs: 2, rhs: 7, union: "player(*)", intersection: "player(id,name)[1]"),
        .init(lhs: 2, rhs: 8, union: "player(*)", intersection: "player(score)[3]"),
        .init(lhs: 2, rhs: 9, union: "player(*), team(*)", intersection: "empty"),
        .init(lhs: 2, rhs: 10, union: "player(*), team(id)[1]", intersection: "empty"),
        .init(lhs: 2, rhs: 11, union: "player(*), team(*)", intersection: "player(id,name)[1]"),
        // player(id,name)
        .init(lhs: 3, rhs: 3, union: "player(id,name)", intersection: "player(id,name)"),
        .init(lhs: 3, rhs: 4, union: "player(id,name,score)", intersection: "player(name)"),
        .init(lhs: 3, rhs: 5, union: "player(*)", intersection: "player(id,name)[1,2]"),
        .init(lhs: 3, rhs: 6, union: "player(*)", intersection: "player(id,name)[2,3]"),
        .init(lhs: 3, rhs: 7, union: "player(id,name)", intersection: "player(id,name)[1]"),
        .init(lhs: 3, rhs: 8, union: "player(id,name,score)", intersection: "empty"),
        .init(lhs: 3, rhs: 9, union: "player(id,name), team(*)", intersection: "empty"),
        .init(lhs: 3, rhs: 10, union: "player(id,name), team(id)[1]", intersection: "empty"),
        .init(lhs: 3, rhs: 11, union: "player(id,name), team(*)", intersection: "player(id,name)[1]"),
        // player(name,score)
        .init(lhs: 4, rhs: 4, union: "player(name,score)", intersection: "player(name,score)"),
        .init(lhs: 4, rhs: 5, union: "player(*)", intersection: "player(name,score)[1,2]"),
        .init(lhs: 4, rhs: 6, union: "player(*)", intersection: "player(name,score)[2,3]"),
        .init(lhs: 4, rhs: 7, union: "player(id,name,score)", intersection: "player(name)[1]"),
        .init(lhs: 4, rhs: 8, union: "player(name,score)", intersection: "player(score)[3]"),
        .init(lhs: 4, rhs: 9, union: "player(name,score), team(*)", intersection: "empty"),
        .init(lhs: 4, rhs: 10, union: "player(name,score), team(id)[1]", intersection: "empty"),
        .init(lhs: 4, rhs: 11, union: "player(id,name,score), team(*)", intersection: "player(name)[1]"),
        // player(*)[1,2]
        .init(lhs: 5, rhs: 5, union: "player(*)[1,2]", intersection: "player(*)[1,2]"),
        .init(lhs: 5, rhs: 6, union: "player(*)[1,2,3]", intersection: "player(*)[2]"),
        .init(lhs: 5, rhs: 7, union: "player(*)[1,2]", intersection: "player(id,name)[1]"),
        .init(lhs: 5, rhs: 8, union: "player(*)[1,2,3]", intersection: "empty"),
        .init(lhs: 5, rhs: 9, union: "player(*)[1,2], team(*)", intersection: "empty"),
        .init(lhs: 5, rhs: 10, union: "player(*)[1,2], team(id)[1]", intersection: "empty"),
        .init(lhs: 5, rhs: 11, union: "player(*)[1,2], team(*)", intersection: "player(id,name)[1]"),
        // player(*)[2,3]
        .init(lhs: 6, rhs: 6, union: "player(*)[2,3]", intersection: "player(*)[2,3]"),
        .init(lhs: 6, rhs: 7, union: "player(*)[1,2,3]", intersection: "empty"),
        .init(lhs: 6, rhs: 8, union: "player(*)[2,3]", intersection: "player(score)[3]"),
        .init(lhs: 6, rhs: 9, union: "player(*)[2,3], team(*)", intersection: "empty"),
        .init(lhs: 6, rhs: 10, union: "player(*)[2,3], team(id)[1]", intersection: "empty"),
        .init(lhs: 6, rhs: 11, union: "player(*)[1,2,3], team(*)", intersection: "empty"),
        // player(id,name)[1]
        .init(lhs: 7, rhs: 7, union: "player(id,name)[1]", intersection: "player(id,name)[1]"),
        .init(lhs: 7, rhs: 8, union: "player(id,name,score)[1,3]", intersection: "empty"),
        .init(lhs: 7, rhs: 9, union: "player(id,name)[1], team(*)", intersection: "empty"),
        .init(lhs: 7, rhs: 10, union: "player(id,name)[1], team(id)[1]", intersection: "empty"),
        .init(lhs: 7, rhs: 11, union: "player(id,name)[1], team(*)", intersection: "player(id,name)[1]"),
        // player(score)[3]
        .init(lhs: 8, rhs: 8, union: "player(score)[3]", intersection: "player(score)[3]"),
        .init(lhs: 8, rhs: 9, union: "player(score)[3], team(*)", intersection: "empty"),
        .init(lhs: 8, rhs: 10, union: "player(score)[3], team(id)[1]", intersection: "empty"),
        .init(lhs: 8, rhs: 11, union: "player(id,name,score)[1,3], team(*)", intersection: "empty"),
        // team(*)
        .init(lhs: 9, rhs: 9, union: "team(*)", intersection: "team(*)"),
        .init(lhs: 9, rhs: 10, union: "team(*)", intersection: "team(id)[1]"),
        .init(lhs: 9, rhs: 11, union: "player(id,name)[1], team(*)", intersection: "team(*)"),
        // team(id)[1]
        .init(lhs: 10, rhs: 10, union: "team(id)[1]", intersection: "team(id)[1]"),
        .init(lhs: 10, rhs: 11, union: "player(id,name)[1], team(*)", intersection: "team(id)[1]"),
        // player(id,name)[1], team(*)
        .init(lhs: 11, rhs: 11, union: "player(id,name)[1], team(*)", intersection: "player(id,name)[1], team(*)"),
    ]

    @Test func thePairTableCoversEveryPairOfRepresentativeRegionsOnce() {
        let count = RepresentativeRegions.all.count
        #expect(count >= 12)
        let covered = Self.pairs.map { [$0.lhs, $0.rhs] }
        let expected = (0..<count).flatMap { lhs in (lhs..<count).map { rhs in [lhs, rhs] } }
        #expect(covered == expected)
    }

    @Test(arguments: pairs)
    func unionOfTwoRepresentativeRegionsHasTheExpectedDescriptionInBothOrders(_ pair: PairExpectation) {
        let lhs = RepresentativeRegions.all[pair.lhs].region
        let rhs = RepresentativeRegions.all[pair.rhs].region
        #expect(lhs.union(rhs).description == pair.union)
        #expect(rhs.union(lhs).description == pair.union)
        var formed = lhs
        formed.formUnion(rhs)
        #expect(formed.description == pair.union)
    }

    @Test(arguments: pairs)
    func intersectionOfTwoRepresentativeRegionsHasTheExpectedDescriptionInBothOrders(_ pair: PairExpectation) {
        let lhs = RepresentativeRegions.all[pair.lhs].region
        let rhs = RepresentativeRegions.all[pair.rhs].region
        #expect(lhs.intersection(rhs).description == pair.intersection)
        #expect(rhs.intersection(lhs).description == pair.intersection)
    }

    @Test func unionAndIntersectionAreCommutativeAssociativeAndIdempotentOnRandomRegions() {
        var random = RandomDatabase(seed: 0x5EED_0001)
        for _ in 0..<5_000 {
            let a = random.region()
            let b = random.region()
            let c = random.region()
            #expect(a.union(b) == b.union(a), "\(a) ∪ \(b)")
            #expect(a.intersection(b) == b.intersection(a), "\(a) ∩ \(b)")
            #expect(a.union(b).union(c) == a.union(b.union(c)), "\(a) ∪ \(b) ∪ \(c)")
            #expect(a.intersection(b).intersection(c) == a.intersection(b.intersection(c)), "\(a) ∩ \(b) ∩ \(c)")
            #expect(a.union(a) == a, "\(a)")
            #expect(a.intersection(a) == a, "\(a)")
            var formed = a
            formed.formUnion(b)
            #expect(formed == a.union(b), "\(a) ∪ \(b)")
        }
    }

    @Test func fullDatabaseAndEmptyAreIdentitiesAndAbsorbingElementsOnRandomRegions() {
        var random = RandomDatabase(seed: 0x5EED_0002)
        let full = DatabaseRegion.fullDatabase
        let empty = DatabaseRegion()
        for _ in 0..<5_000 {
            let a = random.region()
            #expect(a.union(empty) == a, "\(a)")
            #expect(empty.union(a) == a, "\(a)")
            #expect(a.intersection(full) == a, "\(a)")
            #expect(full.intersection(a) == a, "\(a)")
            #expect(a.union(full).isFullDatabase, "\(a)")
            #expect(full.union(a).isFullDatabase, "\(a)")
            #expect(a.intersection(empty).isEmpty, "\(a)")
            #expect(empty.intersection(a).isEmpty, "\(a)")
        }
    }

    @Test func anEventThatModifiesARegionModifiesItsUnionWithAnyRegion() {
        var random = RandomDatabase(seed: 0x5EED_0003)
        var modifyingEvents = 0
        for _ in 0..<3_000 {
            let a = random.region()
            let b = random.region()
            let union = a.union(b)
            for _ in 0..<20 {
                let event = random.event()
                if a.isModified(by: event) || b.isModified(by: event) {
                    modifyingEvents += 1
                    #expect(union.isModified(by: event), "\(event) modifies \(a) or \(b) but not \(union)")
                }
                let kind = random.eventKind()
                if a.isModified(byEventsOfKind: kind) || b.isModified(byEventsOfKind: kind) {
                    #expect(union.isModified(byEventsOfKind: kind), "\(kind) modifies \(a) or \(b) but not \(union)")
                }
            }
        }
        // The random cases must exercise the law, not pass vacuously.
        #expect(modifyingEvents > 10_000)
    }

    @Test func anEventThatModifiesAnIntersectionModifiesBothOperands() {
        var random = RandomDatabase(seed: 0x5EED_0004)
        var modifyingEvents = 0
        for _ in 0..<3_000 {
            let a = random.region()
            let b = random.region()
            let intersection = a.intersection(b)
            for _ in 0..<20 {
                let event = random.event()
                if intersection.isModified(by: event) {
                    modifyingEvents += 1
                    #expect(a.isModified(by: event), "\(event) modifies \(intersection) but not \(a)")
                    #expect(b.isModified(by: event), "\(event) modifies \(intersection) but not \(b)")
                }
                let kind = random.eventKind()
                if intersection.isModified(byEventsOfKind: kind) {
                    #expect(a.isModified(byEventsOfKind: kind), "\(kind) modifies \(intersection) but not \(a)")
                    #expect(b.isModified(byEventsOfKind: kind), "\(kind) modifies \(intersection) but not \(b)")
                }
            }
        }
        #expect(modifyingEvents > 1_000)
    }

    @Test func anEventModifiesAnIntersectionWhenItModifiesBothOperandsAtOneRowAndColumn() {
        // The intersection is exact for single-column updates of a known row:
        // (columns1 x rows1) ∩ (columns2 x rows2) = (columns1 ∩ columns2) x (rows1 ∩ rows2).
        var random = RandomDatabase(seed: 0x5EED_0005)
        var checked = 0
        for _ in 0..<3_000 {
            let a = random.region()
            let b = random.region()
            let intersection = a.intersection(b)
            for _ in 0..<20 {
                let table = random.element(of: random.tables)
                let column = random.element(of: random.columns)
                let rowID = Int64(random.int(in: 1...7))
                let event = DatabaseEvent(kind: .update(tableName: table, columnNames: [column]), rowID: rowID)
                if a.isModified(by: event) && b.isModified(by: event) {
                    checked += 1
                    #expect(intersection.isModified(by: event), "\(event) modifies \(a) and \(b) but not \(intersection)")
                }
            }
        }
        #expect(checked > 1_000)
    }
}
