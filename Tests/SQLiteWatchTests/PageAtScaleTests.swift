#if Server
import Foundation
import Testing
import TestSupport

/// The served page at 100 000 rows, in headless Chromium: the table draws
/// only the rows in view, and a one-row change puts at most a few rows in
/// the document, whatever the number of rows. Those counts decide the test;
/// the times the page measures itself (`window.livePageMetrics`: script and
/// the layout it causes) are printed, not asserted: on CI's two shared
/// cores a layout takes 2 to 18 ms for the same change, so a time bound
/// failed without a fault (the figures are in the README).
///
/// Alone in the process (`.isolated`): its printed figures are times, and
/// every other test of a run would share the machine's two cores with
/// Chromium.
@Suite(.isolated, .enabled(if: HeadlessChromium.isAvailable, "Chromium is not installed (CI installs it)"))
struct PageAtScaleTests {
    static let rowCount = 100_000
    static let sql = "SELECT * FROM place ORDER BY score, id"

    static func database() async throws -> WatchedDatabase {
        try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE place (id INTEGER PRIMARY KEY, name TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL,
              score INTEGER NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rowCount))
            INSERT INTO place SELECT i, 'Place ' || i, (i * 7919) % 1000, (i * 104729) % 1000, i FROM n;
            """)
    }

    @Test func aHundredThousandRowsDrawOnlyTheRowsInViewAndAChangePlacesAFew() async throws {
        let database = try await Self.database()
        let served = try await ServedWatch(database, sql: Self.sql, ["--ordered", "--max-rows", "200000"])
        try await HeadlessChromium.withNewPage { page in
            try await page.navigate(to: served.url)
            let firstRows = try await Self.waitFor("window.livePageMetrics.firstRows", on: page)
            let sinceNavigation = try #require(firstRows["sinceNavigation"] as? Double)
            let handling = try #require(firstRows["handling"] as? Double)
            print("PageAtScaleTests: first rows \(Int(sinceNavigation)) ms after navigation (\(Int(handling)) ms in the page)")
            let drawn = try await page.evaluate("String(document.querySelectorAll('#panel-0 tbody tr.row').length)")
            #expect((Int(drawn) ?? .max) < 200, "only the rows in view are in the document: \(drawn)")
            // Counts the rows each change puts in the table (a new row, or
            // one moved in the document), and the rows it takes out.
            _ = try await page.evaluate("""
                (() => {
                  const counts = window.rowsPlaced = { added: 0, removed: 0 };
                  const isRow = node => node.nodeName === "TR" && node.classList.contains("row");
                  new MutationObserver(records => {
                    for (const record of records) {
                      for (const node of record.addedNodes) if (isRow(node)) counts.added++;
                      for (const node of record.removedNodes) if (isRow(node)) counts.removed++;
                    }
                  }).observe(document.querySelector("#panel-0 tbody"), { childList: true });
                  return "";
                })()
                """)

            // Twenty one-row changes by another process, each applied
            // before the next: updates in view and far below it, a move
            // (the score orders the rows), an insertion, a deletion.
            var random = SplitMix64(seed: 30)
            for index in 0..<20 {
                let id = index % 2 == 0 ? Int.random(in: 1...20, using: &random) : Int.random(in: 1...Self.rowCount, using: &random)
                let statement = switch index % 5 {
                case 0, 1: "UPDATE place SET name = 'Renamed \(index)' WHERE id = \(id)"
                case 2: "UPDATE place SET score = \(Int.random(in: 1...Self.rowCount, using: &random)) WHERE id = \(id)"
                case 3: "INSERT INTO place VALUES (\(Self.rowCount + 1 + index), 'New \(index)', 1, 2, \(id))"
                default: "DELETE FROM place WHERE id = \(id)"
                }
                try await database.execute(statement)
                _ = try await Self.waitFor(
                    "window.livePageMetrics.changes.length >= \(index + 1) ? {} : null", on: page)
            }
            let times = try await Self.waitFor("{ times: window.livePageMetrics.changes }", on: page)["times"]
            let inOrder = try #require(times as? [Double])
            let changes = inOrder.sorted()
            let median = changes[changes.count / 2]
            print("PageAtScaleTests: one-row changes at \(Self.rowCount) rows: median \(String(format: "%.1f", median)) ms, "
                + "max \(String(format: "%.1f", changes.last ?? 0)) ms (in order: \(inOrder.map { String(format: "%.1f", $0) }))")
            let final = try await database.currentRows(Self.sql, ordered: true, keys: ["id"])
            try await BrowserTests.waitUntilPageShows(final, page: page)
            // A one-row change places its own row and, at the edge of the
            // drawn rows, the one that enters or leaves them (a deleted row
            // leaves after its fade): at most 3 each. Redrawing the rows in
            // view would place \(drawn) rows a change.
            let placed = try await Self.waitFor("window.rowsPlaced", on: page)
            let added = try #require(placed["added"] as? Int)
            let removed = try #require(placed["removed"] as? Int)
            print("PageAtScaleTests: 20 changes placed \(added) rows and took out \(removed) (\(drawn) rows drawn)")
            #expect(added <= 3 * 20 && removed <= 3 * 20, "rows placed by 20 one-row changes: \(placed)")
            #expect(inOrder.count == 20 && added > 0, "every change was applied and measured: \(inOrder)")
        }
        try await served.stop()
    }

    /// Evaluates `expression` (an object, or null while not ready) until it
    /// is not null; returns it. Throws after 60 s.
    static func waitFor(_ expression: String, on page: DevToolsPage) async throws -> [String: Any] {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline {
            // Null too before the page has loaded.
            let text = try await page.evaluate(
                "(() => { try { return JSON.stringify(\(expression)); } catch (error) { return 'null'; } })()")
            if text != "null", !text.isEmpty,
                let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            {
                return object
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ChildProcessFailure(description: "the page never gave \(expression)")
    }
}
#endif
