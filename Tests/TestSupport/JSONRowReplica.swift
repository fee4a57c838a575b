import Foundation

/// What a remote client of a live query holds: the rows of the last `rows`
/// event, with every later `diff` applied, as `sqlite-watch --format json`
/// documents them. Rows are kept as canonical JSON text (sorted keys), so
/// that replicas compare with a fresh result by plain equality.
public struct JSONRowReplica: Sendable, Equatable {
    /// The key columns (JSON object keys); empty: the whole row.
    public let keys: [String]
    public let isOrdered: Bool
    /// The rows, in result order when ordered, otherwise in arrival order.
    public private(set) var rows: [String] = []
    private var objects: [[String: JSONValue]] = []
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
    public var jsonObjects: [String] {
        objects.map { row in
            "{" + row.keys.sorted().map { "\(JSONValue.quoted($0)):\(row[$0]!.json)" }.joined(separator: ",") + "}"
        }
    }

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
            objects = (object["rows"] as? [[String: Any]] ?? []).map(Self.values)
            hasRows = true
        case "diff":
            applyDifference(object)
        default:
            return
        }
        rows = objects.map(Self.text)
    }

    private mutating func applyDifference(_ difference: [String: Any]) {
        let deleted = (difference["deleted"] as? [[String: Any]] ?? []).map(Self.values)
        let updated = (difference["updated"] as? [[String: Any]] ?? []).map(Self.values)
        let inserted = (difference["inserted"] as? [[String: Any]] ?? []).map(Self.values)
        for row in deleted {
            guard let index = objects.firstIndex(where: { key(of: $0) == key(of: row) }) else {
                inconsistency = inconsistency ?? "deleted a row the replica does not hold: \(Self.text(row))"
                continue
            }
            objects.remove(at: index)
        }
        for row in updated {
            guard let index = objects.firstIndex(where: { key(of: $0) == key(of: row) }) else {
                inconsistency = inconsistency ?? "updated a row the replica does not hold: \(Self.text(row))"
                continue
            }
            objects[index] = row
        }
        guard isOrdered else {
            objects += inserted
            return
        }
        // Moved rows out, then inserted and moved rows at their positions,
        // the others in their relative order in the remaining positions.
        let moves = (difference["moved"] as? [[String: Any]] ?? []).compactMap { move -> (key: String, to: Int)? in
            guard let row = move["row"] as? [String: Any], let to = move["to"] as? Int else { return nil }
            return (key(of: Self.values(row)), to - 1)
        }
        let positions = difference["insertedAt"] as? [Int] ?? []
        var slots = [[String: JSONValue]?](repeating: nil, count: objects.count + inserted.count)
        var rest = objects
        for move in moves {
            guard let index = rest.firstIndex(where: { key(of: $0) == move.key }), slots.indices.contains(move.to)
            else {
                inconsistency = inconsistency ?? "moved a row the replica does not hold"
                continue
            }
            slots[move.to] = rest.remove(at: index)
        }
        for (row, position) in zip(inserted, positions) {
            guard slots.indices.contains(position - 1) else {
                inconsistency = inconsistency ?? "inserted at position \(position) of \(slots.count)"
                continue
            }
            slots[position - 1] = row
        }
        var next = rest.makeIterator()
        objects = slots.compactMap { $0 ?? next.next() }
    }

    private func key(of row: [String: JSONValue]) -> String {
        keys.isEmpty ? Self.text(row) : keys.map { row[$0].map { "\($0)" } ?? "nil" }.joined(separator: "\u{1F}")
    }

    private static func values(_ object: [String: Any]) -> [String: JSONValue] {
        object.mapValues(JSONValue.init)
    }

    private static func text(_ row: [String: JSONValue]) -> String {
        "{" + row.keys.sorted().map { "\($0):\(row[$0]!)" }.joined(separator: ",") + "}"
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
