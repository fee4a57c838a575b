import DatabaseTestSupport
@testable import ReactiveSQLite
import Testing
import TestSupport

#if !SQLCipher
/// `KeyedResult`: results patched from one another compare by the keys
/// their patches changed, back through results that were skipped, and
/// give the same difference as the comparison of every row.
@Suite struct KeyedResultTests {
    @Test(arguments: [0, 1, 5, 40])
    func aResultComparesByKeyWithAnyEarlierResultOfItsPatches(skipped: Int) throws {
        let test = try DatabaseKind.inMemoryQueue.make(sql: """
            CREATE TABLE item(id INTEGER PRIMARY KEY, name, score);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
            INSERT INTO item SELECT i, 'item ' || i, i % 10 FROM n;
            """)
        let sql = "SELECT * FROM item"
        var random = SplitMix64(seed: UInt64(skipped))
        try test.writer.writeWithoutTransaction { db in
            let columnNames = try db.makeStatement(sql: sql).columnNames
            let lookup = try #require(try RowLookup(
                sql: sql, arguments: [], columnNames: columnNames, keyIndex: 0, in: db))
            var generation = 0
            func next() -> Int {
                generation += 1
                return generation
            }
            let base = try #require(try KeyedResult.fetch(
                db, sql: sql, arguments: [], columnNames: columnNames, keyIndex: 0, generation: next()))
            var result = base
            for _ in 0...skipped {
                var keys: Set<Int64> = []
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    let id = Int64.random(in: 1...2_100, using: &random)
                    keys.insert(id)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: try db.execute(sql: "UPDATE item SET score = score + 1 WHERE id = ?", arguments: [id])
                    case 1: try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id])
                    default: try db.execute(sql: "INSERT OR REPLACE INTO item VALUES (?, 'new', 0)", arguments: [id])
                    }
                }
                result = try #require(try result.patched(db, keys: keys.sorted(), lookup: lookup, generation: next()))
            }
            let fresh = try #require(try KeyedResult.fetch(
                db, sql: sql, arguments: [], columnNames: columnNames, keyIndex: 0, generation: next()))
            #expect(result.allRows == fresh.allRows)
            // By key: the patches go back to the base (fewer than 32 steps)...
            let byKey = result.difference(from: base)
            #expect(result.patch?.keysChanged(since: base.generation) != nil || skipped >= KeyedResult.Patch.maxSteps)
            // ...or every row compared: the same difference.
            let whole = fresh.difference(from: base)
            #expect(byKey == whole)
            #expect(try #require(byKey).isEmpty == false)
        }
    }
}
#endif
