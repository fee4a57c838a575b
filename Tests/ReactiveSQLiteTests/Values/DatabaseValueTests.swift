import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `DatabaseValue` equality, ordering and hashing are SQLite's BINARY order
/// on raw values, checked against SQLite itself.
@Suite(.onItsOwnThread) struct DatabaseValueTests {
    /// Compares thousands of random pairs of values with SQLite: `IS`, `=`
    /// and `<`, and the order of `ORDER BY` (which also places NULL). The
    /// pairs mix NULL, integers near 2^53 and the Int64 bounds, reals next to
    /// them, texts (canonically equivalent ones included) and blobs.
    @Test(arguments: DatabaseKind.allCases)
    func equalityAndOrderingAreSQLitesBinaryOrder(kind: DatabaseKind) throws {
        let test = try kind.make()
        var generator = SplitMix64(seed: 0x5EED_D8A1)
        let pool = RandomValues.pool
        var pairs: [(DatabaseValue, DatabaseValue)] = []
        for _ in 0..<4000 {
            let lhs = RandomValues.value(from: pool, using: &generator)
            // Often a close neighbour (the same value, or a nearby number).
            let rhs = Int.random(in: 0..<4, using: &generator) == 0
                ? RandomValues.neighbour(of: lhs, using: &generator)
                : RandomValues.value(from: pool, using: &generator)
            pairs.append((lhs, rhs))
        }
        try test.writer.read { db throws in
            for (lhs, rhs) in pairs {
                let row = try #require(
                    try SQLRequest<Row>(sql: """
                        SELECT ?1 IS ?2, ?1 = ?2, ?1 < ?2,
                            (SELECT i FROM (SELECT 1 AS i, ?1 AS v UNION ALL SELECT 2 AS i, ?2 AS v) ORDER BY v, i LIMIT 1)
                        """, arguments: [lhs, rhs]).fetchOne(db))
                let isSame: Bool = try row[0]
                let isEqual: Bool? = try row[1]
                let isLess: Bool? = try row[2]
                let firstInOrder: Int = try row[3]
                let sqliteOrder = isSame ? 0 : (firstInOrder == 1 ? -1 : 1)
                let swiftOrder = lhs == rhs ? 0 : (lhs < rhs ? -1 : 1)

                #expect(swiftOrder == sqliteOrder, "\(lhs) vs \(rhs)")
                #expect((rhs < lhs) == (sqliteOrder == 1), "\(rhs) < \(lhs)")
                if !lhs.isNull && !rhs.isNull {
                    #expect(isEqual == (lhs == rhs), "\(lhs) = \(rhs)")
                    #expect(isLess == (lhs < rhs), "\(lhs) < \(rhs)")
                }
                if lhs == rhs {
                    #expect(lhs.hashValue == rhs.hashValue, "hash of \(lhs) and \(rhs)")
                }
            }
        }
    }

    /// Sorting with `<` gives the order of SQLite's `ORDER BY`.
    @Test(arguments: DatabaseKind.allCases)
    func sortingMatchesOrderBy(kind: DatabaseKind) throws {
        let test = try kind.make()
        var generator = SplitMix64(seed: 0x5EED_D8A2)
        let values = (0..<500).map { _ in RandomValues.value(from: RandomValues.pool, using: &generator) }
        let sqliteOrder = try test.writer.write { db throws in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
            for value in values {
                try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [value])
            }
            return try SQLRequest<DatabaseValue>(sql: "SELECT v FROM t ORDER BY v, id").fetchAll(db)
        }
        let swiftOrder = values.enumerated().sorted { a, b in
            a.element < b.element || (a.element == b.element && a.offset < b.offset)
        }.map(\.element)
        // Compare storage classes and raw values exactly, not with ==.
        #expect(swiftOrder.map(\.description) == sqliteOrder.map(\.description))
    }

    @Test func canonicallyEquivalentTextsAreDifferentValues() {
        let decomposed = "e\u{301}".databaseValue
        let precomposed = "\u{e9}".databaseValue
        #expect("e\u{301}" == "\u{e9}")  // Swift's String equality...
        #expect(decomposed != precomposed)  // ...is not SQLite's.
        #expect(decomposed < precomposed)  // 0x65 < 0xC3
        #expect(Set([decomposed, precomposed]).count == 2)
    }

    @Test func integersAndRealsCompareByExactValue() {
        let twoTo53 = Int64(1) << 53
        #expect(DatabaseValue(storage: .integer(1)) == DatabaseValue(storage: .real(1.0)))
        #expect(DatabaseValue(storage: .integer(1)).hashValue == DatabaseValue(storage: .real(1.0)).hashValue)
        #expect(DatabaseValue(storage: .integer(0)) == DatabaseValue(storage: .real(-0.0)))
        // 2^53 + 1 is not a Double: converting it would make it equal to 2^53.
        #expect(DatabaseValue(storage: .integer(twoTo53 + 1)) > DatabaseValue(storage: .real(Double(twoTo53))))
        #expect(DatabaseValue(storage: .integer(.max)) < DatabaseValue(storage: .real(9.223372036854775807e18)))
        #expect(DatabaseValue(storage: .integer(.min)) == DatabaseValue(storage: .real(-9.223372036854775808e18)))
        #expect(DatabaseValue(storage: .real(-.infinity)) < DatabaseValue(storage: .integer(.min)))
        #expect(DatabaseValue(storage: .real(.infinity)) > DatabaseValue(storage: .integer(.max)))
    }

    @Test func storageClassesSortNullNumbersTextsBlobs() {
        let values: [DatabaseValue] = [
            DatabaseValue(storage: .blob(Data())), "".databaseValue, 1.5.databaseValue, .null, 2.databaseValue,
        ]
        #expect(values.sorted().map(\.description) == ["NULL", "1.5", "2", "''", "X''"])
    }

    /// SQLite stores NaN as NULL: a NaN value is NULL, so comparisons are
    /// total and never trap.
    @Test func aRealNaNIsNull() {
        let nan = DatabaseValue(storage: .real(.nan))
        #expect(nan.isNull)
        #expect(nan == .null)
        #expect(Double.nan.databaseValue == .null)
        #expect(nan < 1.databaseValue)
        #expect(Float.nan.databaseValue.isNull)
    }

    @Test func descriptionIsSQLLiteral() {
        #expect(DatabaseValue.null.description == "NULL")
        #expect(42.databaseValue.description == "42")
        #expect(1.5.databaseValue.description == "1.5")
        #expect("it's".databaseValue.description == "'it''s'")
        #expect(Data([0x00, 0xAB]).databaseValue.description == "X'00AB'")
    }
}

