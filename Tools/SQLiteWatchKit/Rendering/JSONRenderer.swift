import ReactiveSQLite

/// One JSON object per line, ready for `jq`:
///
/// ```
/// {"rows":[{"id":1,"name":"Arthur","score":100}]}
/// {"inserted":[{"id":2,"name":"Barbara","score":80}],"updated":[],"previous":[],"deleted":[]}
/// {"inserted":[],"updated":[{"id":1,"name":"Arthur","score":120}],"previous":[{"score":100}],"deleted":[]}
/// ```
///
/// - `rows`: the whole current result, first, and again whenever the
///   query's columns change.
/// - `inserted`, `updated`, `deleted`: the rows of one change, as objects
///   keyed by column name (a repeated column name gets a suffix: `id`,
///   `id:2`, see `objectKeys`), updated rows with their new values.
/// - `previous`: for each updated row, at the same index, the old values of
///   the columns that changed: its keys are the changed columns.
/// - `moved` (with `--ordered` only): `{"from":3,"to":1,"row":{...}}`, with
///   1-based positions.
/// - `insertedAt` (with `--ordered` only): for each inserted row, at the
///   same index, its 1-based position in the new result.
///
/// With `--ordered`, a reader that holds the previous result gets the new
/// one exactly: remove the deleted rows (by key), take the moved rows out,
/// then put each inserted row at its `insertedAt` position and each moved
/// row at its `to` position; the other rows keep their relative order and
/// fill the remaining positions (the moves are the fewest that keep the
/// others in place, see `OrderedDifference`).
///
/// See `ValueText` for how values are written.
public struct JSONRenderer: ResultRenderer, Sendable {
    public let isOrdered: Bool

    /// A renderer; with `isOrdered`, changes include moves (`--ordered`).
    public init(isOrdered: Bool) {
        self.isOrdered = isOrdered
    }

    public func initialResult(columnNames: [String], rows: [Row]) -> String {
        let keys = Self.objectKeys(columnNames)
        return "{\"rows\":\(array(rows.map { object($0, keys: keys) }))}\n"
    }

    public func columnsChanged(columnNames: [String], rows: [Row]) -> String {
        initialResult(columnNames: columnNames, rows: rows)
    }

    /// Writes the `rows` object in parts of about a megabyte.
    public func streamInitialResult(
        columnNames: [String], afterColumnsChange: Bool, batches: some Sequence<[Row]>, write: (String) -> Bool
    ) {
        let memberPrefixes = Self.objectKeys(columnNames).map { ValueText.jsonString($0) + ":" }
        var text = "{\"rows\":["
        var isFirst = true
        for rows in batches {
            for row in rows {
                if !isFirst { text += "," }
                isFirst = false
                text += "{"
                for (index, value) in row.databaseValues.enumerated() {
                    if index > 0 { text += "," }
                    text += index < memberPrefixes.count
                        ? memberPrefixes[index] : ValueText.jsonString("column \(index + 1)") + ":"
                    text += ValueText.json(value)
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

    public func changes(_ changes: RowChanges, number: Int, columnNames: [String]) -> String {
        let keys = Self.objectKeys(columnNames)
        var members = [
            ("inserted", array(changes.inserted.map { object($0.row, keys: keys) })),
            ("updated", array(changes.updated.map { object($0.row, keys: keys) })),
            ("previous", array(changes.updated.map { object($0.previous, keys: keys, only: $0.changedColumns) })),
            ("deleted", array(changes.deleted.map { object($0.row, keys: keys) })),
        ]
        if isOrdered {
            members.append(("insertedAt", "[" + changes.inserted.map { String($0.position ?? 0) }.joined(separator: ",") + "]"))
            members.append(("moved", array(changes.moved.map { move in
                "{\"from\":\(move.from),\"to\":\(move.to),\"row\":\(object(move.row, keys: keys))}"
            })))
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
    }

    // MARK: - Helpers

    private func array(_ elements: [String]) -> String {
        "[" + elements.joined(separator: ",") + "]"
    }

    /// A row as a JSON object; only the given columns when `only` is not nil.
    private func object(_ row: Row, keys: [String], only columns: [Int]? = nil) -> String {
        let indexes = columns ?? Array(row.databaseValues.indices)
        let members = indexes.map { index in
            let key = index < keys.count ? keys[index] : "column \(index + 1)"
            return ValueText.jsonString(key) + ":" + ValueText.json(row.databaseValues[index])
        }
        return "{" + members.joined(separator: ",") + "}"
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
}
