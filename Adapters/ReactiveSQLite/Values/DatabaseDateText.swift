#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The text form of dates in the database: written as UTC
/// `YYYY-MM-DD HH:MM:SS.SSS`, the format SQLite's date and time functions
/// read and write; read from that format and its ISO-8601 relatives.
///
/// Parsing and formatting are done by hand on UTF-8 bytes: no
/// `DateFormatter`, no locale, no calendar, no shared mutable state, so both
/// are fast and safe from any thread. Invalid text gives nil, never a trap.
///
/// Civil dates are converted to and from day counts with the proleptic
/// Gregorian calendar, as SQLite does (Howard Hinnant's `days_from_civil` and
/// `civil_from_days`, <https://howardhinnant.github.io/date_algorithms.html>).
enum DatabaseDateText {
    // MARK: - Formatting

    /// The first millisecond that the text format can write: 0000-01-01 00:00:00.000 UTC.
    private static let minimumMilliseconds = dayNumber(year: 0, month: 1, day: 1) * 86_400_000
    /// The last millisecond that the text format can write: 9999-12-31 23:59:59.999 UTC.
    private static let maximumMilliseconds = dayNumber(year: 10_000, month: 1, day: 1) * 86_400_000 - 1

    /// `YYYY-MM-DD HH:MM:SS.SSS` in UTC, rounded to the nearest millisecond
    /// (halves away from zero), or nil when the rounded date is outside years
    /// 0000 to 9999 (or is not finite).
    static func text(from date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.toNearestOrAwayFromZero)
        // Comparing as Doubles first rejects infinities and NaN before any
        // conversion to an integer.
        guard milliseconds >= Double(minimumMilliseconds), milliseconds <= Double(maximumMilliseconds) else {
            return nil
        }
        let total = Int64(milliseconds)
        let (days, millisecondOfDay) = floorDivision(total, 86_400_000)
        let (year, month, day) = civilDate(dayNumber: days)
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1000 % 60
        let millisecond = millisecondOfDay % 1000

