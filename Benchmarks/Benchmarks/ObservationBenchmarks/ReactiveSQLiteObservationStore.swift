import Dispatch
import ReactiveSQLite

struct ReactiveSQLitePlayer: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
}

struct ReactiveSQLiteTeam: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "team"
    var id: Int64
    var name: String
}

/// An item, decoded by column index (as `GRDBItem`).
struct ReactiveSQLiteItem: FetchableRecord, Sendable {
    var id: Int64
    var owner: Int64
    var name: String
    var price: Int

    init(row: Row) throws {
        id = try row[0]
        owner = try row[1]
        name = try row[2]
        price = try row[3]
    }
}

extension ReactiveSQLite.AnyDatabaseCancellable: BenchmarkCancellable {}

/// The observation benchmarks through ReactiveSQLite.
final class ReactiveSQLiteObservationStore: ObservationStore {
    let writer: any DatabaseWriter
    /// Where every observation of the store delivers its values.
    let deliveryQueue = DispatchQueue(label: "ReactiveSQLiteObservationStore.delivery")

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
        ValueObservation.trackingCount(ReactiveSQLitePlayer.all())
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { count in
                onChange(count)
            }
    }

    func observeSharedPlayerCount(
        subscribers: Int, _ onChange: @escaping @Sendable (Int) -> Void
    ) -> [any BenchmarkCancellable] {
        let shared = ValueObservation.trackingCount(ReactiveSQLitePlayer.all())
            .shared(in: writer, scheduling: .async(onQueue: deliveryQueue))
        return (0..<subscribers).map { _ in
            shared.start(onError: { fatalError("\($0)") }) { count in onChange(count) }
        }
    }

    func observePlayer(id: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingOne(ReactiveSQLitePlayer.filter(key: id))
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }) { player in
                onChange(player?.score ?? -1)
            }
    }

    func observeTeam(id: Int64, _ onChange: @escaping @Sendable (Int) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingOne(ReactiveSQLiteTeam.filter(key: id))
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
        ValueObservation.trackingAll(SQLRequest<ReactiveSQLiteItem>(sql: ObservationInputs.itemsOfOwnerSQL, arguments: [owner]))
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
        try writer.writeWithoutTransaction { _ in }
    }
}

/// The filter workload (`FilterWorkload`) through ReactiveSQLite.
final class ReactiveSQLiteFilterWorkloadStore: FilterWorkloadStore {
    let writer: DatabaseQueue
    let deliveryQueue = DispatchQueue(label: "ReactiveSQLiteFilterWorkloadStore.delivery")

    /// - Parameter filters: Whether the pre-update hook gives old values,
    ///   which filters need (`.updateHookOnly` otherwise).
    init(path: String, filters: Bool) throws {
        var configuration = Configuration()
        if !filters { configuration.changeTracking = .updateHookOnly }
        writer = try DatabaseQueue(path: path, configuration: configuration)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
    }

    func execute(_ sql: String) throws {
        try writer.write { db in try db.execute(sql: sql) }
    }

    func observe(_ sql: String, _ onChange: @escaping @Sendable ([ShopRow]) -> Void) -> any BenchmarkCancellable {
        ValueObservation.trackingAll(SQLRequest<Row>(sql: sql))
            .map { rows in
                rows.map { ShopRow(id: try! $0[0], owner: try! $0[1], status: try! $0[2], price: try! $0[3], name: try! $0[4]) }
            }
            .start(in: writer, scheduling: .async(onQueue: deliveryQueue), onError: { fatalError("\($0)") }, onChange: onChange)
    }

    func barrier() throws {
        try writer.writeWithoutTransaction { _ in }
        deliveryQueue.sync {}
    }
}
