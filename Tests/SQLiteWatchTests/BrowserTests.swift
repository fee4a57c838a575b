#if Server
import Foundation
import Testing
import TestSupport

/// The served page in a real browser: headless Chromium loads it while
/// another process changes the database, and its DOM must end showing what
/// a fresh query returns, in the table and on the plane.
@Suite(.enabled(if: HeadlessChromium.isAvailable, "Chromium is not installed (CI installs it)"), .serialized)
struct BrowserTests {
    static let sql = "SELECT * FROM place ORDER BY name, id"

    @Test func thePageShowsTheDatabaseAsOtherProcessesChangeIt() async throws {
        var random = SplitMix64(seed: 27)
        let places = (1...10).map { id in
            "INSERT INTO place VALUES (\(id), 'Place \(id)', \(Int.random(in: 0...100, using: &random)), \(Int.random(in: 0...100, using: &random)))"
        }
        let database = try await Self.placeDatabase(places)
        // 300 commits in 10 bursts: moves, renames (the order changes),
        // insertions, deletions.
        let bursts = (0..<10).map { _ in
            (0..<30).map { _ -> String in
                let id = Int.random(in: 1...20, using: &random)
                let x = Int.random(in: 0...100, using: &random), y = Int.random(in: 0...100, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0: return "DELETE FROM place WHERE id = \(id)"
                case 1: return "INSERT OR REPLACE INTO place VALUES (\(id), 'Place \(Int.random(in: 1...40, using: &random))', \(x), \(y))"
                case 2: return "UPDATE place SET name = 'Place \(Int.random(in: 1...40, using: &random))' WHERE id = \(id)"
                default: return "UPDATE place SET x = \(x), y = \(y) WHERE id = \(id)"
                }
            }
        }
        let served = try await ServedWatch(database, sql: Self.sql, ["--ordered"])
        let screenshotPath = Locked<String?>(nil)
        try await HeadlessChromium.withNewPage { page in
            try await page.navigate(to: served.url)
            let initial = try await database.currentRows(Self.sql, ordered: true, keys: ["id"])
            try await Self.waitUntilPageShows(initial, page: page)

            // 300 commits by other processes while the page is open.
            for statements in bursts {
                try await database.commit(statements)
            }
            let final = try await database.currentRows(Self.sql, ordered: true, keys: ["id"])
            let shown = try await Self.waitUntilPageShows(final, page: page)
            #expect(shown.contains("\"status\":\"live"))

            // Let the last animations end, for the people who look at the screenshot.
            try await Task.sleep(for: .seconds(1))
            let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                .appendingPathComponent(".build/browser-tests", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("sqlite-watch-serve.png")
            try await page.screenshot().write(to: file)
            screenshotPath.withLock { $0 = file.path }
        }
        try await served.stop()
        let path = try #require(screenshotPath.value)
        print("BrowserTests: screenshot of the page after the changes: \(path)")
    }

    @Test func thePageReconnectsByItselfToARestartedServer() async throws {
        let database = try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE place (id INTEGER PRIMARY KEY, name TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL);
            INSERT INTO place VALUES (1, 'Amber Bay', 12, 80), (2, 'Birch Hill', 30, 62);
            """)
        let first = try await ServedWatch(database, sql: Self.sql, ["--ordered"])
        let port = first.port
        try await HeadlessChromium.withNewPage { page in
            try await page.navigate(to: first.url)
            try await Self.waitUntilPageShows(
                try await database.currentRows(Self.sql, ordered: true, keys: ["id"]), page: page)
            // The server goes away; the database changes meanwhile; a
            // new server comes back on the same port.
            try await first.stop()
            try await database.execute("""
                UPDATE place SET x = 50 WHERE id = 1;
                INSERT INTO place VALUES (3, 'Cedar Ford', 55, 85);
                """)
            let second = try await ServedWatch(
                try database.watch([Self.sql, "--ordered", "--serve", "127.0.0.1:\(port)"]))
            let shown = try await Self.waitUntilPageShows(
                try await database.currentRows(Self.sql, ordered: true, keys: ["id"]), page: page)
            #expect(shown.contains("\"status\":\"live"))
            try await second.stop()
        }
    }

    /// A change moves only the rows it concerns in the document: the other
    /// rows stay where they are, so their animations do not start again
    /// (every row was appended anew at each change, and an old highlight
    /// replayed). Counted with a MutationObserver on the table's body.
    @Test func aChangeMovesOnlyTheRowsItConcerns() async throws {
        let places = (1...40).map { "INSERT INTO place VALUES (\($0), 'Place \(1000 + $0)', \($0), \($0))" }
        let database = try await Self.placeDatabase(places)
        let served = try await ServedWatch(database, sql: Self.sql, ["--ordered"])
        try await HeadlessChromium.withNewPage { page in
            try await page.navigate(to: served.url)
            try await Self.waitUntilPageShows(
                try await database.currentRows(Self.sql, ordered: true, keys: ["id"]), page: page)
            _ = try await page.evaluate("""
                (() => {
                  window.movedRows = 0;
                  new MutationObserver(records => {
                    for (const record of records) window.movedRows += record.addedNodes.length;
                  }).observe(document.querySelector("#panel-0 tbody"), { childList: true });
                  return "observing";
                })()
                """)
            // An update in place, then a move of one row to the top and
            // one to the bottom, then an insertion.
            for (statement, moves) in [
                ("UPDATE place SET x = 99 WHERE id = 6", 0),
                ("UPDATE place SET name = 'Place 0000' WHERE id = 30", 1),
                ("UPDATE place SET name = 'Place 9999' WHERE id = 3", 1),
                ("INSERT INTO place VALUES (41, 'Place 1020b', 1, 1)", 1),
            ] {
                _ = try await page.evaluate("window.movedRows = 0")
                try await database.execute(statement)
                try await Self.waitUntilPageShows(
                    try await database.currentRows(Self.sql, ordered: true, keys: ["id"]), page: page)
                #expect(try await page.evaluate("String(window.movedRows)") == "\(moves)", "\(statement)")
            }
        }
        try await served.stop()
    }

    /// Three hundred rows, more than the table draws: a change out of view
    /// shows a button that scrolls to it; a click on a header sorts, the
    /// filter keeps the rows whose text contains it, and both follow the
    /// changes that come after.
    @Test func sortingFilteringAndChangesOutOfViewFollowTheData() async throws {
        let places = (1...300).map { "INSERT INTO place VALUES (\($0), 'Place \($0)', \($0 % 17), \($0 % 23))" }
        let database = try await Self.placeDatabase(places)
        let sql = "SELECT * FROM place ORDER BY id"
        let served = try await ServedWatch(database, sql: sql, ["--ordered"])
        try await HeadlessChromium.withNewPage { page in
            try await page.navigate(to: served.url)
            try await Self.waitUntilPageShows(
                try await database.currentRows(sql, ordered: true, keys: ["id"]), page: page)
            #expect(try await page.evaluate(
                "String(document.querySelectorAll('#panel-0 tbody tr.row').length)") != "300")

            // A change far below the viewport.
            try await database.execute("UPDATE place SET name = 'Far away' WHERE id = 250")
            try await Self.waitUntilPageShows(
                try await database.currentRows(sql, ordered: true, keys: ["id"]), page: page)
            let below = "document.querySelector('#panel-0 button.below')"
            #expect(try await page.evaluate("\(below).hidden ? 'hidden' : \(below).textContent") == "↓ 1 changed row below")
            _ = try await page.evaluate("\(below).click(), 'clicked'")
            let found = try await page.evaluate("""
                (() => {
                  const wrap = document.querySelector("#panel-0 .table-wrap").getBoundingClientRect();
                  const tr = document.querySelector('#panel-0 tr[data-key="[250]"]');
                  if (!tr) return "not drawn";
                  const box = tr.getBoundingClientRect();
                  return box.top >= wrap.top && box.bottom <= wrap.bottom ? "in view" : "out of view";
                })()
                """)
            #expect(found == "in view")
            #expect(try await page.evaluate("String(\(below).hidden)") == "true")

            // Sorted by name (a click on its header), descending (a second click).
            let byName = "rows => rows.sort((a, b) => a.name < b.name ? 1 : a.name > b.name ? -1 : 0)"
            _ = try await page.evaluate("[...document.querySelectorAll('#panel-0 th')][1].click(), 'sorted'")
            _ = try await page.evaluate("[...document.querySelectorAll('#panel-0 th')][1].click(), 'sorted'")
            try await Self.waitUntilPageShows(
                try await database.currentRows(sql, ordered: true, keys: ["id"]), page: page, view: byName)
            // Names stay unique: rows that tie keep their arrival order
            // on the page, which the check cannot know.
            var random = SplitMix64(seed: 31)
            for burst in 0..<3 {
                try await database.commit((0..<10).map { step in
                    let id = Int.random(in: 1...320, using: &random)
                    let name = "\(Int.random(in: 1...999, using: &random))-\(burst)-\(step)"
                    return switch Int.random(in: 0..<3, using: &random) {
                    case 0: "DELETE FROM place WHERE id = \(id)"
                    case 1: "INSERT OR REPLACE INTO place VALUES (\(id), 'Place \(name)', 1, 2)"
                    default: "UPDATE place SET name = 'Renamed \(name)' WHERE id = \(id)"
                    }
                })
            }
            try await Self.waitUntilPageShows(
                try await database.currentRows(sql, ordered: true, keys: ["id"]), page: page, view: byName)

            // Filtered: rows whose text contains "place 1", sorted still.
            _ = try await page.evaluate("""
                (() => {
                  const input = document.querySelector("#panel-0 input");
                  input.value = "Place 1";
                  input.dispatchEvent(new Event("input"));
                  return "filtered";
                })()
                """)
            let filtered = "rows => (\(byName))(rows.filter(row => Object.values(row).some(value => "
                + "String(value).toLowerCase().includes('place 1'))))"
            try await Self.waitUntilPageShows(
                try await database.currentRows(sql, ordered: true, keys: ["id"]), page: page, view: filtered)
            try await database.commit([
                "INSERT INTO place VALUES (400, 'Place 1000', 3, 3)", "UPDATE place SET name = 'Place 1x' WHERE id = 2",
                "DELETE FROM place WHERE id = 100",
            ])
            try await Self.waitUntilPageShows(
                try await database.currentRows(sql, ordered: true, keys: ["id"]), page: page, view: filtered)
        }
        try await served.stop()
    }

    /// A result over `--max-rows`: the page says why it shows nothing new,
    /// and shows the rows again once the result is back under the limit.
    @Test func aResultOverTheRowLimitIsExplainedOnThePage() async throws {
        let database = try await WatchedDatabase("""
            CREATE TABLE place (id INTEGER PRIMARY KEY, name TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL);
            INSERT INTO place VALUES (1, 'Amber Bay', 12, 80), (2, 'Birch Hill', 30, 62);
            """)
        let served = try await ServedWatch(database, sql: Self.sql, ["--max-rows", "2"])
        try await HeadlessChromium.withNewPage { page in
            try await page.navigate(to: served.url)
            try await Self.waitUntilPageShows(
                try await database.currentRows(Self.sql, ordered: false, keys: ["id"]), page: page)
            try await database.execute("INSERT INTO place VALUES (3, 'Cedar Ford', 55, 85)")
            let problem = try await PageAtScaleTests.waitFor("""
                document.querySelector("#panel-0 p.problem").textContent
                  ? { problem: document.querySelector("#panel-0 p.problem").textContent,
                      status: document.getElementById("status").textContent } : null
                """, on: page)
            #expect((problem["problem"] as? String)?.contains("returned more than the server's limit of 2 rows") == true)
            #expect((problem["status"] as? String)?.hasPrefix("failed") == true, "\(problem)")
            try await database.execute("DELETE FROM place WHERE id = 3")
            // The page tries again by itself (every ten seconds), and
            // shows the rows it gets.
            let live = try await PageAtScaleTests.waitFor(
                "document.querySelector('#panel-0 p.problem').textContent === '' ? "
                    + "{ status: document.getElementById('status').textContent } : null", on: page)
            #expect((live["status"] as? String)?.hasPrefix("live") == true, "\(live)")
            try await Self.waitUntilPageShows(
                try await database.currentRows(Self.sql, ordered: false, keys: ["id"]), page: page)
        }
        try await served.stop()
    }

    /// A database in WAL mode with a `place` table (id, name, x, y) filled
    /// by the `INSERT` statements `places`.
    static func placeDatabase(_ places: [String]) async throws -> WatchedDatabase {
        try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE place (id INTEGER PRIMARY KEY, name TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL);
            \(places.joined(separator: ";\n"));
            """)
    }

