import DatabaseRegions

/// Regions that cover the cases of the region algebra: empty, full, one
/// table, columns, rowids, several tables, mixed case.
enum RepresentativeRegions {
    /// The regions, with their expected descriptions, by index.
    static let all: [(region: DatabaseRegion, description: String)] = [
        /* 0 */ (DatabaseRegion(), "empty"),
        /* 1 */ (.fullDatabase, "full database"),
        /* 2 */ (DatabaseRegion(table: "player"), "player(*)"),
        /* 3 */ (DatabaseRegion(table: "Player", columns: ["ID", "name"]), "player(id,name)"),
        /* 4 */ (DatabaseRegion(table: "player", columns: ["score", "name"]), "player(name,score)"),
        /* 5 */ (DatabaseRegion(table: "PLAYER", rowIDs: [2, 1]), "player(*)[1,2]"),
        /* 6 */ (DatabaseRegion(table: "player", rowIDs: [3, 2]), "player(*)[2,3]"),
        /* 7 */ (DatabaseRegion(table: "player", columns: ["NAME", "id"], rowIDs: [1]), "player(id,name)[1]"),
        /* 8 */ (DatabaseRegion(table: "pLaYeR", columns: ["Score"], rowIDs: [3]), "player(score)[3]"),
        /* 9 */ (DatabaseRegion(table: "team"), "team(*)"),
        /* 10 */ (DatabaseRegion(table: "Team", columns: ["id"], rowIDs: [1]), "team(id)[1]"),
        /* 11 */ (
            DatabaseRegion(table: "TEAM").union(DatabaseRegion(table: "player", columns: ["name", "Id"], rowIDs: [1])),
            "player(id,name)[1], team(*)"
        ),
    ]
}
