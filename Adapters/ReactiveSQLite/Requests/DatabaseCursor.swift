/// A cursor over the results of a request, which reads rows from SQLite one
/// at a time as it is iterated, without loading them all.
///
/// ```swift
/// let cursor = try SQLRequest<Row>(sql: "SELECT * FROM player").fetchCursor(db)
/// while let row = try cursor.next() {
///     ...
/// }
/// ```
///
/// A cursor belongs to its access closure, like `Database`: it is not
/// `Sendable`, and must not be used after the closure returns. While it is
/// not exhausted, its statement is busy: another fetch of the same SQL
/// compiles a statement of its own, so several cursors over the same SQL
/// can be iterated at once. A cursor abandoned before its end gives its
/// statement back when it is released.
///
/// A statement that writes (`INSERT ... RETURNING`) makes all its changes
/// at its first step, and outside of a transaction commits at its end: its
/// cursor runs it to the end at the first `next()`, which throws when the
/// commit fails, and then hands out the elements it read.
public final class DatabaseCursor<Element> {
    private let statement: Statement
    private let decode: (Statement) throws -> Element
    private var isDone = false
    /// For a statement that writes, the elements not handed out yet, last first.
    private var pendingElements: [Element]?

    init(statement: Statement, decode: @escaping (Statement) throws -> Element) {
        self.statement = statement
        self.decode = decode
        statement.isBusy = true
    }

    deinit {
        // An abandoned cursor gives its statement back to the cache, whether
        // it was stepped or not. Released outside of its access, it stops
        // the program (a programmer error), unless the connection is closed.
        guard !isDone, statement.database.mayResetStatement() else { return }
        statement.reset()
        statement.isBusy = false
    }

    /// The next element, or nil when the results are exhausted. After nil,
    /// or after an error, `next()` returns nil.
    ///
    /// - Throws: A `DatabaseError` when SQLite fails, or the decoding error of
    ///   the element.
    public func next() throws -> Element? {
        if pendingElements != nil { return pendingElements!.popLast() }
        guard !isDone else { return nil }
        statement.database.checkAccess()
        if !statement.isReadOnly {
            var elements: [Element] = []
            defer { isDone = true }
            try statement.fetching { statement in
                while try statement.step() { elements.append(try decode(statement)) }
            }
            statement.isBusy = false
            pendingElements = elements.reversed()
            return pendingElements!.popLast()
        }
        do {
            if try statement.step() {
                return try decode(statement)
            }
            finish()
            return nil
        } catch {
            finish()
            throw error
        }
    }

    /// Calls `body` for each remaining element.
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() {
            try body(element)
        }
    }

    private func finish() {
        isDone = true
        statement.reset()
        statement.isBusy = false
    }
}
