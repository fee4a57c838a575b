import Dispatch
import GRDB

/// The player, decoded by column index: GRDB's fastest decoding.
struct GRDBIndexPlayer: FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int

    init(row: Row) {
        id = row[0]
        name = row[1]
        score = row[2]
    }
}

/// The player, decoded by GRDB's `Decodable` support.
struct GRDBDecodablePlayer: Codable, FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
}

/// What `ValueSummary` needs of a player.
protocol GRDBPlayerRecord: FetchableRecord, TableRecord, Sendable {
    var id: Int64 { get }
    var score: Int { get }
}

extension GRDBIndexPlayer: GRDBPlayerRecord {}
extension GRDBDecodablePlayer: GRDBPlayerRecord {}

extension GRDB.AnyDatabaseCancellable: ReadCancellable {}

extension Array where Element: GRDBPlayerRecord {
    /// O(1): the players are sorted by id, 1 ... count.
    func summary(watchedID: Int64) -> ValueSummary {
        let index = Int(watchedID) - 1
        let watchedScore = indices.contains(index) && self[index].id == watchedID ? self[index].score : -1
        return ValueSummary(count: count, lastID: last?.id ?? 0, watchedScore: watchedScore)
    }
}

/// The read benchmarks through GRDB: the same calls as
/// `ReactiveSQLiteReadStore`, line for line. GRDB has no `trackingAll`:
/// its equivalent is `trackingConstantRegion` with `fetchAll`, whose region
/// is computed once (as ours), the cheapest observation GRDB offers.
final class GRDBReadStore: ReadStore {
    let writer: any DatabaseWriter
    /// Where every observation of the store delivers its values.
    let deliveryQueue = DispatchQueue(label: "GRDBReadStore.delivery")

    init(path: String, kind: StoreKind, rowCount: Int) throws {
        var configuration = Configuration()
        let sql = kind.prepareSQL
        configuration.prepareDatabase { db in try db.execute(sql: sql) }
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
            (try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1,
             try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "")
        }
    }

    func start(_ value: ObservedValue, reportingTo waiter: ValueWaiter) -> (any ReadCancellable)? {
        switch value {
        case .allByIndex: startAll(GRDBIndexPlayer.self, waiter)
        case .allDecodable: startAll(GRDBDecodablePlayer.self, waiter)
        case .setDifferencesByIndex, .setDifferencesDecodable: nil
        }
    }

    private func startAll<Player: GRDBPlayerRecord>(_: Player.Type, _ waiter: ValueWaiter) -> any ReadCancellable {
        ValueObservation.trackingConstantRegion { db in try Player.orderByPrimaryKey().fetchAll(db) }
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { players in
                waiter.receive(players.summary(watchedID: waiter.watchedID))
            }
    }

    func incrementScore(id: Int64) throws -> Int {
        try writer.write { db in
            try db.cachedStatement(sql: ReadInputs.incrementScoreSQL).execute(arguments: [id])
            return db.changesCount
        }
    }

    func barrier() throws {
        writer.writeWithoutTransaction { _ in }
        deliveryQueue.sync {}
    }
}
