/// The values bound to the parameters of a statement: positional (`?`), named
/// (`:name`, `@name`, `$name`), or both.
///
/// ```swift
/// try db.execute(sql: "INSERT INTO player (id, name, score) VALUES (?, ?, ?)",
///                arguments: [1, "Arthur", nil])
/// try db.execute(sql: "UPDATE player SET score = :score WHERE id = :id",
///                arguments: ["id": 1, "score": 100])
/// ```
///
/// Arguments are checked before a statement runs: a missing value, a named
/// value the statement does not use, or values left over after the last
/// statement of a multi-statement `execute` throw a `DatabaseError` with code
/// `SQLITE_RANGE`. A `nil` literal is NULL. Values are converted to
/// `DatabaseValue` when the arguments are created, so arguments are `Sendable`.
public struct StatementArguments: Sendable, Hashable, CustomStringConvertible,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// The positional values, in order.
    public private(set) var values: [DatabaseValue]
    /// The named values, keyed by parameter name without its prefix
    /// (`"name"` for `:name`, `@name` and `$name`).
    public private(set) var namedValues: [String: DatabaseValue]

    /// No arguments.
    public init() {
        values = []
        namedValues = [:]
    }

    /// Positional arguments.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        self.values = values.map { $0?.databaseValue ?? .null }
        namedValues = [:]
    }

    /// Positional arguments that are database values already.
    init(databaseValues: [DatabaseValue]) {
        values = databaseValues
        namedValues = [:]
    }

    /// Named arguments; a key may be written with or without its prefix.
    public init(_ namedValues: [String: (any DatabaseValueConvertible)?]) {
        values = []
        self.namedValues = Dictionary(
            namedValues.map { (Self.parameterName($0.key), $0.value?.databaseValue ?? .null) },
            uniquingKeysWith: { _, last in last })
    }

    /// Positional arguments: `[1, "Arthur", nil]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }

    /// Named arguments: `["id": 1, "name": "Arthur"]`.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Whether there is no value at all.
    public var isEmpty: Bool { values.isEmpty && namedValues.isEmpty }

    /// Appends the values of `other`: positional values after these, named
    /// values replacing these on a name conflict.
    public mutating func append(contentsOf other: StatementArguments) {
        values.append(contentsOf: other.values)
        namedValues.merge(other.namedValues) { _, new in new }
    }

    /// `[1, 'Arthur', NULL]`, `[id: 1, name: 'Arthur']`, or both.
    public var description: String {
        let positional = values.map(\.description)
        let named = namedValues.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "[" + (positional + named).joined(separator: ", ") + "]"
    }

    /// A parameter name without its `:`, `@` or `$` prefix.
    static func parameterName(_ name: String) -> String {
        guard let first = name.utf8.first, first == UInt8(ascii: ":") || first == UInt8(ascii: "@")
            || first == UInt8(ascii: "$")
        else { return name }
        return String(name.dropFirst())
    }
}
