import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// Adversarial tests of records, requests, fetch calls, values and rows:
/// what real apps store and query, compared with SQLite, the documentation,
/// and GRDB where ours claims to behave like it.
// On its own thread (see `DedicatedThreadTrait`): its cases compute for
// seconds, and on Swift's cooperative pool (two threads in CI) they starved
// the parallel debug run; in two runs of it, this suite and others of two
// minutes exceeded their limit, while they take 6 to 8 s alone.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct RecordAdversarialTests {
    /// A fresh in-memory database set up with `sql`.
    static func database(_ sql: String) throws -> TestDatabase {
        try DatabaseKind.inMemoryQueue.make(sql: sql)
    }

    // MARK: - Decimal and URL

    struct Product: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var price: Decimal
    }

    /// A `Decimal` written by the record into a `DECIMAL(10,2)` column (NUMERIC
    /// affinity) must read back (GRDB stores and reads Decimal as a database value).
    @Test func decimalInANumericColumnReadsBack() throws {
        let test = try Self.database("CREATE TABLE product (id INTEGER PRIMARY KEY, price DECIMAL(10,2))")
        try test.writer.write { (db) throws in
            let product = Product(id: 1, price: Decimal(string: "3.14")!)
            try product.insert(db)
            #expect(try Product.fetchOne(db, key: 1) == product)
        }
    }

    /// A `Decimal` column written by other tools as a REAL must decode.
    @Test func decimalDecodesFromARealWrittenByOtherTools() throws {
        let test = try Self.database("""
            CREATE TABLE product (id INTEGER PRIMARY KEY, price);
            INSERT INTO product VALUES (1, 2.5), (2, 3);
            """)
        try test.writer.read { (db) throws in
            let products = try Product.orderByPrimaryKey().fetchAll(db)
            #expect(products.map(\.price) == [Decimal(string: "2.5")!, Decimal(3)])
        }
    }

    struct Link: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var url: URL
    }

    /// A URL is stored as its plain text, as GRDB stores it, so that SQL
    /// (`WHERE url = 'https://...'`) and other tools see it.
    @Test func urlIsStoredAsItsText() throws {
        let test = try Self.database("CREATE TABLE link (id INTEGER PRIMARY KEY, url TEXT)")
        try test.writer.write { (db) throws in
            try Link(id: 1, url: URL(string: "https://example.com/a?b=1")!).insert(db)
            let stored = try String.fetchOne(db, sql: "SELECT url FROM link")
            #expect(stored == "https://example.com/a?b=1")
        }
    }

    /// A URL text written by other tools decodes.
    @Test func urlDecodesFromPlainText() throws {
        let test = try Self.database("""
            CREATE TABLE link (id INTEGER PRIMARY KEY, url TEXT);
            INSERT INTO link VALUES (1, 'https://example.com/a');
            """)
        try test.writer.read { (db) throws in
            let link = try Link.fetchOne(db, key: 1)
            #expect(link?.url == URL(string: "https://example.com/a"))
        }
    }

    // MARK: - Nested JSON

    struct Event: Codable, FetchableRecord, PersistableRecord, Equatable {
        struct Payload: Codable, Equatable {
            var at: Date
            var bytes: Data
        }
        var id: Int64
        var payload: Payload
    }

    /// A date nested in a JSON column: GRDB encodes it as milliseconds since
    /// 1970, so a database written by a GRDB app must decode to the same date
    /// (here it decodes as seconds since 2001, silently 31 years and a
    /// thousandfold off).
    @Test func aNestedDateInJSONIsReadAsGRDBWroteIt() throws {
        let test = try Self.database("""
            CREATE TABLE event (id INTEGER PRIMARY KEY, payload TEXT);
            INSERT INTO event VALUES (1, '{"at":1704164645678,"bytes":"AAE="}');
            """)
        try test.writer.read { (db) throws in
            let event = try Event.fetchOne(db, key: 1)
            #expect(event?.payload.at == Date(timeIntervalSince1970: 1_704_164_645.678))
            #expect(event?.payload.bytes == Data([0, 1]))
        }
    }

    /// Nested values round trip, whatever the strategy.
    @Test func nestedValuesRoundTrip() throws {
        let test = try Self.database("CREATE TABLE event (id INTEGER PRIMARY KEY, payload TEXT)")
        try test.writer.write { (db) throws in
            let event = Event(id: 1, payload: .init(at: Date(timeIntervalSince1970: 1_704_164_645.678), bytes: Data([0, 1])))
            try event.insert(db)
            #expect(try Event.fetchOne(db, key: 1) == event)
        }
    }

    // MARK: - Values from the database that do not fit

    enum Status: String, Codable { case active, archived }
    enum Priority: Int, Codable { case low = 1, high = 2 }

    struct Task: Decodable, FetchableRecord {
        var status: Status
        var priority: Priority?
    }

    struct Small: Decodable, FetchableRecord {
        var tiny: Int8
    }

    struct Unsigned: Decodable, FetchableRecord {
        var big: UInt64
    }

    struct Whole: Decodable, FetchableRecord {
        var count: Int
    }

    struct Flag: Decodable, FetchableRecord {
        var flag: Bool
    }

    /// Values that do not fit their property throw a `RowDecodingError`
    /// naming the column, never trap.
    @Test func valuesThatDoNotFitThrowRowDecodingErrors() throws {
        let test = try Self.database("")
        try test.writer.read { (db) throws in
            func error(_ body: () throws -> Void) -> RowDecodingError? {
                do {
                    try body()
                    return nil
                } catch let error as RowDecodingError {
                    return error
                } catch {
                    Issue.record("unexpected \(error)")
                    return nil
                }
            }
            let unknownStatus = error { _ = try Task.fetchAll(db, sql: "SELECT 'deleted' AS status, NULL AS priority") }
            #expect(unknownStatus?.column == "status")
            let unknownPriority = error { _ = try Task.fetchAll(db, sql: "SELECT 'active' AS status, 3 AS priority") }
            #expect(unknownPriority?.column == "priority")
            let textPriority = error { _ = try Task.fetchAll(db, sql: "SELECT 'active' AS status, 'high' AS priority") }
            #expect(textPriority?.column == "priority")
            let error1 = error { _ = try Small.fetchAll(db, sql: "SELECT 128 AS tiny") }
            #expect(error1?.kind == .valueMismatch)
            let error2 = error { _ = try Small.fetchAll(db, sql: "SELECT -129 AS tiny") }
            #expect(error2?.kind == .valueMismatch)
            let error3 = error { _ = try Unsigned.fetchAll(db, sql: "SELECT -1 AS big") }
            #expect(error3?.kind == .valueMismatch)
            let error4 = error { _ = try Unsigned.fetchAll(db, sql: "SELECT 1e20 AS big") }
            #expect(error4?.kind == .valueMismatch)
            let error5 = error { _ = try Whole.fetchAll(db, sql: "SELECT 3.5 AS count") }
            #expect(error5?.kind == .valueMismatch)
            let error6 = error { _ = try Whole.fetchAll(db, sql: "SELECT 9.3e18 AS count") }
            #expect(error6?.kind == .valueMismatch)
            let error7 = error { _ = try Whole.fetchAll(db, sql: "SELECT 'abc' AS count") }
            #expect(error7?.kind == .valueMismatch)
            let error8 = error { _ = try Flag.fetchAll(db, sql: "SELECT 'true' AS flag") }
            #expect(error8?.kind == .valueMismatch)
            let error9 = error { _ = try Whole.fetchAll(db, sql: "SELECT 1 AS other") }
            #expect(error9?.kind == .columnNotFound)
            // Exact reals are integers.
            #expect(try Whole.fetchAll(db, sql: "SELECT 3.0 AS count").map(\.count) == [3])
            #expect(try Unsigned.fetchAll(db, sql: "SELECT 9223372036854775807 AS big").map(\.big) == [UInt64(Int64.max)])
        }
    }

    struct Huge: Encodable, PersistableRecord {
        static let databaseTableName = "huge"
        var big: UInt64
    }

    /// An unsigned integer above Int64.max throws an EncodingError, not a trap.
    @Test func anUnsignedIntegerAboveInt64MaxThrowsAnEncodingError() throws {
        let test = try Self.database("CREATE TABLE huge (big INTEGER)")
        try test.writer.write { (db) throws in
            #expect(throws: EncodingError.self) { try Huge(big: .max).insert(db) }
            try Huge(big: UInt64(Int64.max)).insert(db)
            #expect(try Int64.fetchOne(db, sql: "SELECT big FROM huge") == .max)
        }
    }

    // MARK: - Other values

    struct Geometry: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var width: CGFloat
        var ratio: Float
        var minimum: Int64
        var maximum: Int64
    }

    @Test func cgFloatFloatAndInt64BoundsRoundTrip() throws {
        let test = try Self.database("CREATE TABLE geometry (id INTEGER PRIMARY KEY, width REAL, ratio REAL, minimum INTEGER, maximum INTEGER)")
        try test.writer.write { (db) throws in
            let geometry = Geometry(id: 1, width: 12.75, ratio: 0.1, minimum: .min, maximum: .max)
            try geometry.insert(db)
            #expect(try Geometry.fetchOne(db, key: 1) == geometry)
            #expect(try Double.fetchOne(db, sql: "SELECT width FROM geometry") == 12.75)
        }
    }

    /// Texts with NUL characters, and large blobs and texts, round trip.
    @Test func nulCharactersAndLargeValuesRoundTrip() throws {
        let test = try Self.database("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, blob BLOB)")
        try test.writer.write { (db) throws in
            let text = "a\u{0}b\u{0}"
            let bigText = String(repeating: "é", count: 3_000_000)
            let bigBlob = Data((0..<8_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try db.execute(sql: "INSERT INTO t VALUES (1, ?, ?), (2, ?, NULL)", arguments: [text, bigBlob, bigText])
            #expect(try String.fetchOne(db, sql: "SELECT text FROM t WHERE id = 1") == text)
            #expect(try Int.fetchOne(db, sql: "SELECT length(CAST(text AS BLOB)) FROM t WHERE id = 1") == 4)
            #expect(try Data.fetchOne(db, sql: "SELECT blob FROM t WHERE id = 1") == bigBlob)
            #expect(try String.fetchOne(db, sql: "SELECT text FROM t WHERE id = 2") == bigText)
            let row = try Row.fetchOne(db, sql: "SELECT * FROM t WHERE id = 1")
            #expect(try row?["text"] as String? == text)
            #expect(try SQLRequest<Int>(sql: "SELECT id FROM t WHERE text = ?", arguments: [text]).fetchAll(db) == [1])
        }
    }

    // MARK: - Dates written by other tools

    struct Stamp: Decodable, FetchableRecord {
        var at: Date
    }

    @Test(arguments: [
        ("'2024-01-02'", 1_704_153_600.0),
        ("'2024-01-02 03:04:05'", 1_704_164_645.0),
        ("'2024-01-02 03:04:05.678'", 1_704_164_645.678),
        ("'2024-01-02T03:04:05Z'", 1_704_164_645.0),
        ("'2024-01-02T03:04:05.678+01:00'", 1_704_161_045.678),
        ("'2024-01-02 03:04'", 1_704_164_640.0),
        ("datetime(1704164645, 'unixepoch')", 1_704_164_645.0),
        ("strftime('%Y-%m-%dT%H:%M:%fZ', 1704164645.678, 'unixepoch')", 1_704_164_645.678),
        ("1704164645", 1_704_164_645.0),
        ("1704164645.5", 1_704_164_645.5),
    ])
    func datesWrittenByOtherToolsDecode(sql: String, seconds: Double) throws {
        let test = try Self.database("")
        try test.writer.read { (db) throws in
            let stamp = try Stamp.fetchOne(db, sql: "SELECT \(sql) AS at")
            #expect(stamp?.at.timeIntervalSince1970 == seconds)
        }
    }

    // MARK: - Persistable records on awkward tables

    /// Columns named like SQL keywords, with quotes and spaces, in a table
    /// whose name has them too.
    struct Odd: Codable, FetchableRecord, MutablePersistableRecord, Equatable {
        static let databaseTableName = "odd \"table\" name"
        var id: Int64?
        var order: Int
        var group: String
        var select: String?
        var quoted: String

        enum CodingKeys: String, CodingKey {
            case id, order, group, select
            case quoted = "the \"quoted\" column"
        }

        mutating func didInsert(_ inserted: InsertionSuccess) {
            id = inserted.rowID
        }
    }

    @Test func keywordQuotedAndSpacedNamesWriteAndRead() throws {
        let test = try Self.database("""
            CREATE TABLE "odd ""table"" name" (
                id INTEGER PRIMARY KEY, "order" INTEGER, "group" TEXT UNIQUE, "select" TEXT,
                "the ""quoted"" column" TEXT)
            """)
        try test.writer.write { (db) throws in
            var odd = Odd(id: nil, order: 1, group: "a", select: nil, quoted: "q")
            try odd.insert(db)
            #expect(odd.id == 1)
            #expect(try Odd.fetchAll(db) == [odd])
            let old = odd
            odd.order = 2
            odd.select = "s"
            #expect(try odd.updateChanges(db, from: old))
            try odd.update(db, columns: ["ORDER", "the \"quoted\" column"])
            #expect(try Odd.fetchOne(db, key: 1) == odd)
            // An upsert that conflicts on the UNIQUE "group" updates that row.
            var other = Odd(id: nil, order: 9, group: "a", select: nil, quoted: "z")
            try other.upsert(db)
            #expect(other.id == 1)
            #expect(try Odd.fetchAll(db) == [other])
            #expect(try other.exists(db))
            try other.save(db)
            #expect(try other.delete(db))
            #expect(try Odd.fetchCount(db) == 0)
            #expect(try Odd.filter(sql: "\"order\" > ?", arguments: [0]).order(sql: "\"group\"").fetchAll(db) == [])
        }
    }

    /// A rowid table whose compound primary key holds a NULL (SQLite allows
    /// it outside WITHOUT ROWID tables): GRDB's `filter(key:)` and
    /// `deleteOne(_:key:)` compare a nil key value with `IS NULL`, and find
    /// the row.
    struct Membership: Codable, FetchableRecord, PersistableRecord, Equatable {
        var teamId: Int64
        var playerId: Int64?
        var role: String
    }

    @Test func aCompoundKeyWithANullPartFindsItsRowAsInGRDB() throws {
        let test = try Self.database("""
            CREATE TABLE membership (teamId INTEGER, playerId INTEGER, role TEXT, PRIMARY KEY (teamId, playerId));
            INSERT INTO membership VALUES (1, NULL, 'coach');
            """)
        try test.writer.write { (db) throws in
            let found = try Membership.filter(key: ["teamId": 1, "playerId": nil]).fetchOne(db)
            #expect(found == Membership(teamId: 1, playerId: nil, role: "coach"))
            #expect(try Membership.deleteOne(db, key: ["teamId": 1, "playerId": nil]))
        }
    }

    /// A record that encodes more columns than the table has throws a
    /// DatabaseError; fewer columns leave the others to their defaults.
    struct Narrow: Encodable, PersistableRecord {
        static let databaseTableName = "wide"
        var id: Int64
    }

    struct TooWide: Encodable, PersistableRecord {
        static let databaseTableName = "wide"
        var id: Int64
        var missing: Int
    }

    @Test func recordsWithFewerOrMoreColumnsThanTheTable() throws {
        let test = try Self.database("CREATE TABLE wide (id INTEGER PRIMARY KEY, a TEXT DEFAULT 'x', b INTEGER NOT NULL DEFAULT 7)")
        try test.writer.write { (db) throws in
            try Narrow(id: 1).insert(db)
            #expect(try Row.fetchOne(db, sql: "SELECT * FROM wide") == Row(["id": 1, "a": "x", "b": 7]))
            try Narrow(id: 1).update(db)
            #expect(throws: DatabaseError.self) { try TooWide(id: 2, missing: 0).insert(db) }
            #expect(throws: DatabaseError.self) { try Narrow(id: 1).update(db, columns: ["a"]) }
            #expect(try Narrow(id: 1).exists(db))
            #expect(throws: RecordError.self) { try Narrow(id: 2).update(db) }
        }
    }

    /// WITHOUT ROWID tables and tables without primary key.
    struct Tag: Codable, FetchableRecord, PersistableRecord, Equatable {
        var name: String
        var lang: String
        var uses: Int
    }

    struct Note: Codable, FetchableRecord, MutablePersistableRecord, Equatable {
        var rowid: Int64?
        var body: String
        mutating func didInsert(_ inserted: InsertionSuccess) { rowid = inserted.rowID }
    }

    @Test func withoutRowIDAndKeylessTables() throws {
        let test = try Self.database("""
            CREATE TABLE tag (name TEXT, lang TEXT, uses INTEGER, PRIMARY KEY (lang, name)) WITHOUT ROWID;
            CREATE TABLE note (body TEXT);
            """)
        try test.writer.write { (db) throws in
            var tag = Tag(name: "swift", lang: "en", uses: 1)
            try tag.insert(db)
            tag.uses = 2
            try tag.upsert(db)
            try tag.save(db)
            #expect(try Tag.filter(key: ["name": "swift", "lang": "en"]).fetchAll(db) == [tag])
            #expect(try tag.exists(db))
            #expect(try tag.delete(db))
            var note = Note(rowid: nil, body: "a")
            try note.insert(db)
            #expect(note.rowid == 1)
            note.body = "b"
            try note.update(db)
            var second = Note(rowid: nil, body: "c")
            try second.save(db)
            #expect(second.rowid == 2)
            #expect(try Note.orderByPrimaryKey().fetchAll(db) == [Note(rowid: nil, body: "b"), Note(rowid: nil, body: "c")])
            #expect(try SQLRequest<Note>(sql: "SELECT rowid, body FROM note ORDER BY rowid").fetchAll(db) == [note, second])
            #expect(try Note.deleteOne(db, key: 1))
        }
    }

    // MARK: - Wide records

    /// A record of 70 columns: its updates of changed columns go beyond the
    /// 64-bit mask.
    struct Wide: FetchableRecord, PersistableRecord, Equatable {
        static let databaseTableName = "wide70"
        var values: [Int]

        init(values: [Int]) { self.values = values }

        init(row: Row) throws {
            values = try (0..<70).map { try row["c\($0)"] }
        }

        func encode(to container: inout PersistenceContainer) throws {
            for (index, value) in values.enumerated() { container["c\(index)"] = value }
        }
    }

    @Test func updatesOfWideRecordsWriteTheirChangedColumns() throws {
        let columns = (0..<70).map { $0 == 0 ? "c0 INTEGER PRIMARY KEY" : "c\($0) INTEGER" }.joined(separator: ", ")
        let test = try Self.database("CREATE TABLE wide70 (\(columns))")
        try test.writer.write { (db) throws in
            let old = Wide(values: Array(0..<70))
            try old.insert(db)
            var new = old
            new.values[66] = -66
            new.values[3] = -3
            #expect(try new.updateChanges(db, from: old))
            #expect(try Wide.fetchOne(db, key: 0) == new)
            var newer = new
            newer.values[69] = -69
            #expect(try newer.updateChanges(db, from: new))
            #expect(try Wide.fetchOne(db, key: 0) == newer)
            var columnsOnly = newer
            columnsOnly.values[65] = 1000
            columnsOnly.values[1] = 1000
            try columnsOnly.update(db, columns: ["c65"])
            var expected = newer
            expected.values[65] = 1000
            #expect(try Wide.fetchOne(db, key: 0) == expected)
            #expect(try !expected.updateChanges(db, from: expected))
            // A change of the key alone: the row of the new key, which does not exist.
            var moved = expected
            moved.values[0] = 1
            #expect(throws: RecordError.self) { try moved.updateChanges(db, from: expected) }
        }
    }

    // MARK: - Requests

    struct Player: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var name: String
        var score: Int?
    }

    static let playersSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER);
        INSERT INTO player VALUES (1, 'Arthur', 100), (2, 'Barbara', 200), (3, 'Craig', 150), (4, 'David', NULL);
        """

    /// An ordering term that ends with a `--` comment must not swallow the
    /// LIMIT that follows it: the request returns 2 rows, not all of them.
    @Test func anOrderingWithATrailingCommentKeepsTheLimit() throws {
        let test = try Self.database(Self.playersSQL)
        try test.writer.read { (db) throws in
            let players = try Player.all().order(sql: "score DESC -- best first").limit(2).fetchAll(db)
            #expect(players.map(\.id) == [2, 3])
        }
    }

    /// A condition that ends with a `--` comment must not swallow the
    /// closing parenthesis and the clauses that follow.
    @Test func aFilterWithATrailingCommentKeepsTheRestOfTheRequest() throws {
        let test = try Self.database(Self.playersSQL)
        try test.writer.read { (db) throws in
            let players = try Player.all()
                .filter(sql: "score > ? -- good players", arguments: [120])
                .orderByPrimaryKey()
                .fetchAll(db)
            #expect(players.map(\.id) == [2, 3])
        }
    }

    /// Two conditions that use the same parameter name with their own
    /// values: each condition must see its own value, or the request must
    /// fail (GRDB stops with "already defined statement argument"), not
    /// silently bind the last value to both.
    @Test func twoFiltersWithTheSameParameterNameKeepTheirOwnValues() throws {
        let test = try Self.database(Self.playersSQL)
        try test.writer.read { (db) throws in
            let request = Player.all()
                .filter(sql: "score > :value", arguments: ["value": 100])
                .filter(sql: "id < :value", arguments: ["value": 3])
                .orderByPrimaryKey()
            do {
                let players = try request.fetchAll(db)
                #expect(players.map(\.id) == [2])
            } catch is DatabaseError {
                // A clear error is acceptable too.
            }
        }
    }

    /// A cursor whose element fails to decode throws once, then ends; its
    /// SQL runs again afterwards. A join's duplicate column names read the
    /// leftmost column.
    @Test func cursorsAfterAnErrorAndJoinsWithDuplicateNames() throws {
        let test = try Self.database(Self.playersSQL)
        try test.writer.read { (db) throws in
            let sql = "SELECT id, name, score FROM player ORDER BY id"
            let cursor = try Player.fetchCursor(db, sql: sql)
            #expect(try cursor.next()?.id == 1)
            let scores = try Int.fetchCursor(db, sql: "SELECT score FROM player ORDER BY id")
            #expect(try scores.next() == 100)
            #expect(try scores.next() == 200)
            #expect(try scores.next() == 150)
            #expect(throws: RowDecodingError.self) { try scores.next() }
            #expect(try scores.next() == nil)
            #expect(try Int.fetchAll(db, sql: "SELECT score FROM player WHERE score IS NOT NULL ORDER BY id") == [100, 200, 150])
            #expect(try cursor.next()?.id == 2)
            let rows = try Row.fetchAll(db, sql: """
                SELECT a.*, b.* FROM player a JOIN player b ON b.id = a.id + 1 ORDER BY a.id
                """)
            #expect(rows.count == 3)
            #expect(try rows.map { try $0["id"] as Int } == [1, 2, 3])
            #expect(try rows.map { try $0[3] as Int } == [2, 3, 4])
            let joined = try Player.fetchAll(db, sql: "SELECT b.*, a.* FROM player a JOIN player b ON b.id = a.id + 1 ORDER BY a.id")
            #expect(joined.map(\.id) == [2, 3, 4])
        }
    }

    /// Query interface requests give what the same SQL gives.
    @Test func queryInterfaceRequestsMatchTheirSQL() throws {
        let test = try Self.database(Self.playersSQL)
        try test.writer.read { (db) throws in
            let request = Player.all()
                .filter(sql: "score >= :min", arguments: ["min": 100])
                .filter(keys: [1, 2, 3, 4])
                .filter(sql: "name <> ?", arguments: ["Craig"])
                .order(sql: "score DESC")
                .limit(5, offset: 0)
            let sql = try Player.fetchAll(db, sql: """
                SELECT * FROM player WHERE score >= 100 AND id IN (1, 2, 3, 4) AND name <> 'Craig'
                ORDER BY score DESC LIMIT 5
                """)
            #expect(try request.fetchAll(db) == sql)
            #expect(try request.fetchCount(db) == 2)
            #expect(try request.asRequest(of: Row.self).fetchAll(db).count == 2)
            #expect(try Player.all().limit(0).fetchAll(db) == [])
            #expect(try Player.all().limit(-1, offset: 3).fetchAll(db).count == 1)
        }
    }

    /// Ten thousand values in an IN list, by SQL and by keys; 40 000 keys
    /// fetch and delete too (this libsqlite3 allows 250 000 parameters).
    @Test func largeKeyListsFetch() throws {
        let test = try Self.database("CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER)")
        try test.writer.write { (db) throws in
            try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000) INSERT INTO player SELECT i, 'p' || i, i FROM n")
            let ids = Array(Int64(1)...10_000)
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ",")
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player WHERE id IN (\(placeholders))", arguments: StatementArguments(ids))
            #expect(count == 10_000)
            #expect(try Player.fetchAll(db, keys: ids).count == 10_000)
            let many = Array(Int64(1)...40_000)
            let fetched = try Player.fetchAll(db, keys: many)
            #expect(fetched.count == 40_000)
            #expect(try Player.deleteAll(db, keys: many) == 40_000)
        }
    }

    /// SQL with comments, semicolons and several statements.
    @Test func sqlTextsThatAreNotOneCleanStatement() throws {
        let test = try Self.database(Self.playersSQL)
        try test.writer.write { (db) throws in
            #expect(try Int.fetchAll(db, sql: "SELECT id FROM player ORDER BY id;;  -- done") == [1, 2, 3, 4])
            #expect(try Int.fetchAll(db, sql: "/* first */ SELECT id FROM player WHERE id < 3 /* unterminated") == [1, 2])
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player -- all").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player; -- all;").fetchCount(db) == 4)
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "") }
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "  -- nothing ;") }
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "SELECT 1; SELECT 2") }
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "SELECT ?", arguments: [1, 2]) }
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "SELECT ?, ?", arguments: [1]) }
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "SELECT :a", arguments: ["a": 1, "b": 2]) }
            #expect(try Int.fetchAll(db, sql: "SELECT :a + :a + ?", arguments: (["a": 1] as StatementArguments).merging(2)) == [4])
            // Not a SELECT: the rows it returns, or none.
            #expect(try Row.fetchAll(db, sql: "UPDATE player SET score = 0 WHERE id = 4").isEmpty)
            #expect(try Int.fetchAll(db, sql: "UPDATE player SET score = score + 1 RETURNING id") .sorted() == [1, 2, 3, 4])
        }
    }
}

/// Types named as apps name them, for their default table names.
private enum Named {
    struct HTTPRequest: TableRecord {}
    struct URL: TableRecord {}
    struct Player: TableRecord {}
    struct Box<Value>: TableRecord {}
    struct snake_case: TableRecord {}
}

extension RecordAdversarialTests {

    /// The default table name lowercases the leading capitals as GRDB does,
    /// and leaves out generic arguments (which are not a table name).
    @Test func defaultTableNamesAreGRDBs() {
        #expect(Named.HTTPRequest.databaseTableName == "httpRequest")
        #expect(Named.URL.databaseTableName == "url")
        #expect(Named.Player.databaseTableName == "player")
        #expect(Named.Box<Int>.databaseTableName == "box")
        #expect(Named.snake_case.databaseTableName == "snake_case")
    }

    /// A decimal reads from the whole of a number's text only, and from a
    /// real by its shortest decimal form.
    @Test func decimalsReadFromNumbersOnly() {
        #expect(Decimal.fromDatabaseValue("3.140".databaseValue) == Decimal(string: "3.14"))
        #expect(Decimal.fromDatabaseValue("-1e3".databaseValue) == Decimal(-1000))
        #expect(Decimal.fromDatabaseValue(".5".databaseValue) == Decimal(string: "0.5"))
        #expect(Decimal.fromDatabaseValue(0.1.databaseValue) == Decimal(string: "0.1"))
        #expect(Decimal.fromDatabaseValue(Int64.max.databaseValue) == Decimal(Int64.max))
        for text in ["3.14abc", "", "-", ".", "1e", "e5", " 1", "1 ", "NaN", "0x10", "1,5"] {
            #expect(Decimal.fromDatabaseValue(text.databaseValue) == nil, "\(text)")
        }
        #expect(Decimal.fromDatabaseValue(Double.infinity.databaseValue) == nil)
        #expect(Decimal.fromDatabaseValue(Data([1]).databaseValue) == nil)
        #expect(Decimal(string: "12.5")!.databaseValue == "12.5".databaseValue)
    }
}

extension StatementArguments {
    /// These arguments, with a positional value after them.
    fileprivate func merging(_ value: Int) -> StatementArguments {
        var arguments = self
        arguments.append(contentsOf: [value])
        return arguments
    }
}
