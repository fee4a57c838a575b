import DatabaseRegions

/// What the change hooks reported in the open transaction, by level: the
/// transaction itself, each savepoint, and each statement that runs.
///
/// A statement is an implicit savepoint: SQLite undoes a statement that
/// fails with ABORT (a CHECK, UNIQUE or NOT NULL constraint, `RAISE(ABORT)`)
/// through its statement journal, without any hook, after the hooks have
/// reported the rows it had changed. So each statement gets a level of its
/// own, merged into the level below when the statement succeeds (or keeps
/// its changes after failing, as `OR FAIL` does), and dropped when SQLite
/// undid it. `ROLLBACK TO` drops the levels since its savepoint began;
/// `RELEASE` merges them; the commit takes everything.
///
/// A level holds marks, not events: which observations changed (a set: an
/// observation needs to know *that* it changed, not how many times), the
/// rows that changed for the observations that want rowids, and the events
/// buffered for user `TransactionObserver`s, which only get the events of
/// levels that can no longer be undone.
///
/// - Complexity: Every operation is O(1) but merges and drops, which are
///   O(size of the merged or dropped levels).
struct ChangeLevelStack {
    enum Kind: Equatable {
        case transaction
        case savepoint(String)
        /// A running statement, identified by its `Statement` object.
        case statement(ObjectIdentifier)
    }

    /// A row event for a user observer, buffered until its level is final.
    typealias UserEvent = (observer: any TransactionObserver, event: DatabaseEvent)

    struct Level {
        var kind: Kind
        /// The observations this level changed.
        var changed: Set<Int> = []
        /// For the observations that want rowids, the rows changed at this level.
        var rowIDs: [Int: ChangedRowIDs] = [:]
        var userEvents: [UserEvent] = []
        /// Whether a statement of this level changed the schema.
        var changesSchema = false

        var isEmpty: Bool { changed.isEmpty && rowIDs.isEmpty && userEvents.isEmpty && !changesSchema }

        /// Takes in the content of `other`, a level above this one.
        mutating func merge(_ other: Level) {
            if changed.isEmpty {
                changed = other.changed
            } else {
                changed.formUnion(other.changed)
            }
            if rowIDs.isEmpty {
                rowIDs = other.rowIDs
            } else {
                ChangedRowIDs.merge(other.rowIDs, into: &rowIDs)
            }
            userEvents.append(contentsOf: other.userEvents)
            changesSchema = changesSchema || other.changesSchema
        }
    }

    /// Level 0 is the transaction (or, outside of one, what the next
    /// autocommitted statement changes).
    private(set) var levels = [Level(kind: .transaction)]

    /// The index of the innermost level, where row events are marked.
    var top: Int { levels.count - 1 }

    /// The number of statement levels: the statements that are running.
    private(set) var runningStatementCount = 0

    /// Whether the stack only holds an empty transaction level.
    var isPristine: Bool { levels.count == 1 && levels[0].isEmpty }

    // MARK: Marking

    /// Marks observation `id` changed at the innermost level.
    @inline(__always)
    mutating func mark(_ id: Int) {
        levels[levels.count - 1].changed.insert(id)
    }

    /// Whether observation `id` is marked changed at the innermost level.
    func isMarked(_ id: Int) -> Bool {
        levels[levels.count - 1].changed.contains(id)
    }

    /// Whether observation `id` is marked changed at some level: the
    /// running transaction concerns it so far.
    func isMarkedAtSomeLevel(_ id: Int) -> Bool {
        levels.contains { $0.changed.contains(id) }
    }

    /// Records a row changed for observation `id`, which wants rowids of `table`.
    mutating func recordRowID(_ rowID: Int64?, ofTable eventTable: String, forObserver id: Int, table: String) {
        levels[levels.count - 1].rowIDs[id, default: .none(table: table)].insert(rowID, ofTable: eventTable)
    }

    /// Records that observation `id` changed in a way no rowid describes.
    mutating func recordUnknownRows(forObserver id: Int) {
        levels[levels.count - 1].rowIDs[id] = .unknown
    }

    /// Buffers an event for a user observer at the innermost level.
    mutating func buffer(_ event: DatabaseEvent, for observer: any TransactionObserver) {
        levels[levels.count - 1].userEvents.append((observer, event))
    }

    /// Records a schema change at the innermost level.
    mutating func markSchemaChange() {
        levels[levels.count - 1].changesSchema = true
    }

    // MARK: Statements

    /// A statement starts: it gets a level of its own.
    mutating func pushStatement(_ statement: ObjectIdentifier) {
        levels.append(Level(kind: .statement(statement)))
        runningStatementCount += 1
    }

