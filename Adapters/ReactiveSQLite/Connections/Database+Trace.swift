#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

extension Database {
    /// What `trace(options:_:)` reports.
    public struct TracingOptions: OptionSet, Sendable {
        /// The raw bits of the options.
        public let rawValue: Int

        /// Creates options from their raw bits.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Each statement as it starts, with its SQL as written: parameters
        /// appear as `?`, `?1`, `:name` (`TraceEvent.expandedSQL` is nil).
        /// SQLite's `SQLITE_TRACE_STMT`.
        public static let statements = TracingOptions(rawValue: 1 << 0)

        /// Each statement as it starts, with its SQL and also its SQL with
        /// the bound values in place of the parameters
        /// (`TraceEvent.expandedSQL`, from `sqlite3_expanded_sql`). Building
        /// that text costs a copy of every bound value: use it to debug.
        ///
        /// The expanded SQL shows the values bound to statements: do not
        /// log it where those values must not appear (personal data, keys).
        public static let expandedStatements = TracingOptions(rawValue: 1 << 1)
    }

    /// A statement that starts running, reported by `trace(options:_:)`.
    public struct TraceEvent: Sendable, CustomStringConvertible {
        /// The SQL of the statement, as SQLite compiled it, without the
        /// blanks around it (parameters as written:
        /// `INSERT INTO "player" ("id", "name") VALUES (?1, ?2)`).
        public let sql: String

        /// The SQL with the bound values in place of the parameters
        /// (`INSERT INTO "player" ("id", "name") VALUES (1, 'Arthur')`),
        /// when the trace was installed with `.expandedStatements`; nil
        /// otherwise, or when SQLite could not build it (out of memory, or
        /// longer than SQLite's string limit).
        public let expandedSQL: String?

        /// The expanded SQL when there is one, the SQL otherwise.
        public var description: String { expandedSQL ?? sql }
    }

    /// Calls `trace` with every statement the connection starts, until
    /// another call replaces it, or a call with nil stops it.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     db.trace { print($0) }
    ///     try player.insert(db)   // prints INSERT INTO "player" ("id", "name", "score") VALUES (?1, ?2, ?3)
    ///     db.trace(nil)
    /// }
    /// ```
    ///
    /// One event per run of a statement, when it starts (its first step):
    /// the statements of your code and of the library (the `BEGIN` and
    /// `COMMIT` of a `write`, the `PRAGMA` that reads a table's schema the
    /// first time a record writes it, the fetches of observations that run
    /// on this connection). The statements that triggers run are part of
    /// the statement that fires them, and are not reported on their own.
    ///
    /// The trace belongs to this connection only, and stays installed from
    /// one access to the next: installed from `write` or
    /// `writeWithoutTransaction`, it traces a `DatabaseQueue`'s connection,
    /// or a `DatabasePool`'s writer (whose readers run the pool's reads and
    /// are not traced). `trace` runs on the connection's thread,
    /// synchronously, inside SQLite: it must not use the connection.
    /// It does not change the connection's other hooks (change tracking,
    /// authorizer): observations keep working.
    ///
    /// - Parameters:
    ///   - options: `.statements` (the default) or `.expandedStatements`.
    ///   - trace: Called with each statement, or nil to stop tracing.
    /// - Complexity: A trace costs one call of `trace` per statement run,
    ///   plus a copy of the SQL text (and, with `.expandedStatements`, of the
    ///   bound values).
    public func trace(options: TracingOptions = .statements, _ trace: ((TraceEvent) -> Void)?) {
        checkAccess()
        guard let trace, !options.isEmpty else {
            tracer = nil
            uninstallTraceHook()
            return
        }
        tracer = (options, trace)
        installTraceHook()
    }

    /// Installs SQLite's trace callback, with this connection as its
    /// unretained context: the connection uninstalls it when it closes,
    /// before it is deallocated. The one place that calls `sqlite3_trace_v2`.
    private func installTraceHook() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_trace_v2(
            connection, UInt32(SQLITE_TRACE_STMT),
            { _, context, statement, text in
                guard let context, let statement, let text else { return 0 }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.traceStatement(OpaquePointer(statement), text: text.assumingMemoryBound(to: CChar.self))
                return 0
            }, context)
    }

    /// Removes SQLite's trace callback.
    func uninstallTraceHook() {
        sqlite3_trace_v2(connection, 0, nil, nil)
    }

    /// Reports one `SQLITE_TRACE_STMT` event.
    ///
    /// > The X argument is a pointer to a string which is the unexpanded SQL
    /// > text of the prepared statement or an SQL comment that indicates the
    /// > invocation of a trigger. https://www.sqlite.org/c3ref/c_trace.html
    ///
    /// A trigger's comment is another text than the statement's own.
    private func traceStatement(_ statement: OpaquePointer, text: UnsafePointer<CChar>) {
        guard let tracer else { return }
        if let ownSQL = sqlite3_sql(statement), strcmp(ownSQL, text) != 0 { return }
        var expandedSQL: String?
        if tracer.options.contains(.expandedStatements), let expanded = sqlite3_expanded_sql(statement) {
            // > The string returned by sqlite3_expanded_sql(P) [...] must be
            // > free by the application by passing it to sqlite3_free().
            // > https://www.sqlite.org/c3ref/expanded_sql.html
            expandedSQL = String(cString: expanded)
            sqlite3_free(expanded)
        }
        tracer.trace(TraceEvent(sql: Self.trimmedSQL(text), expandedSQL: expandedSQL))
    }

    /// The SQL without the blanks around it (those between the statements
    /// of one `execute(sql:)`), as `Statement.sql`.
    private static func trimmedSQL(_ text: UnsafePointer<CChar>) -> String {
        func isBlank(_ byte: CChar) -> Bool {
            byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
        }
        var start = text
        while isBlank(start.pointee) { start += 1 }
        var end = start + strlen(start)
        while end > start && isBlank(end[-1]) { end -= 1 }
        let bytes = UnsafeRawBufferPointer(start: start, count: end - start)
        return String(decoding: bytes, as: UTF8.self)
    }
}
