import Foundation

/// What a remote client of a live query holds: the rows of the last `rows`
/// event, with every later `diff` applied, as `sqlite-watch --format json`
/// documents them. Rows are kept as canonical JSON text (sorted keys), so
/// that replicas compare with a fresh result by plain equality.
public struct JSONRowReplica: Sendable, Equatable {
    /// The key columns (JSON object keys); empty: the whole row.
    public let keys: [String]
    public let isOrdered: Bool
    /// The rows, in result order when ordered, otherwise in arrival order
    /// (a deleted row's place taken by the last row).
    public private(set) var rows: [String] = []
    /// The key of each row, at the same indexes as `rows` (its text
    /// without key columns). Only texts are kept: a soak's hundreds of
    /// replicas of 30 000 rows.
    private var rowKeys: [String] = []
    /// With key columns, the index of each row by its key: a difference
    /// costs its own rows, not a scan of every row (a soak's hundreds of
    /// replicas of 30 000 rows).
    private var indexes: [String: Int] = [:]
    /// Whether a `rows` event arrived.
    public private(set) var hasRows = false
    /// A difference that could not be applied (a deleted or updated row
    /// that the replica does not hold): the stream is wrong.
    public private(set) var inconsistency: String?

    public init(keys: [String], isOrdered: Bool) {
        self.keys = keys
        self.isOrdered = isOrdered
    }

    /// The rows as JSON objects (keys sorted), in the order of `rows`.
    public var jsonObjects: [String] { rows }

    /// The rows, sorted when the order does not matter, for comparisons.
    public var comparableRows: [String] { isOrdered ? rows : rows.sorted() }

    /// Applies one event (`rows` or `diff`; others are ignored).
    public mutating func apply(event name: String, data: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            if name == "rows" || name == "diff" { inconsistency = inconsistency ?? "unreadable \(name): \(data)" }
            return
        }
        switch name {
        case "rows":
            let values = (object["rows"] as? [[String: Any]] ?? []).map(Self.values)
            rows = values.map(Self.text)
            rowKeys = values.map(key(of:))
            reindex()
            hasRows = true
        case "diff":
            applyDifference(object)
        default:
            return
        }
    }

    private mutating func reindex() {
        guard !keys.isEmpty else { return }
        indexes = [:]
        indexes.reserveCapacity(rowKeys.count)
        for (index, key) in rowKeys.enumerated() { indexes[key] = index }
    }

    /// The index of the row with `row`'s key.
    private func index(of row: [String: JSONValue]) -> Int? {
        if keys.isEmpty { return rows.firstIndex(of: Self.text(row)) }
        return indexes[key(of: row)]
    }

    private mutating func applyDifference(_ difference: [String: Any]) {
        let deleted = (difference["deleted"] as? [[String: Any]] ?? []).map(Self.values)
        let updated = (difference["updated"] as? [[String: Any]] ?? []).map(Self.values)
        let inserted = (difference["inserted"] as? [[String: Any]] ?? []).map(Self.values)
        for row in updated {
            guard let index = index(of: row) else {
                inconsistency = inconsistency ?? "updated a row the replica does not hold: \(Self.text(row))"
                continue
            }
            rows[index] = Self.text(row)
        }
        guard isOrdered else {
            for row in deleted {
                guard let index = index(of: row) else {
                    inconsistency = inconsistency ?? "deleted a row the replica does not hold: \(Self.text(row))"
                    continue
                }
                // The last row takes the deleted one's place.
                if !keys.isEmpty { indexes[rowKeys[index]] = nil }
                if index != rows.count - 1 {
                    rows[index] = rows[rows.count - 1]
                    rowKeys[index] = rowKeys[rowKeys.count - 1]
                    if !keys.isEmpty { indexes[rowKeys[index]] = index }
                }
                rows.removeLast()
                rowKeys.removeLast()
            }
            for row in inserted {
                if !keys.isEmpty { indexes[key(of: row)] = rows.count }
                rows.append(Self.text(row))
                rowKeys.append(key(of: row))
            }
            return
        }
        // Deleted and moved rows out, then inserted and moved rows at their
        // positions, the others in their relative order in the remaining
        // positions.
        var removed = Set<Int>()
        for row in deleted {
            guard let index = index(of: row), !removed.contains(index) else {
                inconsistency = inconsistency ?? "deleted a row the replica does not hold: \(Self.text(row))"
                continue
            }
            removed.insert(index)
        }
        var slots = [Int?](repeating: nil, count: rows.count - removed.count + inserted.count)
        var insertedSlots: [Int: Int] = [:]  // slot -> index in `inserted`
        for move in difference["moved"] as? [[String: Any]] ?? [] {
            guard let row = (move["row"] as? [String: Any]).map(Self.values), let to = move["to"] as? Int,
                let index = index(of: row), !removed.contains(index), slots.indices.contains(to - 1)
            else {
                inconsistency = inconsistency ?? "moved a row the replica does not hold"
                continue
            }
            removed.insert(index)
            slots[to - 1] = index
        }
        for (offset, position) in (difference["insertedAt"] as? [Int] ?? []).enumerated() where offset < inserted.count {
            guard slots.indices.contains(position - 1) else {
                inconsistency = inconsistency ?? "inserted at position \(position) of \(slots.count)"
                continue
            }
            insertedSlots[position - 1] = offset
        }
        var rest = rows.indices.lazy.filter { !removed.contains($0) }.makeIterator()
        var newRows: [String] = []
        var newKeys: [String] = []
        newRows.reserveCapacity(slots.count)
        newKeys.reserveCapacity(slots.count)
        for slot in slots.indices {
            if let offset = insertedSlots[slot] {
                newRows.append(Self.text(inserted[offset]))
                newKeys.append(key(of: inserted[offset]))
            } else if let index = slots[slot] ?? rest.next() {
                newRows.append(rows[index])
                newKeys.append(rowKeys[index])
            }
        }
        rows = newRows
        rowKeys = newKeys
        reindex()
    }

    private func key(of row: [String: JSONValue]) -> String {
        keys.isEmpty ? Self.text(row) : keys.map { row[$0].map { "\($0)" } ?? "nil" }.joined(separator: "\u{1F}")
    }

    private static func values(_ object: [String: Any]) -> [String: JSONValue] {
        object.mapValues(JSONValue.init)
    }

    /// The row as canonical JSON: keys sorted.
    private static func text(_ row: [String: JSONValue]) -> String {
        "{" + row.keys.sorted().map { "\(JSONValue.quoted($0)):\(row[$0]!.json)" }.joined(separator: ",") + "}"
    }
}

/// A JSON value of a row, compared and printed canonically.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case number(String)
    case string(String)
    case object(String)

    init(_ any: Any) {
        switch any {
        case is NSNull: self = .null
        case let string as String: self = .string(string)
        case let number as NSNumber: self = .number(number.stringValue)
        default:
            let data = (try? JSONSerialization.data(withJSONObject: any, options: [.sortedKeys])) ?? Data()
            self = .object(String(decoding: data, as: UTF8.self))
        }
    }

    /// The value as JSON text.
    public var json: String {
        switch self {
        case .string(let text): Self.quoted(text)
        default: description
        }
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .number(let text): text
        case .string(let text): "\"\(text)\""
        case .object(let text): text
        }
    }
}
