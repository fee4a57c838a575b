import DatabaseRegions
import Testing
import TestSupport

/// A vocabulary for random index tests.
struct IndexScenario: Sendable, CustomTestStringConvertible {
    var name: String
    var seed: UInt64
    var tables: [String]? = nil
    var columns: [String]
    var rowIDs: ClosedRange<Int64>

    var testDescription: String { name }

    static let all: [IndexScenario] = [
        IndexScenario(
            name: "few columns, few rows",
            seed: 0x5EED_0301,
            columns: ["id", "ID", "name", "Name", "score", "teamId", "TEAMID", "bonus"],
            rowIDs: 1...6),
        IndexScenario(
            name: "many rows",
            seed: 0x5EED_0302,
            columns: ["id", "name", "score"],
            rowIDs: 1...40),
        IndexScenario(
            name: "more than 64 columns",
            seed: 0x5EED_0303,
            columns: (0..<150).map { "c\($0)" } + ["C7", "C70", "C140"],
            rowIDs: 1...4),
        // Names longer than eight bytes, which share their first eight
        // bytes and their length, or differ only by case.
        IndexScenario(
            name: "long names",
            seed: 0x5EED_0304,
            tables: ["observed_table_a", "OBSERVED_TABLE_A", "observed_table_b", "observed_tablf_a", "observed"],
            columns: [
                "observed_column_1", "Observed_Column_1", "observed_column_2", "observed_column_10",
                "observed_colum_10", "observed", "OBSERVED",
            ],
            rowIDs: 1...6),
    ]
}

@Suite(.onItsOwnThread) struct DatabaseRegionIndexPropertyTests {
    /// Registers random regions, replaces and removes them at random, and
    /// checks after every change that the index answers random events and
    /// kinds exactly as a loop over the registered regions does.
    @Test(arguments: IndexScenario.all)
    func theIndexAnswersLikeTheBruteForceLoopThroughInsertionsReplacementsAndRemovals(
        _ scenario: IndexScenario
    ) throws {
        var random = RandomDatabase(seed: scenario.seed)
        if let tables = scenario.tables { random.tables = tables }
        random.columns = scenario.columns
        random.rowIDs = scenario.rowIDs
        var checkedEvents = 0
        var nonEmptyAnswers = 0
        var multipleAnswers = 0

        for round in 0..<1_000 {
            var index = DatabaseRegionIndex<Int>()
            var regions: [Int: DatabaseRegion] = [:]
            let keyRange = 0...random.int(in: 0...40)

            for step in 0..<30 {
                let key = random.int(in: keyRange)
                if random.chance(0.7) {
                    let region = random.region()
                    index.insert(region, for: key)
                    regions[key] = region
                } else {
                    let removed = index.remove(key)
                    try #require(removed == regions.removeValue(forKey: key), "round \(round) step \(step): remove \(key)")
                }
                try #require(index.count == regions.count, "round \(round) step \(step)")

                for _ in 0..<4 {
                    let event = random.event()
                    let answer = index.keys(impactedBy: event)
                    let expected = regions.filter { $0.value.isModified(by: event) }.keys.sorted()
                    try #require(
                        answer.sorted() == expected,
                        "round \(round) step \(step): \(event) in \(regions.mapValues(\.description))")
                    // The visitor sees the same keys, in the same order.
                    var visited: [Int] = []
                    index.forEachKey(impactedBy: event) { visited.append($0) }
                    try #require(visited == answer, "round \(round) step \(step): \(event)")
                    checkedEvents += 1
                    if !answer.isEmpty { nonEmptyAnswers += 1 }
                    if answer.count > 1 { multipleAnswers += 1 }

                    let kind = random.eventKind()
                    let kindAnswer = index.keys(impactedByEventsOfKind: kind)
                    let kindExpected = regions.filter { $0.value.isModified(byEventsOfKind: kind) }.keys.sorted()
                    try #require(
                        kindAnswer.sorted() == kindExpected,
                        "round \(round) step \(step): \(kind) in \(regions.mapValues(\.description))")
                }
            }

            // Emptying the index leaves nothing behind.
            for key in regions.keys.shuffled(using: &random.generator) {
                try #require(index.remove(key) == regions[key])
            }
            try #require(index.count == 0)
            let event = random.event()
            try #require(index.keys(impactedBy: event).isEmpty)
        }

        // The random cases must exercise the index, not pass vacuously.
        #expect(checkedEvents == 120_000)
        #expect(nonEmptyAnswers > 20_000)
        #expect(multipleAnswers > 5_000)
    }
}
