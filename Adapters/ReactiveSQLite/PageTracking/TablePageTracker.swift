/// Tells which rows of a table the commits of other connections may have
/// changed, from the pages their write-ahead-log frames name, without
/// reading the table's other rows.
///
/// Use it on one connection, in accesses without a transaction
/// (`writeWithoutTransaction`):
/// 1. `beginSnapshot(_:)` begins a read transaction whose state is known:
///    the wal-index header read before and after the transaction's first
///    read is the same, so it is the transaction's.
/// 2. `start(_:snapshot:)` reads the table's b-tree in that state (then
///    fetch the rows you keep, in the same transaction).
/// 3. After other commits, `changes(_:snapshot:)` in a new snapshot gives
///    the rows to read again (a superset of the changed ones), or nil when
///    they cannot be known: then fetch everything, and `start` again.
///
/// It knows the changes when every commit since the previous snapshot is
/// in the log: the frames after the previous snapshot's last frame, in the
/// same generation of the log, or the frames of a later generation when
/// no commit was lost with the earlier ones (the wal-index change counter
/// counts commits, and the frames read must hold as many commit frames),
/// whoever restarted the log and whatever its new salts. A schema
/// change, a log it cannot read, or more written pages of the table than
/// half its tree's (pages of other tables and indexes do not count) give
/// nil. Pages are read through SQLite's own file handles: from
/// the latest frame of the page in the snapshot while the log is not
/// copied back, else from the database file (which a checkpoint does not
/// change past the frames of a running read transaction).
///
/// Not for encrypted databases (their pages are encrypted in the files):
/// `init` returns nil.
package struct TablePageTracker: Sendable {
    /// The rows a commit may have changed (see `TableBTree.Changes`).
    package typealias Changes = TableBTree.Changes

    private let table: String
    private var frames = WALFrameIndex()
    private var tree: TableBTree?
    private var snapshot: WALIndexHeader?
    private var schemaCookie: [UInt8] = []
    private var usableSize = 0

    /// A tracker of `table`; nil when the database is not in WAL mode.
    package init?(table: String, in db: Database) throws {
        guard try db.isInWALMode() else { return nil }
        self.table = table
    }

    /// Begins a read transaction (`BEGIN DEFERRED` and one read), and
    /// returns the wal-index header of its state, or nil when other
    /// connections kept changing it (the transaction is begun anyway: end
    /// it with `COMMIT`). On error, no transaction is left open.
    package static func beginSnapshot(_ db: Database) throws -> WALIndexHeader? {
        do {
            return try beginKnownSnapshot(db)
        } catch {
            db.rollbackIfInsideTransaction()
            throw error
        }
    }

    private static func beginKnownSnapshot(_ db: Database) throws -> WALIndexHeader? {
        for _ in 0..<8 {
            let before = try db.walIndexBytes(count: WALIndexHeader.byteCount).flatMap(WALIndexHeader.init(bytes:))
            try db.execute(sql: "BEGIN DEFERRED")
            _ = try SQLRequest<Int>(sql: "SELECT count(*) FROM sqlite_master").fetchOne(db)
            let after = try db.walIndexBytes(count: WALIndexHeader.byteCount).flatMap(WALIndexHeader.init(bytes:))
            if let before, let after, before.state == after.state { return after }
            try db.execute(sql: "COMMIT")
        }
        try db.execute(sql: "BEGIN DEFERRED")
        _ = try SQLRequest<Int>(sql: "SELECT count(*) FROM sqlite_master").fetchOne(db)
        return nil
    }

    /// Reads the table's b-tree in `snapshot`, the state of the transaction
    /// `beginSnapshot` began; afterwards `isStarted` tells whether changes
    /// can be tracked from it (not for a `WITHOUT ROWID` table, a view, an
    /// encrypted database, or without a snapshot).
    package mutating func start(_ db: Database, snapshot: WALIndexHeader?) throws {
        tree = nil
        self.snapshot = nil
        guard let snapshot else { return }
        do {
            _ = try frames.advance(to: snapshot, in: db)
            let first = try page(1, in: db, snapshot: snapshot)
            guard first.count >= 100, first.starts(with: Array("SQLite format 3\0".utf8)) else { return }
            usableSize = snapshot.pageSize - Int(first[20])
            // SQLite's least usable size: the cell formulas need no less.
            guard usableSize >= 480 else { return }
            schemaCookie = Array(first[40..<44])
            let root = try SQLRequest<Int64>(
                sql: "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                arguments: [table]
            ).fetchOne(db)
            guard let root, root > 0, root <= Int64(UInt32.max) else { return }
            tree = try TableBTree(root: UInt32(root), usableSize: usableSize) { try page($0, in: db, snapshot: snapshot) }
            self.snapshot = snapshot
        } catch is TablePageError {
            return
        }
    }

    /// Whether the last `start` read the table's tree.
    package var isStarted: Bool { tree != nil }

    /// The rows that the commits between the previous snapshot and
    /// `snapshot` may have changed; nil when they cannot be known (then
    /// fetch everything and call `start`). The tracker moves to `snapshot`
    /// only when it returns changes.
    package mutating func changes(_ db: Database, snapshot: WALIndexHeader?) throws -> Changes? {
        guard let snapshot, let previous = self.snapshot, var tree else { return nil }
        if snapshot.state == previous.state { return Changes() }
        // A restarted log has new salts: the first one plus one when the
        // connection that restarts it restarted it before, random ones
        // otherwise (its first restart, such as the first commit after a
        // `wal_checkpoint(TRUNCATE)` by a new connection). Either way the
        // frames read below are those of the new generation, from its
        // first one, and the commit count tells whether they hold every
        // commit since the previous state.
        if snapshot.salts == previous.salts, snapshot.lastFrame < previous.lastFrame { return nil }
        let advance: WALFrameIndex.Advance
        do {
            advance = try frames.advance(to: snapshot, in: db)
        } catch is TablePageError {
            return nil
        }
        // Every commit since the previous state is in the frames read (a
        // commit made before a restart of the log is not).
        guard snapshot.changeCounter &- previous.changeCounter == UInt32(advance.commits) else { return nil }
        // Pages of other tables and indexes cost nothing here: only the
        // tree's own written pages count (new pages of the tree are reached
        // from written ones, and read with the rows they hold).
        let writtenTablePages = advance.pages.count { tree.owns(page: $0) }
        guard writtenTablePages <= max(64, tree.pageCount / 2) else { return nil }
        do {
            if advance.pages.contains(1) {
                let first = try page(1, in: db, snapshot: snapshot)
                guard first.count >= 44, first[40..<44].elementsEqual(schemaCookie) else { return nil }
            }
            let changes = try tree.update(writtenPages: advance.pages, usableSize: usableSize) {
                try page($0, in: db, snapshot: snapshot)
            }
            self.tree = tree
            self.snapshot = snapshot
            return changes
        } catch is TablePageError {
            return nil
        }
    }

    /// The bytes of a page in the transaction's state.
    private func page(_ number: UInt32, in db: Database, snapshot: WALIndexHeader) throws -> [UInt8] {
        let size = snapshot.pageSize
        let bytes: [UInt8]?
        if snapshot.backfilledFrames < snapshot.lastFrame, let frame = frames.frame(of: number) {
            bytes = try db.readStoredFile(.journal, offset: frames.offset(of: frame) + 24, count: size)
        } else {
            guard number >= 1 else { throw TablePageError() }
            bytes = try db.readStoredFile(.database, offset: Int64(number - 1) * Int64(size), count: size)
        }
        guard let bytes else { throw TablePageError() }
        return bytes
    }
}
