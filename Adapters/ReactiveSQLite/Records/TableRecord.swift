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
    /// The type name with its leading capitals lowercased, as GRDB names
    /// tables: `Player` gives `player`, `HTTPRequest` `httpRequest`, `URL`
    /// `url`; the generic arguments of a generic type are left out
    /// (`Box<Int>` gives `box`).
    public static var databaseTableName: String {
        defaultTableName(forTypeName: String(describing: Self.self))
    }
}

/// See `TableRecord.databaseTableName`.
func defaultTableName(forTypeName description: String) -> String {
    let typeName = description.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
    let capitals = typeName.prefix { $0.isUppercase }.count
    switch capitals {
    case 0: return String(typeName)
    case 1, typeName.count: return typeName.prefix(capitals).lowercased() + typeName.dropFirst(capitals)
    // `HTTPRequest`: the last capital starts the next word.
    default: return typeName.prefix(capitals - 1).lowercased() + typeName.dropFirst(capitals - 1)
    }
}
