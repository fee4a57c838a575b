#if !SQLCipher
import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// The b-tree that `TableBTree` reads from the files, against SQLite's own
/// account of the table's pages (`dbstat`), and the rows it tells a commit
/// may have changed. (Not with the SQLCipher trait: encrypted pages.)
@Suite struct TableBTreeTests {
    /// A WAL database whose table spans interior, leaf and overflow pages.
    static func makeDatabase() throws -> TestDatabase {
        try TestDatabase.walPool(pageSize: 1024, sql: """
            CREATE TABLE item(id INTEGER PRIMARY KEY, name, score);
            CREATE TABLE other(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO item SELECT i * 3, CASE WHEN i % 97 = 0 THEN randomblob(5000) ELSE 'item ' || i END, i FROM n;
            INSERT INTO other VALUES (randomblob(3000));
            """)
    }

    /// The tree of `item` in the transaction's state, read from the files.
    static func readTree(_ db: Database) throws -> TableBTree {
        let pageSize = try #require(try SQLRequest<Int>(sql: "PRAGMA page_size").fetchOne(db))
        let root = try #require(try SQLRequest<Int>(sql: "SELECT rootpage FROM sqlite_master WHERE name = 'item'").fetchOne(db))
        return try TableBTree(root: UInt32(root), usableSize: pageSize) { page in
            try #require(try db.readStoredFile(.database, offset: Int64(page - 1) * Int64(pageSize), count: pageSize))
        }
    }

    @Test func theTreeHasThePagesDbstatLists() throws {
        let test = try Self.makeDatabase()
        try test.writer.writeWithoutTransaction { db in
            // Everything in the database file, where `readTree` reads.
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            let tree = try Self.readTree(db)
            let pages = try SQLRequest<Row>(sql: "SELECT pageno, pagetype FROM dbstat WHERE name = 'item'").fetchAll(db)
            let treePages = try Set(pages.filter { try $0["pagetype"] as String != "overflow" }.map { try UInt32($0["pageno"] as Int) })
            let overflowPages = try Set(pages.filter { try $0["pagetype"] as String == "overflow" }.map { try UInt32($0["pageno"] as Int) })
            #expect(tree.pages == treePages)
            #expect(tree.overflowPages == overflowPages)
            #expect(!overflowPages.isEmpty && tree.pageCount > 10)
        }
    }

    @Test func theFramesOfACommitNameTheRowsItChanged() throws {
        let test = try Self.makeDatabase()
        try test.writer.writeWithoutTransaction { db in
            // An empty log: the frames read below are those of the commits.
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            var tree = try Self.readTree(db)
            try db.execute(sql: "UPDATE item SET score = -1 WHERE id = 4500")
            try db.execute(sql: "DELETE FROM item WHERE id BETWEEN 6000 AND 6300")
            let bytes = try #require(try db.walIndexBytes(count: WALIndexHeader.byteCount))
            let header = try #require(WALIndexHeader(bytes: bytes))
            var frames = WALFrameIndex()
            let advance = try frames.advance(to: header, in: db)
            #expect(advance.commits == 2)
            let pageSize = header.pageSize
            let changes = try tree.update(writtenPages: advance.pages, usableSize: pageSize) { page in
                if let frame = frames.frame(of: page) {
                    return try #require(try db.readStoredFile(.journal, offset: frames.offset(of: frame) + 24, count: pageSize))
                }
                return try #require(try db.readStoredFile(.database, offset: Int64(page - 1) * Int64(pageSize), count: pageSize))
            }
            #expect(changes.rowIDs.contains(4500))
            // Every deleted row is in a range of the leaves written or removed.
            for id in stride(from: 6003, through: 6300, by: 3) {
                #expect(changes.ranges.contains { $0.contains(Int64(id)) }, "row \(id)")
            }
            // Few rows besides: the leaves of 1 KB around them.
            let rows = changes.rowIDs.count + changes.ranges.reduce(0) { $0 + Int(($1.upperBound - $1.lowerBound) / 3) + 1 }
            #expect(rows < 500, "\(rows) rows to read again")
            // The tree read again from scratch is the updated one.
            #expect(try Self.readTreeAfterCheckpoint(db).pages == tree.pages)
        }
    }

