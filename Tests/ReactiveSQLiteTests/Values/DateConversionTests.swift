import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// Dates are stored as the UTC text SQLite's date functions read and write,
/// and read from that text, from ISO-8601 text with zones, and from numbers.
@Suite(.onItsOwnThread) struct DateConversionTests {
    /// A text and the date it denotes, in milliseconds since 1970.
    struct ParsingCase: Sendable, CustomTestStringConvertible {
        var text: String
        var milliseconds: Int64
        /// Whether SQLite's own date functions accept the text (they do not
        /// accept `-HHMM` and `+HH` zones), to compare with them.
        var sqliteReadsIt = true
        var testDescription: String { text }
    }

    static let parsingCases: [ParsingCase] = [
        ParsingCase(text: "1970-01-01", milliseconds: 0),
        ParsingCase(text: "2024-02-29", milliseconds: 1_709_164_800_000),
        ParsingCase(text: "2024-02-29 13:14", milliseconds: 1_709_212_440_000),
        ParsingCase(text: "2024-02-29 13:14:15", milliseconds: 1_709_212_455_000),
        ParsingCase(text: "2024-02-29 13:14:15.1", milliseconds: 1_709_212_455_100),
        ParsingCase(text: "2024-02-29 13:14:15.12", milliseconds: 1_709_212_455_120),
        ParsingCase(text: "2024-02-29 13:14:15.123", milliseconds: 1_709_212_455_123),
        ParsingCase(text: "2024-02-29 13:14:15.123000000", milliseconds: 1_709_212_455_123),
        ParsingCase(text: "2024-02-29T13:14:15.123", milliseconds: 1_709_212_455_123),
        ParsingCase(text: "2024-02-29T13:14:15Z", milliseconds: 1_709_212_455_000),
        ParsingCase(text: "2024-02-29T13:14:15.5Z", milliseconds: 1_709_212_455_500),
        ParsingCase(text: "2024-02-29T13:14:15+02:00", milliseconds: 1_709_205_255_000),
        ParsingCase(text: "2024-02-29T13:14:15-05:30", milliseconds: 1_709_232_255_000),
        ParsingCase(text: "2024-02-29T13:14-05:30", milliseconds: 1_709_232_240_000),
        ParsingCase(text: "2024-02-29 13:14:15.250+01:00", milliseconds: 1_709_208_855_250),
        ParsingCase(text: "2024-03-01T00:30:00+01:00", milliseconds: 1_709_249_400_000),
        ParsingCase(text: "2024-02-29T13:14:15-0530", milliseconds: 1_709_232_255_000, sqliteReadsIt: false),
        ParsingCase(text: "2024-02-29T13:14:15+02", milliseconds: 1_709_205_255_000, sqliteReadsIt: false),
        ParsingCase(text: "1969-12-31 23:59:59.999", milliseconds: -1),
        ParsingCase(text: "1900-01-01 00:00:00.000", milliseconds: -2_208_988_800_000),
        ParsingCase(text: "0000-01-01 00:00:00.000", milliseconds: -62_167_219_200_000),
        ParsingCase(text: "9999-12-31 23:59:59.999", milliseconds: 253_402_300_799_999),
    ]

    @Test(arguments: parsingCases)
    func textDecodesToTheDateItDenotes(_ parsingCase: ParsingCase) throws {
        let date = try #require(Date.fromDatabaseValue(parsingCase.text.databaseValue))
        #expect(date == Date(timeIntervalSince1970: Double(parsingCase.milliseconds) / 1000))
    }