        return String(unsafeUninitializedCapacity: 23) { buffer in
            var offset = 0
            func write(_ value: Int64, digits: Int) {
                var value = value
                for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                offset += digits
            }
            func write(_ byte: UInt8) {
                buffer[offset] = byte
                offset += 1
            }
            write(year, digits: 4)
            write(UInt8(ascii: "-"))
            write(month, digits: 2)
            write(UInt8(ascii: "-"))
            write(day, digits: 2)
            write(UInt8(ascii: " "))
            write(hour, digits: 2)
            write(UInt8(ascii: ":"))
            write(minute, digits: 2)
            write(UInt8(ascii: ":"))
            write(second, digits: 2)
            write(UInt8(ascii: "."))
            write(millisecond, digits: 3)
            return offset
        }
    }

    // MARK: - Parsing

    /// The date of a text, or nil when the text is not one of the accepted forms.
    ///
    /// Accepted, with `T` or a space between date and time:
    /// - `YYYY-MM-DD` (midnight UTC);
    /// - `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DD HH:MM:SS.F...`
    ///   with one or more fraction digits (digits beyond the ninth, below a
    ///   nanosecond, are read but ignored);
    /// - each time optionally followed by a zone: `Z`, `+HH:MM`, `-HHMM`,
    ///   `+HH` (a time without zone is UTC).
    ///
    /// Rejected: out-of-range fields (month 13, day 32, February 30, hour 24,
    /// minute or second 60), missing digits, whitespace, trailing characters.
    static func date(from text: String) -> Date? {
        if let date = text.utf8.withContiguousStorageIfAvailable({ date(fromUTF8: $0) }) {
            return date
        }
        return Array(text.utf8).withUnsafeBufferPointer { date(fromUTF8: $0) }
    }

    private static func date(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = Scanner(bytes: bytes)
        guard let year = scanner.number(digits: 4), scanner.skip(UInt8(ascii: "-")),
            let month = scanner.number(digits: 2), scanner.skip(UInt8(ascii: "-")),
            let day = scanner.number(digits: 2),
            (1...12).contains(month), day >= 1, day <= daysInMonth(month, year: year)
        else { return nil }
        let dayNumber = dayNumber(year: year, month: month, day: day)
        if scanner.isAtEnd {
            return Date(timeIntervalSince1970: Double(dayNumber * 86_400))
        }

        guard scanner.skip(UInt8(ascii: " ")) || scanner.skip(UInt8(ascii: "T")) || scanner.skip(UInt8(ascii: "t")),
            let hour = scanner.number(digits: 2), hour < 24, scanner.skip(UInt8(ascii: ":")),
            let minute = scanner.number(digits: 2), minute < 60
        else { return nil }
        var second: Int64 = 0
        var fraction: Int64 = 0
        var fractionDigits = 0
        if scanner.skip(UInt8(ascii: ":")) {
            guard let value = scanner.number(digits: 2), value < 60 else { return nil }
            second = value
            if scanner.skip(UInt8(ascii: ".")) {
                guard let digit = scanner.digit() else { return nil }
                fraction = digit
                fractionDigits = 1
                while let digit = scanner.digit() {
                    guard fractionDigits < 9 else { continue }
                    fraction = fraction * 10 + digit
                    fractionDigits += 1
                }
            }
        }

        var zoneOffset: Int64 = 0
        if !scanner.isAtEnd {
            guard let offset = scanner.zoneOffset() else { return nil }
            zoneOffset = offset
        }
        guard scanner.isAtEnd else { return nil }

        let seconds = dayNumber * 86_400 + hour * 3600 + minute * 60 + second - zoneOffset
        return makeDate(seconds: seconds, fraction: fraction, fractionDigits: fractionDigits)
    }

    /// `seconds + fraction / 10^fractionDigits` since 1970, computed so that
    /// the result is the Double nearest to the exact decimal value whenever it
    /// can be (which makes dates with milliseconds round-trip exactly).
    private static func makeDate(seconds: Int64, fraction: Int64, fractionDigits: Int) -> Date {
        // Trailing zeros change nothing but the chance of an exact result.
        var fraction = fraction
        var fractionDigits = fractionDigits
        while fractionDigits > 0, fraction % 10 == 0 {
            fraction /= 10
            fractionDigits -= 1
        }
        guard fractionDigits > 0 else { return Date(timeIntervalSince1970: Double(seconds)) }
        var scale: Int64 = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        // The scaled total, when it is an integer a Double holds exactly:
        // a single correctly rounded division then gives the nearest Double.
        let (product, overflow) = seconds.multipliedReportingOverflow(by: scale)
        if !overflow, product.magnitude < (1 << 53) - UInt64(scale) {
            return Date(timeIntervalSince1970: Double(product + fraction) / Double(scale))
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(fraction) / Double(scale))
    }

    // MARK: - Calendar

    /// The number of days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    static func dayNumber(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of the proleptic Gregorian calendar `dayNumber` days after 1970-01-01.
    static func civilDate(dayNumber: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Quotient and remainder rounded towards minus infinity, so that the
    /// remainder is never negative (dates before 1970).
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }
}

extension DatabaseDateText {
    /// Reads ASCII fields from UTF-8 bytes.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        /// Consumes `byte` when it is next.
        mutating func skip(_ byte: UInt8) -> Bool {
            guard offset < bytes.count, bytes[offset] == byte else { return false }
            offset += 1
            return true
        }

        /// Consumes one decimal digit when one is next.
        mutating func digit() -> Int64? {
            guard offset < bytes.count else { return nil }
            let value = bytes[offset] &- UInt8(ascii: "0")
            guard value < 10 else { return nil }
            offset += 1
            return Int64(value)
        }

        /// Consumes exactly `digits` decimal digits.
        mutating func number(digits: Int) -> Int64? {
            let start = offset
            var value: Int64 = 0
            for _ in 0..<digits {
                guard let digit = digit() else {
                    offset = start
                    return nil
                }
                value = value * 10 + digit
            }
            return value
        }

        /// Consumes a zone, `Z`, `+HH:MM`, `-HHMM` or `+HH`, and returns its
        /// offset from UTC in seconds.
        mutating func zoneOffset() -> Int64? {
            if skip(UInt8(ascii: "Z")) || skip(UInt8(ascii: "z")) { return 0 }
            let sign: Int64
            if skip(UInt8(ascii: "+")) {
                sign = 1
            } else if skip(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let hours = number(digits: 2), hours < 24 else { return nil }
            var minutes: Int64 = 0
            if skip(UInt8(ascii: ":")) {
                guard let value = number(digits: 2) else { return nil }
                minutes = value
            } else if let value = number(digits: 2) {
                minutes = value
            }
            guard minutes < 60 else { return nil }
            return sign * (hours * 3600 + minutes * 60)
        }
    }
}
