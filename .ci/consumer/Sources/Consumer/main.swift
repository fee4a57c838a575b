import ReactiveSQLite

// Opens a database, observes a count, and prints it: enough to link the
// library and its core modules.
let dbQueue = try DatabaseQueue()
try dbQueue.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)") }
let count = try dbQueue.read { db in try SQLRequest<Int>(sql: "SELECT count(*) FROM t").fetchOne(db) }
print("consumer: \(count ?? -1) rows")
