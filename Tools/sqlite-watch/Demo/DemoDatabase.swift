import ReactiveSQLite

/// The demo's leaderboard: its schema, its first players, and the random
/// changes the writer makes.
enum DemoDatabase {
    static let names = [
        "Arthur", "Barbara", "Craig", "David", "Elena", "Fatima", "Gaspard", "Hiro", "Ines", "Jamal",
        "Kiri", "Lena", "Mateo", "Noor", "Olga", "Priya", "Quentin", "Rosa",
    ]

    /// The places of the map, and where they start (a plane of 100 × 100).
    static let places: [(name: String, x: Double, y: Double)] = [
        ("Amber Bay", 12, 80), ("Birch Hill", 30, 62), ("Cedar Ford", 55, 85), ("Dune Rock", 78, 70),
        ("Elm Cross", 20, 35), ("Fox Hollow", 45, 45), ("Granite Peak", 70, 30), ("Heron Lake", 88, 12),
        ("Iris Field", 35, 10), ("Juniper Gate", 60, 55), ("Kestrel Point", 8, 8), ("Lark Meadow", 92, 48),
    ]

    /// Creates the database file with 12 players and 8 places.
    static func create(at path: String) throws {
        let database = try DatabaseQueue(path: path)
        defer { database.close() }
        try database.write { db in
            try db.execute(sql: """
                CREATE TABLE player (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    score INTEGER NOT NULL
                )
                """)
            try db.execute(sql: """
                CREATE TABLE place (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    x REAL NOT NULL,
                    y REAL NOT NULL
                )
                """)
            for place in places.prefix(8) {
                try db.execute(
                    sql: "INSERT INTO place (name, x, y) VALUES (?, ?, ?)", arguments: [place.name, place.x, place.y])
            }
            for (index, name) in names.prefix(12).enumerated() {
                try db.execute(
                    sql: "INSERT INTO player (name, score) VALUES (?, ?)", arguments: [name, 1000 - index * 70])
            }
        }
    }

    /// Makes one random change: to the leaderboard two times in three,
    /// otherwise to the places.
    static func makeRandomChange(_ db: Database, using generator: inout some RandomNumberGenerator) throws {
        if Int.random(in: 0..<3, using: &generator) < 2 {
            try changeLeaderboard(db, using: &generator)
        } else {
            try changePlaces(db, using: &generator)
        }
    }

    /// Mostly a place that moves, sometimes one that appears or disappears,
    /// keeping between 5 and 12 places.
    static func changePlaces(_ db: Database, using generator: inout some RandomNumberGenerator) throws {
        let ids = try SQLRequest<Int64>(sql: "SELECT id FROM place").fetchAll(db)
        let dice = Int.random(in: 0..<100, using: &generator)
        if dice < 15, ids.count < places.count {
            let present = Set(try SQLRequest<String>(sql: "SELECT name FROM place").fetchAll(db))
            if let place = places.filter({ !present.contains($0.name) }).randomElement(using: &generator) {
                try db.execute(
                    sql: "INSERT INTO place (name, x, y) VALUES (?, ?, ?)", arguments: [place.name, place.x, place.y])
                return
            }
        }
        guard let id = ids.randomElement(using: &generator) else { return }
        if dice < 30, ids.count > 5 {
            try db.execute(sql: "DELETE FROM place WHERE id = ?", arguments: [id])
        } else {
            try db.execute(
                sql: "UPDATE place SET x = MIN(100, MAX(0, x + ?)), y = MIN(100, MAX(0, y + ?)) WHERE id = ?",
                arguments: [
                    Double.random(in: -12...12, using: &generator).rounded(), Double.random(in: -12...12, using: &generator).rounded(), id,
                ])
        }
    }

    /// Mostly a new score, sometimes a new player or a player who leaves,
    /// keeping between 8 and 16 players.
    static func changeLeaderboard(_ db: Database, using generator: inout some RandomNumberGenerator) throws {
        let ids = try SQLRequest<Int64>(sql: "SELECT id FROM player").fetchAll(db)
        let dice = Int.random(in: 0..<100, using: &generator)
        if dice < 15, ids.count < 16 {
            let present = Set(try SQLRequest<String>(sql: "SELECT name FROM player").fetchAll(db))
            if let name = names.filter({ !present.contains($0) }).randomElement(using: &generator) {
                try db.execute(
                    sql: "INSERT INTO player (name, score) VALUES (?, ?)",
                    arguments: [name, Int.random(in: 300...1200, using: &generator)])
                return
            }
        }
        guard let id = ids.randomElement(using: &generator) else { return }
        if dice < 25, ids.count > 8 {
            try db.execute(sql: "DELETE FROM player WHERE id = ?", arguments: [id])
        } else {
            try db.execute(
                sql: "UPDATE player SET score = MAX(0, score + ?) WHERE id = ?",
                arguments: [Int.random(in: -120...260, using: &generator), id])
        }
    }
}