    /// SQLite reads each accepted text as the same instant: its own
    /// `strftime` and our conversion write the same UTC text.
    @Test(arguments: DatabaseKind.allCases)
    func sqliteReadsTheSameInstantFromTheText(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            for parsingCase in Self.parsingCases where parsingCase.sqliteReadsIt {
                let sqliteText = try SQLRequest<String>(
                    sql: "SELECT strftime('%Y-%m-%d %H:%M:%f', ?)", arguments: [parsingCase.text]).fetchOne(db)
                let date = Date.fromDatabaseValue(parsingCase.text.databaseValue)
                #expect(date.map { String.fromDatabaseValue($0.databaseValue) } == sqliteText, "\(parsingCase.text)")
            }
        }
    }

    /// Fraction digits are read down to the nanosecond; further digits are
    /// accepted and ignored.
    @Test func fractionsAreReadToTheNanosecond() throws {
        let date = try #require(Date.fromDatabaseValue("2024-02-29 13:14:15.123456789".databaseValue))
        #expect(abs(date.timeIntervalSince1970 - 1_709_212_455.123456789) < 1e-6)
        let longer = try #require(Date.fromDatabaseValue("2024-02-29 13:14:15.12345678912345".databaseValue))
        #expect(longer == date)
    }

    @Test(arguments: [
        "", "garbage", "2024", "2024-1-01", "2024-13-01", "2024-00-10", "2024-01-32", "2024-01-00",
        "2023-02-29", "2024-04-31", "2024-01-01 24:00", "2024-01-01 10:60", "2024-01-01 10:00:60",
        "2024-01-01 10", "2024-01-01 10:0", "2024-01-01 10:00:0", "2024-01-01 10:00:00.",
        "2024-01-01 10:00:00junk", "2024-01-01junk", "2024-01-01 ", " 2024-01-01", "2024-01-01  10:00",
        "2024-01-01T10:00:00+2", "2024-01-01T10:00:00+02:0", "2024-01-01T10:00:00+24:00",
        "2024-01-01T10:00:00+02:60", "2024-01-01T10:00:00ZZ", "2024-01-01+02:00", "２０２４-01-01",
        "2024-01-01 10:00:00.123 UTC",
    ])
    func invalidTextDecodesToNil(_ text: String) {
        #expect(Date.fromDatabaseValue(text.databaseValue) == nil)
    }

    @Test func numbersAreSecondsSince1970() {
        #expect(Date.fromDatabaseValue(0.databaseValue) == Date(timeIntervalSince1970: 0))
        #expect(Date.fromDatabaseValue(1_700_000_000.databaseValue) == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(Date.fromDatabaseValue((-86_400).databaseValue) == Date(timeIntervalSince1970: -86_400))
        #expect(Date.fromDatabaseValue(1.5.databaseValue) == Date(timeIntervalSince1970: 1.5))
        #expect(Date.fromDatabaseValue(DatabaseValue.null) == nil)
        #expect(Date.fromDatabaseValue(Data("2024-01-01".utf8).databaseValue) == nil)
    }

    @Test func datesAreStoredAsUTCTextWithMilliseconds() {
        #expect(Date(timeIntervalSince1970: 0).databaseValue == "1970-01-01 00:00:00.000".databaseValue)
        #expect(Date(timeIntervalSince1970: 1_700_000_000.123).databaseValue
            == "2023-11-14 22:13:20.123".databaseValue)
        #expect(Date(timeIntervalSince1970: -0.001).databaseValue == "1969-12-31 23:59:59.999".databaseValue)
        // Foundation's distantPast is 0001-01-01 of the Julian calendar: in the
        // proleptic Gregorian calendar of SQLite, two days earlier.
        #expect(Date.distantPast.databaseValue == "0000-12-30 00:00:00.000".databaseValue)
        #expect(Date.distantFuture.databaseValue == "4001-01-01 00:00:00.000".databaseValue)
    }

    /// Milliseconds are rounded to the nearest, carrying into the seconds.
    @Test func millisecondsAreRoundedToTheNearest() {
        #expect(Date(timeIntervalSince1970: 0.0004).databaseValue == "1970-01-01 00:00:00.000".databaseValue)
        #expect(Date(timeIntervalSince1970: 0.0006).databaseValue == "1970-01-01 00:00:00.001".databaseValue)
        #expect(Date(timeIntervalSince1970: 59.9996).databaseValue == "1970-01-01 00:01:00.000".databaseValue)
        #expect(Date(timeIntervalSince1970: -0.0004).databaseValue == "1970-01-01 00:00:00.000".databaseValue)
        #expect(Date(timeIntervalSince1970: -0.0006).databaseValue == "1969-12-31 23:59:59.999".databaseValue)
    }

    /// A date the text cannot hold (after year 9999, before year 0) is a real
    /// number of seconds since 1970.
    @Test func datesOutsideTheTextRangeAreStoredAsNumbers() {
        let far = Date(timeIntervalSince1970: 1e12)
        #expect(far.databaseValue == 1e12.databaseValue)
        #expect(Date.fromDatabaseValue(far.databaseValue) == far)
        #expect(Date(timeIntervalSince1970: 253_402_300_800).databaseValue == 253_402_300_800.0.databaseValue)
    }

    /// For random instants from year 0000 to 9999, with milliseconds, we
    /// write the text SQLite writes for the same instant, and read back the
    /// same date.
    @Test(arguments: DatabaseKind.allCases)
    func randomDatesAreWrittenAsSQLiteWritesThem(kind: DatabaseKind) throws {
        let test = try kind.make()
        var generator = SplitMix64(seed: 0x5EED_DA7E)
        let first: Int64 = -62_167_219_200_000  // 0000-01-01 00:00:00.000
        let last: Int64 = 253_402_300_799_999  // 9999-12-31 23:59:59.999
        var milliseconds = (0..<1000).map { _ in Int64.random(in: first...last, using: &generator) }
        milliseconds += (0..<200).map { _ in Int64.random(in: -86_400_000...86_400_000, using: &generator) }
        milliseconds += [first, last, 0, -1, 951_782_400_000 /* 2000-02-29 */]
        try test.writer.read { db throws in
            for value in milliseconds {
                let date = Date(timeIntervalSince1970: Double(value) / 1000)
                let sqliteText = try SQLRequest<String>(
                    sql: "SELECT strftime('%Y-%m-%d %H:%M:%f', ? / 1000.0, 'unixepoch')", arguments: [value]
                ).fetchOne(db)
                #expect(String.fromDatabaseValue(date.databaseValue) == sqliteText, "\(value) ms")
                #expect(Date.fromDatabaseValue(date.databaseValue) == date, "\(value) ms")
            }
        }
    }

    /// Dates written by SQLite's own functions decode to the current time.
    @Test(arguments: DatabaseKind.allCases)
    func datesWrittenBySQLiteDecode(kind: DatabaseKind) throws {
        let test = try kind.make()
        let before = Date().addingTimeInterval(-2)
        try test.writer.write { db throws in
            try db.execute(sql: "CREATE TABLE event (id INTEGER PRIMARY KEY, seconds TEXT, milliseconds TEXT)")
            try db.execute(sql: """
                INSERT INTO event (seconds, milliseconds)
                VALUES (datetime('now'), strftime('%Y-%m-%d %H:%M:%f', 'now'))
                """)
        }
        let after = Date().addingTimeInterval(2)
        let row = try #require(try test.writer.read { db throws in
            try SQLRequest<Row>(sql: "SELECT seconds, milliseconds FROM event").fetchOne(db)
        })
        let seconds: Date = try row["seconds"]
        let milliseconds: Date = try row["milliseconds"]
        #expect(seconds > before && seconds < after)
        #expect(milliseconds > before && milliseconds < after)
    }

    /// Dates we write sort and compare in SQL as dates, with SQLite's functions.
    @Test(arguments: DatabaseKind.allCases)
    func storedDatesWorkWithSQLiteDateFunctions(kind: DatabaseKind) throws {
        let test = try kind.make()
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        try test.writer.write { db throws in
            try db.execute(sql: "CREATE TABLE event (id INTEGER PRIMARY KEY, date DATETIME)")
            try db.execute(sql: "INSERT INTO event (date) VALUES (?)", arguments: [date])
            #expect(try SQLRequest<Int>(sql: "SELECT CAST(strftime('%s', date) AS INTEGER) FROM event").fetchOne(db)
                == 1_700_000_000)
            #expect(try SQLRequest<String>(sql: "SELECT strftime('%f', date) FROM event").fetchOne(db) == "20.500")
            #expect(try SQLRequest<Date>(sql: "SELECT datetime(date, '+1 day') FROM event").fetchOne(db)
                == Date(timeIntervalSince1970: 1_700_086_400))
            #expect(try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM event WHERE date < datetime('now')")
                .fetchOne(db) == 1)
            #expect(try SQLRequest<Date>(sql: "SELECT date FROM event").fetchOne(db) == date)
        }
    }
}
