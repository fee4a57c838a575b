import Dispatch
import ReactiveSQLite

/// The player, decoded by column index.
struct ReactiveSQLiteIndexPlayer: FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int

    init(row: Row) throws {
        id = try row[0]
        name = try row[1]
        score = try row[2]
    }
}

/// The player, decoded by ReactiveSQLite's `Decodable` support.
struct ReactiveSQLiteDecodablePlayer: Codable, FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
}

/// What `ValueSummary` needs of a player.
protocol ReactiveSQLitePlayerRecord: FetchableRecord, TableRecord, Sendable {
    var id: Int64 { get }
    var score: Int { get }
}

extension ReactiveSQLiteIndexPlayer: ReactiveSQLitePlayerRecord {}
extension ReactiveSQLiteDecodablePlayer: ReactiveSQLitePlayerRecord {}

extension ReactiveSQLite.AnyDatabaseCancellable: ReadCancellable {}

extension Array where Element: ReactiveSQLitePlayerRecord {
    /// O(1): the players are sorted by id, 1 ... count.
    func summary(watchedID: Int64) -> ValueSummary {
        let index = Int(watchedID) - 1
        let watchedScore = indices.contains(index) && self[index].id == watchedID ? self[index].score : -1
        return ValueSummary(count: count, lastID: last?.id ?? 0, watchedScore: watchedScore)
    }
}

/// The read benchmarks through ReactiveSQLite.
final class ReactiveSQLiteReadStore: ReadStore {
    let writer: any DatabaseWriter
    /// Where every observation of the store delivers its values.
    let deliveryQueue = DispatchQueue(label: "ReactiveSQLiteReadStore.delivery")

    init(path: String, kind: StoreKind, rowCount: Int) throws {
        var configuration = Configuration()
        let sql = kind.prepareSQL
        configuration.prepareDatabase = { db in try db.execute(sql: sql) }
        switch kind {
        case .queue: writer = try DatabaseQueue(path: path, configuration: configuration)
        case .pool: writer = try DatabasePool(path: path, configuration: configuration)
        }
        try fill(rowCount: rowCount)
    }

    init(defaultPoolAt path: String, rowCount: Int) throws {
        writer = try DatabasePool(path: path)
        try fill(rowCount: rowCount)
    }

    /// For the diagnostic of the write benchmark: a pool whose connections
    /// use `synchronous = FULL`, the default of this library's pools before
    /// issue 16.
    init(synchronousFullPoolAt path: String, rowCount: Int) throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        writer = try DatabasePool(path: path, configuration: configuration)
        try fill(rowCount: rowCount)
    }

    private func fill(rowCount: Int) throws {
        try writer.write { db in
            try db.execute(sql: ReadInputs.createTableSQL)
            let statement = try db.cachedStatement(sql: ReadInputs.insertSQL)
            for id in 1...Int64(rowCount) {
                try statement.execute(arguments: [id, ReadInputs.name(id), ReadInputs.initialScore(id)])
            }
        }
    }

    func durability() throws -> (synchronous: Int, journalMode: String) {
        try writer.writeWithoutTransaction { db in
            (try SQLRequest<Int>(sql: "PRAGMA synchronous").fetchOne(db) ?? -1,
             try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(db) ?? "")
        }
    }

    func start(_ value: ObservedValue, reportingTo waiter: ValueWaiter) -> (any ReadCancellable)? {
        switch value {
        case .allByIndex: startAll(ReactiveSQLiteIndexPlayer.self, waiter)
        case .allDecodable: startAll(ReactiveSQLiteDecodablePlayer.self, waiter)
        case .setDifferencesByIndex: startSetDifferences(ReactiveSQLiteIndexPlayer.self, waiter)
        case .setDifferencesDecodable: startSetDifferences(ReactiveSQLiteDecodablePlayer.self, waiter)
        }
    }

    private func startAll<Player: ReactiveSQLitePlayerRecord>(
        _: Player.Type, _ waiter: ValueWaiter
    ) -> any ReadCancellable {
        ValueObservation.trackingAll(Player.orderByPrimaryKey())
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { players in
                waiter.receive(players.summary(watchedID: waiter.watchedID))
            }
    }

    /// Reports the inserted records of each difference (all of them in the
    /// first one).
    private func startSetDifferences<Player: ReactiveSQLitePlayerRecord>(
        _: Player.Type, _ waiter: ValueWaiter
    ) -> any ReadCancellable {
        ValueObservation.trackingSetDifferences(Player.orderByPrimaryKey())
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { difference in
                waiter.receive(difference.inserted.summary(watchedID: waiter.watchedID))
            }
    }

    func incrementScore(id: Int64) throws -> Int {
        try writer.write { db in
            try db.cachedStatement(sql: ReadInputs.incrementScoreSQL).execute(arguments: [id])
            return db.changesCount
        }
    }

    func barrier() throws {
        try writer.writeWithoutTransaction { _ in }
        deliveryQueue.sync {}
    }
}
