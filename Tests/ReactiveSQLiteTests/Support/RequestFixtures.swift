import DatabaseTestSupport
import ReactiveSQLite

/// The schema, rows and record types shared by the request, cursor and
/// region recording tests. Types are nested so that their names do not
/// clash with other tests' records (`databaseTableName` uses the type's own
/// name, without the namespace).
enum RequestFixtures {
    /// Tables of every kind of primary key, and views on them.
    static let schemaSQL = """
        CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT NOT NULL, color TEXT);
        CREATE TABLE player (id INTEGER PRIMARY KEY, teamId INTEGER REFERENCES team(id), name TEXT NOT NULL, score INTEGER);
        CREATE TABLE country (code TEXT PRIMARY KEY, name TEXT);
        CREATE TABLE pair (a TEXT, b INTEGER, c TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
        CREATE TABLE "Award" (Id INTEGER PRIMARY KEY, Label TEXT);
        CREATE TABLE logEntry (message TEXT);
        CREATE TABLE descending (id INTEGER PRIMARY KEY DESC, label TEXT);
        CREATE TABLE word (spelling TEXT COLLATE NOCASE, language TEXT, PRIMARY KEY (spelling, language));
        CREATE VIEW playerSummary AS SELECT id, name FROM player;
        CREATE VIEW shoutedPlayer AS SELECT upper(name) AS shout FROM playerSummary;
        CREATE VIEW roster AS SELECT player.name AS playerName, team.name AS teamName
            FROM player JOIN team ON team.id = player.teamId;
        """

    /// Two teams (the second without color) and four players (the last
    /// without team and score).
    static let rowsSQL = """
        INSERT INTO team (id, name, color) VALUES (1, 'Red', 'red'), (2, 'Blue', NULL);
        INSERT INTO player (id, teamId, name, score) VALUES
            (1, 1, 'Arthur', 100), (2, 1, 'Barbara', 200), (3, 2, 'Craig', 150), (4, NULL, 'David', NULL);
        """

    /// A database of `kind` with the schema, and the rows unless `withRows` is false.
    static func makeDatabase(_ kind: DatabaseKind, withRows: Bool = true) throws -> TestDatabase {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: schemaSQL)
            if withRows { try db.execute(sql: rowsSQL) }
        }
        return test
    }

    struct Player: TableRecord, FetchableRecord, Equatable {
        var id: Int64
        var teamId: Int64?
        var name: String
        var score: Int?

        init(id: Int64, teamId: Int64?, name: String, score: Int?) {
            self.id = id
            self.teamId = teamId
            self.name = name
            self.score = score
        }

        init(row: Row) throws {
            id = try row["id"]
            teamId = try row["teamId"]
            name = try row["name"]
            score = try row["score"]
        }

        static let arthur = Player(id: 1, teamId: 1, name: "Arthur", score: 100)
        static let barbara = Player(id: 2, teamId: 1, name: "Barbara", score: 200)
        static let craig = Player(id: 3, teamId: 2, name: "Craig", score: 150)
        static let david = Player(id: 4, teamId: nil, name: "David", score: nil)
    }

    /// A record type whose table name is not derived from the type name.
    struct Hero: TableRecord {
        static let databaseTableName = "player"
    }

    struct Team: TableRecord {}
    struct Country: TableRecord {}
    struct Pair: TableRecord {}
    /// The table is declared `"Award"`, and the default name is `award`.
    struct Award: TableRecord {}
    /// A table without declared primary key: its key is the rowid.
    struct LogEntry: TableRecord {}
    /// `INTEGER PRIMARY KEY DESC`: not an alias of the rowid.
    struct Descending: TableRecord {}
    /// A compound key whose first column declares `COLLATE NOCASE`.
    struct Word: TableRecord {}
    /// A view.
    struct PlayerSummary: TableRecord {}
    /// No such table.
    struct Ghost: TableRecord {}
}
