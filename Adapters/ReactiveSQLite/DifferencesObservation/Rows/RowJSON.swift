#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rows and row differences as JSON text: one object per line, the format
/// of `sqlite-watch --format json` and of `ReactiveSQLiteServer`'s events,
/// ready for `jq` or a browser.
///
/// ```
/// {"rows":[{"id":1,"name":"Arthur","score":100}]}
/// {"inserted":[{"id":2,"name":"Barbara","score":80}],"updated":[],"previous":[],"deleted":[]}
/// {"inserted":[],"updated":[{"id":1,"name":"Arthur","score":120}],"previous":[{"score":100}],"deleted":[]}
/// ```
///
/// - `rows`: a whole result, as objects keyed by column name (a repeated
///   column name gets a suffix: `id`, `id:2`, see ``objectKeys(_:)``).
/// - `inserted`, `updated`, `deleted`: the rows of one difference, updated
///   rows with their new values.
/// - `previous`: for each updated row, at the same index, the old values of
///   the columns that changed: its keys are the changed columns.
/// - `moved` (ordered differences only): `{"from":3,"to":1,"row":{...}}`,
///   with 1-based positions.
/// - `insertedAt` (ordered differences only): for each inserted row, at the
///   same index, its 1-based position in the new result.
///
/// With an ordered difference, a reader that holds the previous result gets
/// the new one exactly: remove the deleted rows (by key), take the moved
/// rows out, then put each inserted row at its `insertedAt` position and
/// each moved row at its `to` position; the other rows keep their relative
/// order and fill the remaining positions (the moves are the fewest that
/// keep the others in place, see `OrderedDifference`).
///
/// Values: `null`; integers as numbers, except beyond ±2^53
/// (9007199254740992) where readers that store numbers as doubles
/// (JavaScript, jq 1.6) would round them: those are strings of digits;
/// finite reals as numbers, infinite ones as the strings `"Infinity"` and
/// `"-Infinity"`; texts as strings; blobs as `{"blob":"00FF"}` (uppercase
/// hexadecimal, as SQLite's `hex()`); a text that is not valid UTF-8 (a
/// Latin-1 `café`) as `{"textBytes":"636166E9"}`, its bytes in hexadecimal
/// (a JSON string holds valid Unicode only).
public enum RowJSON {
    /// The largest magnitude of an integer that every JSON reader keeps exactly.
    public static let largestExactInteger: Int64 = 1 << 53

    /// `{"rows":[...]}` and a newline.
    ///
    /// - Complexity: O(n × c), where n is the number of rows and c of columns.
    public static func rows(_ rows: some Sequence<Row>, columnNames: [String]) -> String {
        let keys = objectKeys(columnNames)
        return "{\"rows\":\(array(rows.map { object($0, keys: keys) }))}\n"
    }

    /// The text of ``rows(_:columnNames:)``, written in parts of about a
    /// megabyte, for results too large to hold as one string.
    ///
    /// - Parameters:
    ///   - columnNames: The result's columns (the keys of each object).
    ///   - batches: The rows, in order, a batch at a time.
    ///   - write: Called with each part of the text, in order; returns false
    ///     to stop.
    public static func streamRows(columnNames: [String], batches: some Sequence<[Row]>, write: (String) -> Bool) {
        let memberPrefixes = objectKeys(columnNames).map { string($0) + ":" }
        var text = "{\"rows\":["
        var isFirst = true
        for rows in batches {
            for row in rows {
                if !isFirst { text += "," }
                isFirst = false
                text += "{"
                for (index, value) in row.databaseValues.enumerated() {
                    if index > 0 { text += "," }
                    text += index < memberPrefixes.count ? memberPrefixes[index] : string("column \(index + 1)") + ":"
                    text += self.value(value)
                }
                text += "}"
            }
            if text.utf8.count >= 1 << 20 {
                guard write(text) else { return }
                text = ""
            }
        }
        _ = write(text + "]}\n")
    }

    /// One difference as an object and a newline; with `isOrdered`, with
    /// `insertedAt` and `moved`.
    ///
    /// - Complexity: O(r × c), where r is the number of rows in the
    ///   difference and c the number of columns.
    public static func difference(_ difference: RowDifference, columnNames: [String], isOrdered: Bool) -> String {
        let keys = objectKeys(columnNames)
        var members = [
            ("inserted", array(difference.inserted.map { object($0.row, keys: keys) })),
            ("updated", array(difference.updated.map { object($0.row, keys: keys) })),
            ("previous", array(difference.updated.map { object($0.previous, keys: keys, only: $0.changedColumns) })),
            ("deleted", array(difference.deleted.map { object($0.row, keys: keys) })),
        ]
        if isOrdered {
            members.append(
                ("insertedAt", "[" + difference.inserted.map { String($0.position ?? 0) }.joined(separator: ",") + "]"))
            members.append(("moved", array(difference.moved.map { move in
                "{\"from\":\(move.from),\"to\":\(move.to),\"row\":\(object(move.row, keys: keys))}"
            })))
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
    }

    /// Unique object keys for the columns: the second column named `id`
    /// becomes `id:2`, the third `id:3`, skipping keys already taken (by a
    /// column named `id:2`), so that no member of an object hides another.
    public static func objectKeys(_ columnNames: [String]) -> [String] {
        var counts: [String: Int] = [:]
        var taken = Set<String>()
        return columnNames.map { name in
            var count = counts[name, default: 0] + 1
            var key = count == 1 ? name : "\(name):\(count)"
            while taken.contains(key) {
                count += 1
                key = "\(name):\(count)"
            }
            counts[name] = count
            taken.insert(key)
            return key
        }
    }

    /// A value as JSON (see the type's documentation).
    public static func value(_ value: DatabaseValue) -> String {
        if value.isInvalidUTF8Text, let bytes = value.textBytes { return "{\"textBytes\":\"\(hexadecimal(bytes))\"}" }
        return switch value.storage {
        case .null: "null"
        case .integer(let integer):
            integer.magnitude <= largestExactInteger.magnitude ? String(integer) : "\"\(integer)\""
        case .real(let real):
            real.isInfinite ? (real < 0 ? "\"-Infinity\"" : "\"Infinity\"") : String(real)
        case .text(let text): string(text)
        case .blob(let data): "{\"blob\":\"\(hexadecimal(data))\"}"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    public static func string(_ text: String) -> String {
        // Most texts have nothing to escape: one pass over their bytes.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += "\\u" + hexadecimal(scalar.value, digits: 4)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Bytes in uppercase hexadecimal, two digits each, as SQLite's `hex()`.
    public static func hexadecimal(_ bytes: some Collection<UInt8>) -> String {
        bytes.map { hexadecimal(UInt32($0), digits: 2) }.joined()
    }

    // MARK: - Helpers

    private static func hexadecimal(_ value: UInt32, digits count: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, count - digits.count)) + digits
    }

    private static func array(_ elements: [String]) -> String {
        "[" + elements.joined(separator: ",") + "]"
    }

    /// A row as a JSON object; only the given columns when `only` is not nil.
    private static func object(_ row: Row, keys: [String], only columns: [Int]? = nil) -> String {
        let values = row.databaseValues
        let indexes = columns ?? Array(values.indices)
        let members = indexes.map { index in
            let key = index < keys.count ? keys[index] : "column \(index + 1)"
            return string(key) + ":" + value(values[index])
        }
        return "{" + members.joined(separator: ",") + "}"
    }
}
