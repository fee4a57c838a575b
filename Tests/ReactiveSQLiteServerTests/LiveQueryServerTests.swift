#if Server
import DatabaseTestSupport
import ReactiveSQLite
import ReactiveSQLiteServer
import Testing

@Suite struct LiveQueryServerTests {
    @Test(arguments: [
        (LiveQuery(name: "bad name", sql: "SELECT 1"), "a name is 1 to 128 letters"),
        (LiveQuery(name: "", sql: "SELECT 1"), "a name is 1 to 128 letters"),
        (LiveQuery(name: "q", sql: "SELEKT 1"), "invalid SQL"),
        (LiveQuery(name: "q", sql: "DELETE FROM player"), "not a read that returns rows"),
        (LiveQuery(name: "q", sql: "SELECT * FROM player WHERE id = ?"), "positional parameters"),
        (LiveQuery(name: "q", sql: "SELECT * FROM player WHERE id = :id"), "the parameter :id is not declared"),
        (LiveQuery(name: "q", sql: "SELECT * FROM player", parameters: [.init("id", .integer)]),
         "the declared parameter 'id' is not in the SQL"),
        (LiveQuery(name: "q", sql: "SELECT * FROM player WHERE id = :id", parameters: [.init("id", .integer), .init("id", .text)]),
         "declared twice"),
        (LiveQuery(name: "q", sql: "SELECT name FROM player", keyColumns: ["id"]), "the key column 'id' is not a result column"),
    ])
    func invalidQueriesAreRefusedWhenTheServerIsCreated(query: LiveQuery, reason: String) throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let error = #expect(throws: LiveQueryServerError.self) {
            try LiveQueryServer(reader: database.writer, queries: [query])
        }
        #expect(error?.message.contains(reason) == true, "\(String(describing: error))")
    }

    @Test func twoQueriesCannotShareAName() throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        #expect(throws: LiveQueryServerError.self) {
            try LiveQueryServer(reader: database.writer, queries: [
                LiveQuery(name: "q", sql: "SELECT 1"), LiveQuery(name: "q", sql: "SELECT 2"),
            ])
        }
    }

    @Test func validQueriesAreListed() throws {
        let database = try DatabaseKind.inMemoryQueue.make(sql: playersSQL)
        let server = try LiveQueryServer(reader: database.writer, queries: [
            LiveQuery(name: "b-2", sql: "SELECT * FROM player WHERE team = $team AND score > :s",
                      parameters: [.init("team", .text), .init("s", .integer, default: 0)]),
            LiveQuery(name: "a_1", sql: "SELECT id FROM player", keyColumns: ["ID"]),
        ])
        #expect(server.queryNames == ["a_1", "b-2"])
        #expect(server.subscriberCount == 0 && server.observationCount == 0)
    }
}
#endif
