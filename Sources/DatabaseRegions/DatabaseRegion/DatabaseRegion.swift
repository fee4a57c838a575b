/// A part of a database that an observation depends on: for each table, some
/// or all of its columns, and some or all of its rows.
///
/// A region answers one question: can a change modify the data it covers?
/// See `isModified(byEventsOfKind:)` and `isModified(by:)`.
///
/// ```swift
/// let scores = DatabaseRegion(table: "player", columns: ["score"])
/// let team = DatabaseRegion(table: "team", rowIDs: [1])
/// let region = scores.union(team)
/// print(region) // player(score), team(*)[1]
/// ```
///
/// Table and column names compare as SQLite compares them: ASCII letters
/// without regard to case (`"Player"` and `"player"` are the same table).
/// Two regions with the same content are equal, and hash alike, however they
/// were built.
///
/// A region keeps, per table, a product of columns and rows. A union of two
/// regions restricted differently on the same table may therefore contain
/// more than both (`player(a)[1]` and `player(b)[2]` unite into
/// `player(a,b)[1,2]`), so it may see a change that neither region would: a
/// union over-approximates and never misses.
public struct DatabaseRegion: Sendable {
    /// The tables of the region, or `nil` for the full database.
    ///
    /// Invariant: no table region is empty (has no column or no row).
    var tableRegions: [CaseInsensitiveName: TableRegion]?

    init(tableRegions: [CaseInsensitiveName: TableRegion]?) {
        self.tableRegions = tableRegions
    }

    /// The region that contains every table, column and row: every change
    /// modifies it, including changes to tables that do not exist yet.
    public static let fullDatabase = DatabaseRegion(tableRegions: nil)

    /// Creates the empty region: no change modifies it.
    ///
    /// - Complexity: O(1).
    public init() {
        self.init(tableRegions: [:])
    }

    /// Creates a region made of some columns and some rows of one table.
    ///
    /// `nil` means all: `DatabaseRegion(table: "player")` contains all the
    /// columns and all the rows of `player`. An empty set of columns or of
    /// rowids gives the empty region, which no change modifies.
    ///
    /// ```swift
    /// DatabaseRegion(table: "player")                                 // player(*)
    /// DatabaseRegion(table: "Player", columns: ["Name", "id"])        // player(id,name)
    /// DatabaseRegion(table: "player", rowIDs: [2, 1])                 // player(*)[1,2]
    /// DatabaseRegion(table: "player", columns: ["name"], rowIDs: [1]) // player(name)[1]
    /// DatabaseRegion(table: "player", columns: [])                    // empty
    /// ```
    ///
    /// - Parameters:
    ///   - table: The table name, compared without regard to ASCII case.
    ///   - columns: The column names (compared without regard to ASCII case),
    ///     or `nil` for all columns.
    ///   - rowIDs: The rowids, or `nil` for all rows.
    /// - Complexity: O(c), where c is the number of columns.
    public init(table: String, columns: Set<String>? = nil, rowIDs: Set<Int64>? = nil) {
        if columns?.isEmpty == true || rowIDs?.isEmpty == true {
            self.init()
            return
        }
        let tableRegion = TableRegion(
            columns: columns.map { Set($0.lazy.map(CaseInsensitiveName.init)) },
            rowIDs: rowIDs)
        self.init(tableRegions: [CaseInsensitiveName(table): tableRegion])
    }

    /// Whether the region is empty: no change modifies it.
    ///
    /// - Complexity: O(1).
    public var isEmpty: Bool {
        tableRegions?.isEmpty == true
    }

    /// Whether the region is the full database: every change modifies it.
    ///
    /// - Complexity: O(1).
    public var isFullDatabase: Bool {
        tableRegions == nil
    }
}

extension DatabaseRegion: Hashable {
    /// Whether two regions have the same content: the same tables, each with
    /// the same columns and rows, names compared without regard to ASCII case.
    ///
    /// - Complexity: O(n), where n is the size of the regions (tables, columns and rowids).
    public static func == (lhs: DatabaseRegion, rhs: DatabaseRegion) -> Bool {
        lhs.tableRegions == rhs.tableRegions
    }

    /// Hashes the region's content, so that equal regions hash alike.
    ///
    /// - Complexity: O(n), where n is the size of the region (tables, columns and rowids).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(tableRegions)
    }
}
