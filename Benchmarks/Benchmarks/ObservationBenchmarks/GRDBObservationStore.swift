import Dispatch
import GRDB

struct GRDBPlayer: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
}

struct GRDBTeam: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "team"
    var id: Int64
    var name: String
}

/// An item, decoded by column index (as `ReactiveSQLiteItem`).
struct GRDBItem: FetchableRecord, Sendable {
    var id: Int64
    var owner: Int64
    var name: String
    var price: Int

    init(row: Row) {
        id = row[0]
        owner = row[1]
        name = row[2]
        price = row[3]
    }
}

extension GRDB.AnyDatabaseCancellable: BenchmarkCancellable {}

/// The observation benchmarks through GRDB: the same calls as
/// `ReactiveSQLiteObservationStore`, line for line. GRDB has no
/// `trackingCount` nor `trackingOne`: their equivalents are
/// `trackingConstantRegion` with `fetchCount` and `fetchOne`, whose region
/// is computed once (as ours), the cheapest observation GRDB offers.
final class GRDBObservationStore: ObservationStore {
    let writer: any DatabaseWriter
    /// Where every observation of the store delivers its values.
    let deliveryQueue = DispatchQueue(label: "GRDBObservationStore.delivery")

    init(path: String, kind: StoreKind) throws {
        switch kind {
        case .queue:
            writer = try DatabaseQueue(path: path)
            try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        case .pool:
            writer = try DatabasePool(path: path)
        }
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        try writer.write { db in try db.execute(sql: ObservationInputs.createTablesSQL) }
    }

    func fill(playerCount: Int, teamCount: Int) throws {
        try writer.write { db in
            let players = try db.cachedStatement(sql: ObservationInputs.insertPlayerSQL)
            for id in 0..<Int64(playerCount) {
                try players.execute(arguments: [id + 1])
            }
            let teams = try db.cachedStatement(sql: ObservationInputs.insertTeamSQL)
            for id in 0..<Int64(teamCount) {
                try teams.execute(arguments: [id + 1])
            }
        }
    }

    func observePlayerCount(_ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingConstantRegion { db in try GRDBPlayer.all().fetchCount(db) }
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { count in
                onChange(count)
            }
    }

    func observeSharedPlayerCount(
        subscribers: Int, _ onChange: @escaping @Sendable (Int) -> Void
    ) -> [any BenchmarkCancellable] {
        let shared = ValueObservation.trackingConstantRegion { db in try GRDBPlayer.all().fetchCount(db) }
            .shared(in: writer, scheduling: .async(onQueue: deliveryQueue))
        return (0..<subscribers).map { _ in
            shared.start(onError: { fatalError("\($0)") }) { count in onChange(count) }
        }
    }

    func observePlayer(id: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingConstantRegion { db in try GRDBPlayer.filter(key: id).fetchOne(db) }
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { player in
                onChange(player?.score ?? -1)
            }
    }

    func observeTeam(id: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingConstantRegion { db in try GRDBTeam.filter(key: id).fetchOne(db) }
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { team in
                onChange(team == nil ? -1 : 0)
            }
    }

    func insertPlayer() throws {
        try writer.write { db in
            try db.cachedStatement(sql: ObservationInputs.insertPlayerSQL).execute(arguments: [nil as Int64?])
        }
    }

    func incrementScore(id: Int64) throws {
        try writer.write { db in
            try db.cachedStatement(sql: ObservationInputs.incrementScoreSQL).execute(arguments: [id])
        }
    }

    func insertPlayers(_ ids: ClosedRange<Int64>) throws {
        try writer.write { db in
            let statement = try db.cachedStatement(sql: ObservationInputs.insertPlayerSQL)
            for id in ids {
                try statement.execute(arguments: [id])
            }
        }
    }

    func deletePlayers(after id: Int64) throws {
        try writer.write { db in
            try db.cachedStatement(sql: ObservationInputs.deletePlayersSQL).execute(arguments: [id])
        }
    }

    func fillItems(owners: Int) throws {
        try writer.write { db in
            let items = try db.cachedStatement(sql: ObservationInputs.insertItemSQL)
            for owner in 0...Int64(owners) {
                try items.execute(arguments: [2 * owner + 1, owner])
                try items.execute(arguments: [2 * owner + 2, owner])
            }
        }
    }

    func observeItems(owner: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingConstantRegion { db in
            try GRDBItem.fetchAll(db, sql: ObservationInputs.itemsOfOwnerSQL, arguments: [owner])
        }
        .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { rows in
            onChange(rows.reduce(0) { $0 + $1.price })
        }
    }

    func incrementPrice(itemID: Int64) throws {
        try writer.write { db in
            try db.cachedStatement(sql: ObservationInputs.incrementPriceSQL).execute(arguments: [itemID])
        }
    }

    func barrier() throws {
        writer.writeWithoutTransaction { _ in }
    }
}

/// The filter workload (`FilterWorkload`) through GRDB:
/// `trackingConstantRegion` of the rows, decoded by index.
final class GRDBFilterWorkloadStore: FilterWorkloadStore {
    let writer: DatabaseQueue
    let deliveryQueue = DispatchQueue(label: "GRDBFilterWorkloadStore.delivery")

    init(path: String) throws {
        writer = try DatabaseQueue(path: path)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
    }

    func execute(_ sql: String) throws {
        try writer.write { db in try db.execute(sql: sql) }
    }

    func observe(_ sql: String, _ onChange: @escaping @Sendable ([ShopRow]) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingConstantRegion { db in
            try Row.fetchAll(db, sql: sql).map { ShopRow(id: $0[0], owner: $0[1], status: $0[2], price: $0[3], name: $0[4]) }
        }
        .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }, onChange: onChange)
    }

    func barrier() throws {
        try writer.writeWithoutTransaction { _ in }
        deliveryQueue.sync {}
    }
}