    /// Polls the page's DOM until its table and its points are `expected`'s
    /// rows; returns what the page showed. Throws after 30 s.
    ///
    /// - Parameter view: A JavaScript function from the expected rows (objects)
    ///   to the rows the table shows, in order (a filter, a sort).
    @discardableResult
    static func waitUntilPageShows(
        _ expected: JSONRowReplica, page: DevToolsPage, view: String = "rows => rows"
    ) async throws -> String {
        // The tool's JSON line, parsed in the page, compared with the DOM there.
        let rowsJSON = "[" + expected.rows.joined(separator: ",") + "]"
        let check = """
            (() => {
              const expected = \(Self.javaScriptRows(expected));
              const panel = document.getElementById("panel-0");
              if (!panel) return JSON.stringify({ same: false, reason: "no panel" });
              const columns = [...panel.querySelectorAll("thead th")].map(th => th.textContent);
              // The table draws the rows around the viewport, from the
              // position in the body's data-first.
              const first = Number(panel.querySelector("tbody").dataset.first || 0);
              const rows = [...panel.querySelectorAll("tbody tr.row:not(.leaving)")]
                .map(tr => [...tr.cells].map(td => td.dataset.value));
              const shownRows = (\(view))(expected.slice());
              const expectedRows = shownRows.slice(first, first + Math.max(rows.length, 1))
                .map(row => columns.map(column => JSON.stringify(row[column])));
              const total = Number(panel.dataset.rows);
              const points = [...panel.querySelectorAll("g.point:not(.leaving)")]
                .map(g => g.dataset.key + " " + g.dataset.x + " " + g.dataset.y).sort();
              const expectedPoints = expected
                .map(row => JSON.stringify([row.id]) + " " + JSON.stringify(row.x) + " " + JSON.stringify(row.y)).sort();
              // Above 1 500 points, the plane is a canvas: its count is checked.
              const plane = panel.querySelector(".plane");
              const onCanvas = plane && !plane.querySelector("canvas").hidden;
              const samePoints = onCanvas
                ? Number(plane.dataset.points) === expected.length
                : JSON.stringify(points) === JSON.stringify(expectedPoints);
              const same = JSON.stringify(rows) === JSON.stringify(expectedRows) && total === shownRows.length
                && rows.length >= Math.min(shownRows.length - first, 20) && samePoints
                && columns.length === (expected.length > 0 ? Object.keys(expected[0]).length : columns.length);
              return JSON.stringify({ same, status: document.getElementById("status").textContent,
                rows: rows.length, first, total, points: points.length, expected: shownRows.length });
            })()
            """
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var shown = ""
        while clock.now < deadline {
            shown = try await page.evaluate(check)
            if shown.contains("\"same\":true") { return shown }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ChildProcessFailure(description: "the page does not show the expected rows: \(shown)\nexpected: \(rowsJSON)")
    }

    /// The replica's rows as a JavaScript array of objects.
    private static func javaScriptRows(_ replica: JSONRowReplica) -> String {
        "[" + replica.jsonObjects.joined(separator: ",") + "]"
    }
}
#endif