    /// An advance that fails midway (a header that names frames the log
    /// does not hold) records nothing: the next advance reports every
    /// page written since the last one that succeeded.
    @Test func anAdvanceThatFailsRecordsNoFrame() throws {
        let test = try Self.makeDatabase()
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            var frames = WALFrameIndex()
            try db.execute(sql: "UPDATE item SET score = -1 WHERE id = 3")
            let firstBytes = try #require(try db.walIndexBytes(count: WALIndexHeader.byteCount))
            let first = try #require(WALIndexHeader(bytes: firstBytes))
            _ = try frames.advance(to: first, in: db)
            try db.execute(sql: "UPDATE item SET score = -2 WHERE id = 4500; UPDATE item SET score = -3 WHERE id = 8997")
            let secondBytes = try #require(try db.walIndexBytes(count: WALIndexHeader.byteCount))
            let second = try #require(WALIndexHeader(bytes: secondBytes))
            #expect(second.lastFrame > first.lastFrame + 1)
            var beyond = second
            beyond.lastFrame += 3
            #expect(throws: TablePageError.self) { try frames.advance(to: beyond, in: db) }
            #expect(frames.indexedFrames == first.lastFrame)
            let advance = try frames.advance(to: second, in: db)
            #expect(advance.commits == 2)
            var expected = WALFrameIndex()
            let all = try expected.advance(to: second, in: db)
            let firstPages = try expected.advance(to: first, in: db).pages
            // Every page of the two later commits, read once the log is whole.
            #expect(advance.pages.isSubset(of: all.pages))
            #expect(advance.pages.union(firstPages) == all.pages)
            #expect(!advance.pages.isEmpty)
        }
    }

    /// The full-refresh threshold counts the watched table's pages only: a
    /// commit that writes hundreds of pages of another table and one row
    /// of the watched one stays incremental.
    @Test func pagesWrittenToOtherTablesDoNotMakeTheTrackerGiveUp() throws {
        let test = try Self.makeDatabase()
        try test.writer.writeWithoutTransaction { db in
            var tracker = try #require(try TablePageTracker(table: "item", in: db))
            try tracker.start(db, snapshot: try TablePageTracker.beginSnapshot(db))
            try db.execute(sql: "COMMIT")
            #expect(tracker.isStarted)
            try db.execute(sql: """
                BEGIN;
                UPDATE item SET score = -1 WHERE id = 4500;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
                INSERT INTO other SELECT randomblob(900) FROM n;
                COMMIT;
                """)
            let snapshot = try TablePageTracker.beginSnapshot(db)
            defer { try? db.execute(sql: "COMMIT") }
            // More pages than the tree's half, and than 64: all of `other`.
            let bytes = try #require(try db.walIndexBytes(count: WALIndexHeader.byteCount))
            var frames = WALFrameIndex()
            let header = try #require(WALIndexHeader(bytes: bytes))
            #expect(try frames.advance(to: header, in: db).pages.count > 400)
            let changes = try #require(try tracker.changes(db, snapshot: snapshot))
            #expect(changes.rowIDs.contains(4500))
        }
    }

    /// `sqlite3 db 'PRAGMA wal_checkpoint(TRUNCATE)'; sqlite3 db 'UPDATE ...'`:
    /// the second connection's first commit restarts the emptied log with
    /// random salts (not the previous first salt plus one). The tracker
    /// still reads only the new frames.
    @Test func aLogRestartedWithRandomSaltsKeepsTheTrackingIncremental() throws {
        let test = try Self.makeDatabase()
        let path = try #require(test.path)
        var tracker = try test.writer.writeWithoutTransaction { db in try #require(try TablePageTracker(table: "item", in: db)) }
        let before = try test.writer.writeWithoutTransaction { db in
            let snapshot = try TablePageTracker.beginSnapshot(db)
            defer { try? db.execute(sql: "COMMIT") }
            try tracker.start(db, snapshot: snapshot)
            return try #require(snapshot)
        }
        #expect(tracker.isStarted)
        // Two new connections, one after the other, as two shell commands.
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE item SET score = -1 WHERE id = 4500")
        }
        try test.writer.writeWithoutTransaction { db in
            let snapshot = try #require(try TablePageTracker.beginSnapshot(db))
            defer { try? db.execute(sql: "COMMIT") }
            // The case at hand: new salts that do not follow the previous ones.
            func firstSalt(_ header: WALIndexHeader) -> UInt32 { header.salts[0..<4].reduce(0) { $0 << 8 | UInt32($1) } }
            #expect(snapshot.salts != before.salts)
            #expect(firstSalt(snapshot) != firstSalt(before) &+ 1)
            let changes = try #require(try tracker.changes(db, snapshot: snapshot))
            #expect(changes.rowIDs.contains(4500))
            // Read from the pages the commit wrote: the rows of a few leaves, not
            // the 3 000 of the table.
            let rows = changes.rowIDs.count + changes.ranges.reduce(0) { $0 + Int(($1.upperBound - $1.lowerBound) / 3) + 1 }
            #expect(rows < 300, "\(rows) rows to read again")
        }
    }

    static func readTreeAfterCheckpoint(_ db: Database) throws -> TableBTree {
        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        return try readTree(db)
    }
}
#endif
