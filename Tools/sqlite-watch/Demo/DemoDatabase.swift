import ReactiveSQLite

/// The demo's leaderboard: its schema, its first players, and the random
/// changes the writer makes.
enum DemoDatabase {
    static let names = [
        "Arthur", "Barbara", "Craig", "David", "Elena", "Fatima", "Gaspard", "Hiro", "Ines", "Jamal",
        "Kiri", "Lena", "Mateo", "Noor", "Olga", "Priya", "Quentin", "Rosa",
    ]

    /// Creates the database file with 12 players.
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
            for (index, name) in names.prefix(12).enumerated() {
                try db.execute(
                    sql: "INSERT INTO player (name, score) VALUES (?, ?)", arguments: [name, 1000 - index * 70])
            }
        }
    }

    /// Makes one random change: mostly a new score, sometimes a new player
    /// or a player who leaves, keeping between 8 and 16 players.
    static func makeRandomChange(_ db: Database, using generator: inout some RandomNumberGenerator) throws {
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
