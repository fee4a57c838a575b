// A todo app's screens, kept live by `LiveValue` and a shared observation,
// while another process edits the database. Run it with `swift run live-todos`.
//
// The view model holds what a SwiftUI app would hold in `@State`: a
// `LiveValue` of the open todos ordered by priority, and one of their count.
// Two "screens" (a badge and a summary) subscribe to one shared
// observation of the counts: one fetch per commit for both. The screen is
// re-rendered through `withObservationTracking`, as SwiftUI re-evaluates a
// view's body when what it read changes.
//
// The other process is the `sqlite3` shell, fed through a pipe: it adds
// todos and completes some, one transaction at a time, 40 ms apart. The
// database is in WAL mode and the pool observes external changes, so each
// of the shell's commits reaches the screens. Halfway, the list is paused
// (a screen off view: no fetch) and then resumed (one fetch of the current
// state).
//
// At the end the program checks that every screen shows a fresh fetch of
// the database, prints
//
//     final: 9 open, 6 done, every screen matches the database
//
// and exits with status 0; status 1 when a screen is wrong or late.

import Dispatch
import Foundation
import Observation
import ReactiveSQLite
import Synchronization

// MARK: - Records

struct Todo: FetchableRecord, TableRecord, Equatable, Sendable {
    static let databaseTableName = "todo"
    var id: Int64
    var title: String
    var priority: Int
    var isDone: Bool

    init(row: Row) throws {
        id = try row["id"]
        title = try row["title"]
        priority = try row["priority"]
        isDone = try row["done"]
    }
}

struct Counts: Equatable, Sendable {
    var open: Int
    var done: Int

    static func fetch(_ db: Database) throws -> Counts {
        let open = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM todo WHERE done = 0") ?? 0
        let done = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM todo WHERE done = 1") ?? 0
        return Counts(open: open, done: done)
    }
}

// MARK: - The view model

/// What the app's screens show, as a SwiftUI app would hold it.
@MainActor
@Observable
final class TodoScreens {
    /// The list screen: open todos, the most urgent first.
    let openTodos: LiveValue<[Todo]>
    /// The count of open todos, for the title.
    let openCount: LiveValue<Int>
    /// The badge and the summary: one shared observation, two subscribers.
    let counts: SharedValueObservation<Counts>
    private(set) var badge: Counts?
    private(set) var summary: Counts?
    @ObservationIgnored private var screenTasks: [Task<Void, Never>] = []
    /// Fetches of the shared counts, whatever the number of screens.
    let countFetches = FetchCounter()

    init(_ pool: DatabasePool) {
        openTodos = LiveValue(
            .trackingAll(Todo.all().filter(sql: "done = 0").order(sql: "priority DESC, id")),
            in: pool, initialValue: [])
        openCount = LiveValue(.trackingCount(Todo.all().filter(sql: "done = 0")), in: pool, initialValue: 0)
        counts = ValueObservation.tracking(Counts.fetch)
            .removeDuplicates()
            .handleEvents(willFetch: { [countFetches] in countFetches.increment() })
            .shared(in: pool, scheduling: .async(onQueue: .main))
    }

    /// The badge and the summary screens appear: each iterates the shared
    /// observation's values, as a SwiftUI `.task` would.
    func showCountScreens() {
        screenTasks.append(Task { [weak self, counts] in
            do {
                for try await value in counts.values() { self?.badge = value }
            } catch {
                print("badge: \(error)")
            }
        })
        screenTasks.append(Task { [weak self, counts] in
            do {
                for try await value in counts.values() { self?.summary = value }
            } catch {
                print("summary: \(error)")
            }
        })
    }

    /// The screens go away: their subscriptions end.
    func hideCountScreens() {
        for task in screenTasks { task.cancel() }
        screenTasks = []
    }

    /// Whether every screen shows `expected`.
    func shows(_ expected: (todos: [Todo], counts: Counts)) -> Bool {
        openTodos.value == expected.todos && openCount.value == expected.counts.open
            && badge == expected.counts && summary == expected.counts
            && !openTodos.isLoading && !openTodos.isPaused
    }
}

/// A count shared with the observation's threads.
final class FetchCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

// MARK: - Rendering

/// Renders the screens, and renders them again when something they read
/// changes (once per change of the observed properties).
@MainActor
final class Renderer {
    private let screens: TodoScreens
    private(set) var frames = 0

