#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB

/// A player of the set-difference scenario (table `player`), with a counter
/// of the updates an observation applied to it: not a column, and ignored
/// by `==`, so that it only changes through `updateElement`/`updateRecord`.
struct CountedPlayer: FetchableRecord, PersistableRecord, Identifiable, Equatable, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var updateCount = 0

    init(id: Int64, name: String, updateCount: Int = 0) {
        self.id = id
        self.name = name
        self.updateCount = updateCount
    }

    init(row: Row) throws {
        id = row["id"]
        name = row["name"]
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
    }

    static func == (lhs: CountedPlayer, rhs: CountedPlayer) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name
    }

    /// The `updateElement` of the scenario: a new element whose count is the old one's plus one.
    @Sendable static func incrementingCount(_ old: CountedPlayer, _ new: CountedPlayer) -> CountedPlayer {
        CountedPlayer(id: new.id, name: new.name, updateCount: old.updateCount + 1)
    }

    /// The `updateRecord` of the scenario.
    @Sendable static func incrementingCount(_ old: CountedPlayer, _ row: Row) -> CountedPlayer {
        CountedPlayer(id: row["id"], name: row["name"], updateCount: old.updateCount + 1)
    }
}

/// A set difference in a form tests compare: names (and update counts when
/// asked) of the inserted, updated and deleted elements.
struct DifferenceSummary: Equatable, CustomStringConvertible {
    var inserted: [String]
    var updated: [String]
    var deleted: [String]

    init(inserted: [String] = [], updated: [String] = [], deleted: [String] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    init(_ difference: SetDifference<CountedPlayer>, counts: Bool) {
        func label(_ player: CountedPlayer) -> String { counts ? "\(player.name) \(player.updateCount)" : player.name }
        self.init(
            inserted: difference.inserted.map(label), updated: difference.updated.map(label),
            deleted: difference.deleted.map(label))
    }

    var description: String {
        func list(_ names: [String]) -> String { names.isEmpty ? "-" : names.joined(separator: ", ") }
        return "(\(list(inserted)) | \(list(updated)) | \(list(deleted)))"
    }
}

#endif