/// Random database values for property tests, biased towards the values
/// where comparisons are subtle.
private enum RandomValues {
    static let pool: [DatabaseValue] = {
        let twoTo53 = Int64(1) << 53
        var integers: [Int64] = [0, 1, -1, 2, 42, -42, .max, .min, .max - 1, .min + 1]
        for delta in -3...3 {
            integers.append(twoTo53 + Int64(delta))
            integers.append(-twoTo53 + Int64(delta))
        }
        var reals: [Double] = [0.0, -0.0, 0.5, -0.5, 1.0, 1.5, -1.0, .infinity, -.infinity, 1e19, -1e19,
                               9.223372036854775807e18, -9.223372036854775808e18, .leastNonzeroMagnitude]
        for integer in integers {
            let real = Double(integer)
            reals += [real, real.nextUp, real.nextDown]
        }
        let texts = ["", "a", "b", "A", "ab", "e\u{301}", "\u{e9}", "e", "f", "é", "\u{0}", "a\u{0}b", "z",
                     "🎉", "\u{FFFD}", "1", "10", "9"]
        let blobs: [[UInt8]] = [[], [0], [0, 0], [1], [0x7F], [0x80], [0xFF], [0x61], [0x61, 0x62], [0xC3, 0xA9]]
        return [.null]
            + integers.map(\.databaseValue)
            + reals.map(\.databaseValue)
            + texts.map(\.databaseValue)
            + blobs.map { Data($0).databaseValue }
    }()

    static func value(from pool: [DatabaseValue], using generator: inout SplitMix64) -> DatabaseValue {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0:
            return Int64.random(in: .min ... .max, using: &generator).databaseValue
        case 1:
            return Double.random(in: -1e6...1e6, using: &generator).databaseValue
        case 2:
            let length = Int.random(in: 0...3, using: &generator)
            let alphabet: [Character] = ["a", "b", "é", "e", "\u{301}", "\u{0}"]
            return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }).databaseValue
        default:
            return pool.randomElement(using: &generator)!
        }
    }

    static func neighbour(of value: DatabaseValue, using generator: inout SplitMix64) -> DatabaseValue {
        switch value.storage {
        case .integer(let integer):
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return Double(integer).databaseValue
            case 1: return integer.addingReportingOverflow(1).partialValue.databaseValue
            default: return value
            }
        case .real(let real):
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return real.nextUp.databaseValue
            case 1:
                if let exact = Int64(exactly: real.rounded(.down)) { return exact.databaseValue }
                return value
            default: return value
            }
        default:
            return value
        }
    }
}