    init(_ screens: TodoScreens) {
        self.screens = screens
    }

    func renderWhenChanged() {
        withObservationTracking {
            render()
        } onChange: {
            // Called before the change: render in the next turn, after it.
            Task { @MainActor in self.renderWhenChanged() }
        }
    }

    private func render() {
        frames += 1
        let todos = screens.openTodos
        let state = todos.isPaused ? "paused" : todos.isLoading ? "loading" : "live"
        let top = todos.value.prefix(3).map { "[p\($0.priority)] \($0.title)" }.joined(separator: ", ")
        let badge = screens.badge.map { "\($0.open)" } ?? "-"
        let summary = screens.summary.map { "\($0.open) open, \($0.done) done" } ?? "-"
        print("frame \(frames): list \(screens.openCount.value) open (\(state)): \(top) | badge \(badge) | summary \(summary)")
    }
}

// MARK: - The other process

/// The `sqlite3` shell, fed one statement at a time through a pipe.
final class SQLiteShell {
    private let process = Process()
    private let input = Pipe()

    init(databasePath: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A busy timeout: the pool's readers and writer share the file.
        process.arguments = ["sqlite3", "-cmd", ".timeout 5000", "-bail", databasePath]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    func run(_ sql: String) {
        input.fileHandleForWriting.write(Data((sql + "\n").utf8))
    }

    /// Ends the shell's input, and waits for it to exit: its status.
    func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

// MARK: - Main

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-todos-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("todos.sqlite").path

var configuration = Configuration()
// The shell's commits reach the observations.
configuration.observesExternalChanges = true
let pool = try DatabasePool(path: path, configuration: configuration)
try pool.write { db in
    try db.execute(sql: """
        CREATE TABLE todo (id INTEGER PRIMARY KEY, title TEXT NOT NULL, priority INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0);
        INSERT INTO todo (title, priority) VALUES ('Write the release notes', 2), ('Water the plants', 1);
        """)
}

let screens = TodoScreens(pool)
screens.showCountScreens()
let renderer = Renderer(screens)
renderer.renderWhenChanged()

let shell = try SQLiteShell(databasePath: path)
let titles = [
    "Call the plumber", "Book the flights", "Renew the passport", "Fix the bike", "Buy coffee",
    "Answer the landlord", "Back up the laptop", "Read chapter 4", "Cancel the gym", "Plan the trip",
    "Pay the bills", "Sort the photos", "Return the books",
]
var completed = 0
for (index, title) in titles.enumerated() {
    if index == 6 {
        // The list goes off screen: its observation stops, and fetches nothing.
        screens.openTodos.isPaused = true
        print("list paused")
    }
    if index == 10 {
        // Back on screen: one fetch of the current state.
        screens.openTodos.isPaused = false
        print("list resumed")
    }
    shell.run("INSERT INTO todo (title, priority) VALUES ('\(title)', \(index % 5));")
    if index % 2 == 1 {
        // Complete the most urgent open todo.
        shell.run("UPDATE todo SET done = 1 WHERE id = (SELECT id FROM todo WHERE done = 0 ORDER BY priority DESC, id LIMIT 1);")
        completed += 1
    }
    try await Task.sleep(for: .milliseconds(40))
}
let shellStatus = shell.finish()
guard shellStatus == 0 else {
    print("error: the sqlite3 shell exited with status \(shellStatus)")
    exit(1)
}

// Every screen shows the database's state, soon.
let expected = try pool.read { db in
    (todos: try Todo.all().filter(sql: "done = 0").order(sql: "priority DESC, id").fetchAll(db), counts: try Counts.fetch(db))
}
let deadline = ContinuousClock.now + .seconds(10)
while !screens.shows(expected) {
    guard ContinuousClock.now < deadline else {
        print("error: the screens do not show the database's state after 10 s")
        print("expected \(expected.counts), badge \(String(describing: screens.badge)), list \(screens.openTodos.value.count)")
        exit(1)
    }
    try await Task.sleep(for: .milliseconds(10))
}
screens.hideCountScreens()
print("\(renderer.frames) frames rendered; \(screens.countFetches.value) fetches of the counts for two screens")
print("final: \(expected.counts.open) open, \(expected.counts.done) done, every screen matches the database")
