#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Date: DatabaseValueConvertible {
    /// The date as UTC text `YYYY-MM-DD HH:MM:SS.SSS`, the format SQLite's
    /// date and time functions read and write, so that
    /// `WHERE date > datetime('now')` and `ORDER BY date` work in SQL.
    ///
    /// The date is rounded to the nearest millisecond (halves away from zero);
    /// a date built from a whole number of milliseconds since 1970 reads back
    /// equal. A date outside the years 0000 to 9999, which that text cannot
    /// hold, is stored as a real number of seconds since 1970 instead, which
    /// reads back as the same date.
    ///
    /// ```swift
    /// Date(timeIntervalSince1970: 1_700_000_000.123).databaseValue
    /// // '2023-11-14 22:13:20.123'
    /// ```
    public var databaseValue: DatabaseValue {
        guard let text = DatabaseDateText.text(from: self) else {
            return DatabaseValue(storage: .real(timeIntervalSince1970))
        }
        return DatabaseValue(storage: .text(text))
    }

    /// Decodes a date from text or from a number.
    ///
    /// - Text: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS` and
    ///   `YYYY-MM-DD HH:MM:SS.F...` (one or more fraction digits), with a
    ///   space or a `T` between date and time, and an optional zone after the
    ///   time (`Z`, `+HH:MM`, `-HHMM`, `+HH`). Without zone the time is UTC,
    ///   as in SQLite. Anything else (month 13, February 30, trailing
    ///   characters) gives nil.
    /// - An integer or a real: seconds since 1970-01-01 00:00:00 UTC.
    ///
    /// Parsing is locale-independent, allocation-free for native strings, and
    /// safe from any thread.
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Date? {
        switch databaseValue.storage {
        case .text(let text): DatabaseDateText.date(from: text)
        case .integer(let seconds): Date(timeIntervalSince1970: Double(seconds))
        case .real(let seconds): Date(timeIntervalSince1970: seconds)
        case .null, .blob: nil
        }
    }
}
