import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `trackingSetDifferences` of requests whose rows each depend on their own
/// values only refetches the rows that commits changed (see
/// `IncrementalFetch`). Under random transactions that insert, update,
/// delete, change rowids, replace conflicting rows, empty tables, and roll
/// back savepoints and transactions, every difference goes from one
/// committed state to a later one; such observations refetch incrementally
/// with the pre-update hook and never with the update hook, and requests
/// with a limit, a subquery or a function not known to depend on its
/// arguments alone never do.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct IncrementalSetDifferencesTests {
    /// `player(id INTEGER PRIMARY KEY, name TEXT UNIQUE, score)`: keyed by
    /// its rowid alias.
    typealias Player = UnequatablePlayer

    /// `tag(name TEXT UNIQUE, score)`: no primary key, keyed by its rowid,
    /// which the observed request selects.
    struct Tag: FetchableRecord, TableRecord, Sendable {
        var rowID: Int64
        var name: String
        var score: Int

        init(row: Row) throws {
            rowID = try row["rowid"]
            name = try row["name"]
            score = try row["score"]
        }
    }

    static let schema = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL);
        CREATE TABLE tag (name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL);
        CREATE VIEW playerID AS SELECT id FROM player;
        """

    /// The rows of a request, `name/score` by key: the id of a player, the
    /// rowid of a tag.
    typealias State = [String: String]

    /// One observed request: its observation, the same rows for the
    /// checks, and whether it refetches incrementally (with the pre-update
    /// hook).
    struct Observed: Sendable {
        var name: String
        var observation: ValueObservation<SetDifference<Item>>
        var sql: String
        var isIncremental: Bool
        /// Whether the observation watches some rows only: with the update
        /// hook, it misses the rows that `INSERT OR REPLACE` deletes, as
        /// `Configuration.ChangeTracking.updateHookOnly` says.
        var watchesSomeRows = false
    }

    /// A player or a tag, as the checks describe it.
    struct Item: Sendable {
        var key: String
        var description: String
    }

    static func observation<Request: FetchRequest>(
        _ request: Request, key: @escaping @Sendable (Request.Element) -> String,
        describe: @escaping @Sendable (Request.Element) -> String
    ) -> ValueObservation<SetDifference<Item>> where Request.Element: FetchableRecord & TableRecord & Sendable {
        typealias Record = Request.Element
        return ValueObservation.trackingSetDifferences(request).map { difference in
            func items(_ records: [Record]) -> [Item] { records.map { Item(key: key($0), description: describe($0)) } }
            return SetDifference(
                inserted: items(difference.inserted), updated: items(difference.updated),
                deleted: items(difference.deleted))
        }
    }

    /// New observation values for each test, which count their own
    /// incremental fetches.
    static func makeObserved() -> [Observed] {
        let playerKey: @Sendable (Player) -> String = { "\($0.id)" }
        let describePlayer: @Sendable (Player) -> String = { "\($0.name)/\($0.score)" }
        let describeTag: @Sendable (Tag) -> String = { "\($0.name)/\($0.score)" }
        return [
            Observed(
                name: "players by key",
                observation: observation(Player.orderByPrimaryKey(), key: playerKey, describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player", isIncremental: true),
            Observed(
                name: "some players",
                observation: observation(Player.filter(keys: Array(1...12)), key: playerKey, describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player WHERE id <= 12", isIncremental: true,
                watchesSomeRows: true),
            Observed(
                // No INTEGER PRIMARY KEY: VACUUM may renumber the rowids
                // without any hook, so the observation scans. Checked by
                // rowid, as the observation keys them: keyed by name, the
                // checks could not follow a rowid that another tag takes
                // before the next fetch (a deletion of the last rowid then
                // an insert, or VACUUM), and kept the name of the gone tag.
                name: "tags",
                observation: observation(
                    SQLRequest<Tag>(sql: "SELECT rowid, name, score FROM tag"), key: { "\($0.rowID)" },
                    describe: describeTag),
                sql: "SELECT CAST(rowid AS TEXT), name || '/' || score FROM tag", isIncremental: false),
            Observed(
                name: "players by SQL filter",
                observation: observation(Player.filter(sql: "score > 1"), key: playerKey, describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player WHERE score > 1", isIncremental: true),
            Observed(
                name: "players by a function of their name",
                observation: observation(
                    Player.filter(sql: "lower(name) LIKE 'N1%'").order(sql: "length(name)"), key: playerKey,
                    describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player WHERE lower(name) LIKE 'N1%'",
                isIncremental: true),
            Observed(
                // Whether a row belongs depends on the others: the
                // observation must scan.
                name: "players above the average",
                observation: observation(
                    Player.filter(sql: "score >= (SELECT avg(score) FROM player)"), key: playerKey,
                    describe: describePlayer),
                sql: """
                    SELECT CAST(id AS TEXT), name || '/' || score FROM player
                    WHERE score >= (SELECT avg(score) FROM player)
                    """,
                isIncremental: false),
            Observed(
                // A function that is not known to depend on its arguments
                // alone (the date functions read the clock for 'now').
                name: "players with a date function",
                observation: observation(
                    Player.filter(sql: "julianday('2000-01-01') > 0 AND score > 0"), key: playerKey,
                    describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player WHERE score > 0",
                isIncremental: false),
            Observed(
                // `x IN table`: whether a row belongs depends on the others.
                name: "players after another",
                observation: observation(
                    Player.filter(sql: "id - 1 IN playerID"), key: playerKey, describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player WHERE id - 1 IN (SELECT id FROM player)",
                isIncremental: false),
            Observed(
                // A limit in an ordering: the scan of the SQL refuses it.
                name: "players limited through an ordering",
                observation: observation(
                    Player.all().order(sql: "id LIMIT 5"), key: playerKey, describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player ORDER BY id LIMIT 5",
                isIncremental: false),
            Observed(
                name: "players with a limit",
                observation: observation(Player.orderByPrimaryKey().limit(6), key: playerKey, describe: describePlayer),
                sql: "SELECT CAST(id AS TEXT), name || '/' || score FROM player ORDER BY id LIMIT 6",
                isIncremental: false),
        ]
    }

    static func fetchStates(_ db: Database, _ observed: [Observed]) throws -> [State] {
        try observed.map { observed in
            var state = State()
            for row in try SQLRequest<Row>(sql: observed.sql).fetchAll(db) {
                state[try row[0]] = try row[1]
            }
            return state
        }
    }

    /// One random statement, as SQL and arguments.
    static func randomStatement(using random: inout SplitMix64) -> (String, StatementArguments) {
        let id = Int64.random(in: 1...24, using: &random)
        let otherID = Int64.random(in: 1...24, using: &random)
        let name = "n\(Int.random(in: 0..<24, using: &random))"
        let score = Int.random(in: 0..<4, using: &random)
        switch Int.random(in: 0..<60, using: &random) {
        case 0..<12:
            // Replaces the row of the id, or of the name (another row).
            return ("INSERT OR REPLACE INTO player (id, name, score) VALUES (?, ?, ?)", [id, name, score])
        case 12..<18:
            return ("INSERT OR IGNORE INTO player (name, score) VALUES (?, ?)", [name, score])
        case 18..<28:
            return ("UPDATE player SET score = ? WHERE id = ?", [score, id])
        case 28..<31:
            // The rowid changes; a conflict replaces the row of the new id.
            return ("UPDATE OR REPLACE player SET id = ? WHERE id = ?", [otherID, id])
        case 31..<34:
            // No value changes.
            return ("UPDATE player SET score = score WHERE id = ?", [id])
        case 34..<40:
            return ("DELETE FROM player WHERE id = ?", [id])
        case 40:
            // The truncate optimization, which the library turns off.
            return ("DELETE FROM player", [])
        case 41..<49:
            return ("INSERT OR REPLACE INTO tag (name, score) VALUES (?, ?)", [name, score])
        case 49..<53:
            return ("UPDATE tag SET score = ? WHERE rowid = ?", [score, id])
        case 53..<55:
            // The rowid changes; a conflict replaces the tag of the new
            // rowid (or of the name).
            return ("UPDATE OR REPLACE tag SET rowid = ? WHERE rowid = ?", [otherID, id])
        case 55..<59:
            return ("DELETE FROM tag WHERE rowid = ?", [id])
        default:
            return ("UPDATE player SET score = score + 1", [])
        }
    }

    struct RolledBack: Error {}

    @Test(arguments: DatabaseKind.allCases, [Configuration.ChangeTracking.automatic, .updateHookOnly])
    func differencesGoFromOneCommittedStateToALaterOne(
        kind: DatabaseKind, changeTracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: changeTracking, sql: Self.schema)
        let writer = test.writer
        try writer.writeSQLWithoutTransaction("PRAGMA synchronous = OFF")
        var random = SplitMix64(seed: 0x1AC4 + UInt64(DatabaseKind.allCases.firstIndex(of: kind)!))
        let observed = Self.makeObserved().filter { !($0.watchesSomeRows && changeTracking == .updateHookOnly) }
        let recorders = observed.map { _ in Recorder<SetDifference<Item>>() }
        let cancellables = zip(observed, recorders).map { observed, recorder in
            observed.observation.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        }
        defer { cancellables.forEach { $0.cancel() } }

        var states: [[State]] = [try await writer.read { try Self.fetchStates($0, observed) }]
        let stepCount = isRunningUnderThreadSanitizer ? 200 : 800
        for step in 0..<stepCount {
            if step % 100 == 99 {
                // Renumbers the rowids of tags (no INTEGER PRIMARY KEY),
                // without any hook.
                try await writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
                states.append(try await writer.read { try Self.fetchStates($0, observed) })
            }
            // Statements, some of them in savepoints (nested or not) that
            // are released or rolled back, with statements after the
            // rollback; some transactions rolled back.
            var statements: [(String, StatementArguments)] = []
            var openSavepoints: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<6, using: &random) {
                case 0 where openSavepoints.count < 2:
                    let name = "s\(openSavepoints.count)"
                    openSavepoints.append(name)
                    statements.append(("SAVEPOINT \(name)", []))
                case 1 where !openSavepoints.isEmpty:
                    statements.append(("ROLLBACK TO \(openSavepoints.last!)", []))
                case 2 where !openSavepoints.isEmpty:
                    statements.append(("RELEASE \(openSavepoints.removeLast())", []))
                default:
                    break
                }
                statements.append(Self.randomStatement(using: &random))
            }
            let rollsBack = Int.random(in: 0..<10, using: &random) == 0
            do {
                let committed = try await writer.write { [statements] db in
                    for (sql, arguments) in statements { try db.execute(sql: sql, arguments: arguments) }
                    if rollsBack { throw RolledBack() }
                    return try Self.fetchStates(db, observed)
                }
                states.append(committed)
            } catch is RolledBack {}
        }

        for (index, (observed, recorder)) in zip(observed, recorders).enumerated() {
            let final = states.last![index]
            let observedStates = states.map { $0[index] }
            // Wait until the differences lead to the final state.
            let values: [SetDifference<Item>]
            do {
                values = try await recorder.wait { values in
                    values.reduce(State()) { Self.apply($1, to: $0) } == final
                }
            } catch {
                let reached = recorder.values.reduce(State()) { Self.apply($1, to: $0) }
                Issue.record("\(observed.name): the final state is not reached: \(reached.sorted { $0.key < $1.key }) != \(final.sorted { $0.key < $1.key })")
                continue
            }
            // Each difference goes from the state the previous ones lead to,
            // to a later committed state, and reports each row once: an
            // inserted row was absent, an updated row changed, a deleted row
            // was there as reported.
            var stateIndex = 0
            for (valueIndex, difference) in values.enumerated() {
                let previous = observedStates[stateIndex]
                let keys = (difference.inserted + difference.updated + difference.deleted).map(\.key)
                #expect(Set(keys).count == keys.count, "\(observed.name), value \(valueIndex): a row twice")
                for item in difference.inserted {
                    #expect(previous[item.key] == nil, "\(observed.name), value \(valueIndex): \(item.key) inserted")
                }
                for item in difference.updated {
                    #expect(
                        previous[item.key] != nil && previous[item.key] != item.description,
                        "\(observed.name), value \(valueIndex): \(item.key) updated")
                }
                for item in difference.deleted {
                    #expect(
                        previous[item.key] == item.description,
                        "\(observed.name), value \(valueIndex): \(item.key) deleted")
                }
                let next = Self.apply(difference, to: observedStates[stateIndex])
                guard let nextIndex = observedStates[(stateIndex + 1)...].firstIndex(of: next) else {
                    Issue.record("""
                        \(observed.name), value \(valueIndex): \(Self.describe(difference)) leads from \
                        \(observedStates[stateIndex].sorted { $0.key < $1.key }) to no later state; next states: \
                        \(observedStates[(stateIndex + 1)...].prefix(3).map { $0.sorted { $0.key < $1.key } })
                        """)
                    break
                }
                stateIndex = nextIndex
            }
            #if REACTIVESQLITE_INTERNAL_CHECKS
            let incrementalFetchCount = observed.observation.incrementalFetch?.statistics.incrementalFetchCount ?? 0
            if observed.isIncremental && changeTracking == .automatic {
                // Most commits change few rows; "DELETE FROM player", the
                // savepoints, and the external-change checks fetch everything.
                #expect(incrementalFetchCount > values.count / 2, "\(observed.name): \(incrementalFetchCount) of \(values.count)")
            } else {
                #expect(incrementalFetchCount == 0, "\(observed.name)")
            }
            #endif
        }
    }

    /// A commit of another connection reaches no hook: the next fetch
    /// reads everything (the writer's `data_version` tells), so that the
    /// difference of the next local commit includes the other connection's
    /// change, and the fetches after it are incremental again.
    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func commitsOfOtherConnectionsAreNotMissed(kind: DatabaseKind) async throws {
        // The external-change detector is off (the default): only the
        // library's own check can see the other connection's commit.
        let test = try kind.make(changeTracking: .automatic, sql: Self.schema + """
            INSERT INTO player (id, name, score) VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0);
            """)
        let writer = test.writer
        let observed = Self.makeObserved()[0]
        let recorder = Recorder<SetDifference<Item>>()
        let cancellable = observed.observation.start(
            in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        let state: @Sendable ([SetDifference<Item>]) -> State = { $0.reduce(State()) { Self.apply($1, to: $0) } }
        let score: @Sendable (Int, [SetDifference<Item>]) -> String? = { id, values in state(values)["\(id)"] }

        _ = try await recorder.wait(for: 1)
        try await writer.write { db in try db.execute(sql: "UPDATE player SET score = 1 WHERE id = 1") }
        _ = try await recorder.wait { score(1, $0) == "a/1" }
        #if REACTIVESQLITE_INTERNAL_CHECKS
        let incrementalBefore = observed.observation.incrementalFetch!.statistics.incrementalFetchCount
        #expect(incrementalBefore >= 1)
        #endif

        // Another connection changes player 2, then the writer player 3.
        let other = try DatabaseQueue(path: test.path!)
        try await other.write { db in try db.execute(sql: "UPDATE player SET score = 2 WHERE id = 2") }
        other.close()
        try await writer.write { db in try db.execute(sql: "UPDATE player SET score = 3 WHERE id = 3") }
        let values = try await recorder.wait { score(3, $0) == "c/3" }
        #expect(state(values) == ["1": "a/1", "2": "b/2", "3": "c/3"])

        // Later local commits refetch incrementally again. The fetch after
        // the external commit may have pinned its snapshot before that
        // commit, so the one after it reads everything as well: wait for
        // it, or the two commits below could share one full fetch.
        try await writer.write { db in try db.execute(sql: "UPDATE player SET score = 4 WHERE id = 1") }
        _ = try await recorder.wait { score(1, $0) == "a/4" }
        try await writer.write { db in try db.execute(sql: "UPDATE player SET score = 5 WHERE id = 1") }
        let finalValues = try await recorder.wait { score(1, $0) == "a/5" }
        #expect(state(finalValues) == ["1": "a/5", "2": "b/2", "3": "c/3"])
        #if REACTIVESQLITE_INTERNAL_CHECKS
        #expect(observed.observation.incrementalFetch!.statistics.incrementalFetchCount > incrementalBefore)
        #endif
    }

    static func describe(_ difference: SetDifference<Item>) -> String {
        func list(_ items: [Item]) -> String { items.map { "\($0.key)=\($0.description)" }.joined(separator: ",") }
        return "+[\(list(difference.inserted))] ~[\(list(difference.updated))] -[\(list(difference.deleted))]"
    }

    /// `state` after `difference`: a tag that moved to another rowid is
    /// deleted, then inserted under the same name.
    static func apply(_ difference: SetDifference<Item>, to state: State) -> State {
        var state = state
        for item in difference.deleted { state[item.key] = nil }
        for item in difference.inserted + difference.updated { state[item.key] = item.description }
        return state
    }
}