    /// A statement ended. Its level (and any level left above it) is merged
    /// into the level below when `keepsChanges`, and dropped otherwise.
    /// Nothing happens when its level is gone (a rollback emptied the stack).
    ///
    /// - Returns: The user events that became final: those merged into the
    ///   transaction level, which no savepoint can undo any longer.
    mutating func popStatement(_ statement: ObjectIdentifier, keepsChanges: Bool) -> [UserEvent] {
        guard let index = levels.lastIndex(where: { $0.kind == .statement(statement) }) else { return [] }
        runningStatementCount -= levels[index...].reduce(0) { count, level in
            if case .statement = level.kind { return count + 1 }
            return count
        }
        guard keepsChanges else {
            levels.removeSubrange(index...)
            return []
        }
        return mergeLevels(from: index)
    }

    // MARK: Savepoints

    mutating func beginSavepoint(_ name: String) {
        levels.append(Level(kind: .savepoint(name)))
    }

    /// `RELEASE name`: merges the savepoint and the levels above it into the
    /// level below.
    ///
    /// > The RELEASE command starts with the most recent addition to the
    /// > transaction stack and releases savepoints backwards in time until it
    /// > releases a savepoint with a matching savepoint-name.
    /// https://www.sqlite.org/lang_savepoint.html
    ///
    /// - Returns: The user events that became final.
    mutating func releaseSavepoint(_ name: String) -> [UserEvent] {
        guard let index = savepointIndex(named: name) else { return [] }
        return mergeLevels(from: index)
    }

    /// `ROLLBACK TO name`: drops what was marked since the savepoint began.
    ///
    /// > ROLLBACK TO [...] does not remove the savepoint: it cancels the
    /// > changes made since the savepoint began.
    mutating func rollbackToSavepoint(_ name: String) {
        guard let index = savepointIndex(named: name) else { return }
        levels.removeSubrange((index + 1)...)
        levels[index] = Level(kind: levels[index].kind)
    }

    /// The most recent savepoint with this name (case-insensitive, as SQLite).
    private func savepointIndex(named name: String) -> Int? {
        levels.lastIndex { level in
            if case .savepoint(let levelName) = level.kind { return levelName.isSameIdentifier(as: name) }
            return false
        }
    }

    /// Merges the levels from `index` up into level `index - 1`, each into
    /// the one below, in place (a copy of a level below, whose marks grow
    /// with the transaction, would make a transaction of n statements cost
    /// O(n²)).
    private mutating func mergeLevels(from index: Int) -> [UserEvent] {
        precondition(index > 0, "the transaction level is never merged")
        while levels.count > index {
            let level = levels.removeLast()
            levels[levels.count - 1].merge(level)
        }
        guard levels.count == 1, !levels[0].userEvents.isEmpty else { return [] }
        defer { levels[0].userEvents = [] }
        return levels[0].userEvents
    }

    // MARK: Transactions

    /// Takes the user events of every level, for the commit hook, which
    /// hands them over before the observers are asked to commit.
    mutating func takeUserEvents() -> [UserEvent] {
        guard levels.contains(where: { !$0.userEvents.isEmpty }) else { return [] }
        let events = levels.flatMap(\.userEvents)
        for index in levels.indices { levels[index].userEvents = [] }
        return events
    }

    /// The transaction committed: everything it marked, at any level,
    /// leaves the stack, with its savepoints. The levels of running
    /// statements stay, empty.
    mutating func takeCommitted() -> Level {
        var committed = Level(kind: .transaction)
        for level in levels { committed.merge(level) }
        // In place: the stack keeps its capacity, and the next statement's
        // level needs no allocation.
        levels.removeAll { level in
            if case .savepoint = level.kind { return true }
            return false
        }
        for index in levels.indices { levels[index] = Level(kind: levels[index].kind) }
        return committed
    }

    /// The transaction rolled back, or the stack no longer describes the
    /// connection (no transaction is open): everything is dropped, the
    /// levels of running statements included.
    mutating func reset() {
        levels.removeSubrange(1...)
        levels[0] = Level(kind: .transaction)
        runningStatementCount = 0
    }

    /// Forgets observation `id`.
    mutating func remove(observer id: Int) {
        for index in levels.indices {
            levels[index].changed.remove(id)
            levels[index].rowIDs[id] = nil
        }
    }

    /// Forgets the events buffered for a user observer.
    mutating func remove(userObserver: any TransactionObserver) {
        for index in levels.indices {
            levels[index].userEvents.removeAll { $0.observer === userObserver }
        }
    }
}
