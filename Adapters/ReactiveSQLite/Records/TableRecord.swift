/// A type associated with a database table, which gets requests on that table:
/// `Player.all()`, `Player.filter(key: 1)`, `Player.orderByPrimaryKey()`...
///
/// ```swift
/// struct Player: Decodable, FetchableRecord, TableRecord {
///     var id: Int64
///     var name: String
/// }
/// let player = try Player.filter(key: 1).fetchOne(db)
/// ```
public protocol TableRecord {
    /// The name of the table. Default: the type name with a lowercased first
    /// letter (`Player` gives `player`).
    static var databaseTableName: String { get }
}

extension TableRecord {
    /// The type name with a lowercased first letter (`Player` gives `player`).
    public static var databaseTableName: String {
        let typeName = String(describing: Self.self)
        guard let first = typeName.first else { return typeName }
        return first.lowercased() + typeName.dropFirst()
    }
}
