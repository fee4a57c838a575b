import DatabaseRegions

/// An ordering term of a `QueryInterfaceRequest`.
enum QueryOrdering: Sendable {
    case sql(String)
    case primaryKey
}
