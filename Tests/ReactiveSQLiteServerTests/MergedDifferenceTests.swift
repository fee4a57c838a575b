#if Server
import ReactiveSQLite
@testable import ReactiveSQLiteServer
import Testing

/// Subscribers that fall behind under a burst of commits share the merged
/// difference that brings them up to date: 150 readers of 30 000 rows each
/// diffed the whole result on their own, and the server fell seconds
/// behind the writer (`ServeSoakTests` measures the whole).
@Suite struct MergedDifferenceTests {
    private func revision(_ query: SharedLiveQuery, _ number: Int) -> LiveRevision {
        LiveRevision(epoch: query.epoch, number: number, columnNames: ["id"], rows: [], diffFromPrevious: nil)
    }

    @Test func subscribersBehindFromTheSameRevisionShareOneMergedDifference() {
        let query = SharedLiveQuery(
            key: .init(name: "all", arguments: [:]), query: LiveQuery(name: "all", sql: "SELECT 1 AS id"), maxRows: 10)
        let (first, second, third, fourth) = (revision(query, 1), revision(query, 2), revision(query, 3), revision(query, 4))
        var made = 0
        let make = { (text: String) -> LiveEvent? in
            made += 1
            return LiveEvent(kind: .diff, id: text, data: text)
        }
        // Three subscribers behind from revision 1, one from revision 2.
        #expect(query.mergedEvent(from: first, to: third) { make("1-3") }?.data == "1-3")
        #expect(query.mergedEvent(from: first, to: third) { make("again") }?.data == "1-3")
        #expect(query.mergedEvent(from: first, to: third) { make("again") }?.data == "1-3")
        #expect(query.mergedEvent(from: second, to: third) { make("2-3") }?.data == "2-3")
        #expect(made == 2)
        // A result with no change is remembered too.
        #expect(query.mergedEvent(from: second, to: fourth) { made += 1; return nil } == nil)
        #expect(query.mergedEvent(from: second, to: fourth) { make("again") } == nil)
        #expect(made == 3)
        // Only the events to the latest revision are kept: a subscriber
        // still on its way to an older one gets its own.
        #expect(query.mergedEvent(from: first, to: third) { make("1-3 again") }?.data == "1-3 again")
        #expect(made == 4)
    }
}
#endif
