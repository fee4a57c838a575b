import DatabaseRegions

/// An observation of a value fetched from the database: it delivers the
/// current value when it starts, then a fresh value after each committed
/// transaction that could have changed it.
///
/// ```swift
/// let observation = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM player"))
/// let cancellable = observation.start(in: dbQueue) { error in
///     print("observation failed: \(error)")
/// } onChange: { count in
///     print("\(count) players")
/// }
/// ```
///
/// Guarantees:
/// - Values arrive in the order of the transactions, and a value never shows
///   a state older than one already delivered.
/// - Only committed changes notify; rolled-back transactions and savepoints
///   never do.
/// - No commit that modifies the observed region is missed: values may
///   coalesce when writes come in bursts, and when writes stop, the last
///   value is the state of the database.
/// - Each value comes from one committed state (one read transaction).
/// - On a `DatabasePool`, a commit only waits until a reader has opened the
///   committed state; the fetch runs concurrently with later writes.
/// - Dropping or altering a table of the region is a change too: the
///   observation fetches again, and a fetch that fails (no such table) ends
///   it with that error.
///
/// <doc:ObservationGuarantees> lists every guarantee, with what it means for
/// an app and the test that checks it.
public struct ValueObservation<Value: Sendable>: Sendable {
    let tracking: ObservationTracking
    /// Fetches on a database connection. Stateless.
    let fetch: @Sendable (Database) throws -> any Sendable
    /// Makes the stateful reducer of one run of the observation: it turns
    /// each fetched value into the value to deliver, or nil to deliver nothing.
    /// It runs on the observation's serial queue, off the database.
    let makeReducer: @Sendable () -> (any Sendable) throws -> Value?
    /// For an observation with `.regions` tracking whose value can be
    /// refetched from the previous one and the rows that changed. It
    /// returns what `fetch` would return.
    package let incrementalFetch: IncrementalFetch?
    /// Whether the first value may be reduced inside the writer's access
    /// that fetched it (see `ValueObserver.start()`): the reducer runs no
    /// code of the user's that may access the database (the diff
    /// observations' scanners, which decode records). False once an
    /// operator adds a closure of the user's (`map`, `removeDuplicates`).
    let reducesFirstValueOnWriter: Bool
    /// The least time between the starts of two fetches (`throttle(_:)`);
    /// nil: a fetch starts as soon as a commit makes one due.
    var fetchInterval: Duration?
    /// The closures of `handleEvents` that do not depend on the value
    /// (`didReceiveValue` is in the reducer).
    var events = ObservationEvents()
    /// Whether a fetched value that waits for the reduction queue is
    /// replaced by a newer one (see `coalescingWhileReducing()`); false:
    /// every fetched value is reduced.
    var coalescesWhileReducing = false
    /// Whether the fetch returns what the one tracked request selects, and
    /// nothing else: then a row change that the request's `WHERE` clause
    /// matches neither before nor after cannot change the value (see
    /// `RowFilter`). False for a fetch of the user's.
    var fetchesTrackedRequest = false

    /// This observation, marked as fetching what its tracked request selects.
    func fetchingTrackedRequest() -> Self {
        var observation = self
        observation.fetchesTrackedRequest = true
        return observation
    }

    init(
        tracking: ObservationTracking,
        fetch: @escaping @Sendable (Database) throws -> any Sendable,
        incrementalFetch: IncrementalFetch? = nil,
        reducesFirstValueOnWriter: Bool = false,
        makeReducer: @escaping @Sendable () -> (any Sendable) throws -> Value?
    ) {
        self.tracking = tracking
        self.fetch = fetch
        self.incrementalFetch = incrementalFetch
        self.reducesFirstValueOnWriter = reducesFirstValueOnWriter
        self.makeReducer = makeReducer
    }

    private static func identity(_ fetched: any Sendable) -> Value? {
        // The fetch of such an observation returns a `Value`: an internal invariant.
        fetched as? Value
    }

    // MARK: - Factories

    /// Observes the value returned by `fetch`. The region is recorded from
    /// the statements each fetch runs, so a fetch may read different tables
    /// each time.
    ///
    /// ```swift
    /// let observation = ValueObservation.tracking { db in
    ///     try Player.all().fetchAll(db)
    /// }
    /// ```
    public static func tracking(_ fetch: @escaping @Sendable (Database) throws -> Value) -> Self {
        ValueObservation(
            tracking: .recorded, fetch: { try fetch($0) }, makeReducer: { Self.identity })
    }

    /// Observes the value returned by `fetch`, whose region is recorded from
    /// its first fetch and never changes: cheaper when the fetch always reads
    /// the same tables and columns.
    public static func trackingConstantRegion(_ fetch: @escaping @Sendable (Database) throws -> Value) -> Self {
        ValueObservation(
            tracking: .constantRegion, fetch: { try fetch($0) }, makeReducer: { Self.identity })
    }

    /// Observes the value returned by `fetch` after each commit that modifies
    /// one of `regions`. The fetch may read other tables too; all its reads
    /// happen in one transaction, so the value is consistent.
    public static func tracking(
        regions: [any DatabaseRegionConvertible],
        fetch: @escaping @Sendable (Database) throws -> Value
    ) -> Self {
        ValueObservation(
            tracking: .regions(regions), fetch: { try fetch($0) }, makeReducer: { Self.identity })
    }

    // MARK: - Operators

    /// This observation with another reducer, which runs code of the
    /// user's: its first value is not reduced on the writer. Every other
    /// option (region, fetches, throttle, events) is kept.
    func replacingReducer<T>(
        _ makeReducer: @escaping @Sendable () -> (any Sendable) throws -> T?
    ) -> ValueObservation<T> {
        var observation = ValueObservation<T>(
            tracking: tracking, fetch: fetch, incrementalFetch: incrementalFetch, makeReducer: makeReducer)
        observation.fetchInterval = fetchInterval
        observation.events = events
        observation.coalescesWhileReducing = coalescesWhileReducing
        observation.fetchesTrackedRequest = fetchesTrackedRequest
        return observation
    }

    /// This observation, whose fetched values coalesce while its reductions
    /// lag: a fetched value that still waits for the reduction queue (and,
    /// with `.observationQueue`, for its delivery) is replaced by the next
    /// one, so that the reducer goes from the value it reduced last to the
    /// newest. For reducers slower than commits that accept any committed
    /// state (the difference of whole results): memory holds the value
    /// reduced, one waiting and one fetched, instead of one per commit, and
    /// the newest state is reduced as soon as the reducer is free.
    func coalescingWhileReducing() -> Self {
        var observation = self
        observation.coalescesWhileReducing = true
        return observation
    }

    /// Transforms each value. The transform runs on the observation's serial
    /// queue, off the database.
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> T) -> ValueObservation<T> {
        let makeReducer = self.makeReducer
        return replacingReducer {
            let reduce = makeReducer()
            return { fetched in try reduce(fetched).map(transform) }
        }
    }

    /// Skips a value when `isDuplicate(previous, new)` says it is the same as
    /// the previous delivered value.
    public func removeDuplicates(by isDuplicate: @escaping @Sendable (Value, Value) -> Bool) -> Self {
        let makeReducer = self.makeReducer
        return replacingReducer {
            let reduce = makeReducer()
            var previous: Value?
            return { fetched in
                guard let value = try reduce(fetched) else { return nil }
                if let previous, isDuplicate(previous, value) { return nil }
                previous = value
                return value
            }
        }
    }

    /// Fetches, and so delivers, at most once per `interval`: the first
    /// value at once, then, while commits keep coming, one fetch of the
    /// latest state per interval (the commits of an interval coalesce into
    /// it). The latest committed state is always delivered: the fetch after
    /// a commit starts at most `interval` after it. For bulk imports, whose
    /// thousands of commits would otherwise cost as many fetches and values.
    ///
    /// ```swift
    /// let observation = ValueObservation.trackingCount(Player.all()).throttle(.milliseconds(100))
    /// ```
    ///
    /// Unlike a throttle of deliveries (Combine's `throttle`), the fetches
    /// themselves are spaced: a burst costs the database at most one read
    /// per interval. A later call replaces the interval.
    ///
    /// - Precondition: `interval` is positive.
    public func throttle(_ interval: Duration) -> Self {
        precondition(interval > .zero, "a throttle interval is positive")
        var observation = self
        observation.fetchInterval = interval
        return observation
    }
}

extension ValueObservation where Value: Equatable {
    /// Skips a value equal to the previous delivered value.
    public func removeDuplicates() -> Self {
        removeDuplicates(by: ==)
    }
}

// MARK: - Requests

/// What a request observation fetches when it removes duplicates: raw rows,
/// compared before they are decoded.
private struct FetchedRows: Sendable {
    var rows: [Row]
}

extension ValueObservation {
    /// Observes the rows of a request, decoded by `decode`, comparing raw rows
    /// first when `removeDuplicates` is true.
    ///
    /// The factories that call it are inlinable, so that `fetch` and
    /// `decode` are specialized for the request's element in the caller's
    /// module: the refetch of a record observation decodes rows without
    /// run-time lookups of generic metadata.
    @usableFromInline
    static func trackingRows<Request: FetchRequest>(
        _ request: Request,
        removeDuplicates: Bool,
        single: Bool,
        fetch: @escaping @Sendable (Request, Database) throws -> Value,
        decode: @escaping @Sendable ([Row]) throws -> Value
    ) -> Self {
        if !single, let limited = request as? QueryInterfaceRequest<Request.Element>, let topRows = TopRowsFetch(limited) {
            return trackingTopRows(topRows, of: limited, removeDuplicates: removeDuplicates, decode: decode)
        }
        guard removeDuplicates else {
            return ValueObservation(
                tracking: .regions([request]), fetch: { try fetch(request, $0) }, makeReducer: { Self.identity }
            ).fetchingTrackedRequest()
        }
        return ValueObservation(
            tracking: .regions([request]),
            fetch: { db in
                let (sql, arguments) = try request.makeSQL(db)
                let rows = SQLRequest<Row>(sql: sql, arguments: arguments)
                if single { return FetchedRows(rows: try rows.fetchOne(db).map { [$0] } ?? []) }
                return FetchedRows(rows: try rows.fetchAll(db))
            },
            makeReducer: {
                var previous: [Row]?
                return { fetched in
                    guard let rows = (fetched as? FetchedRows)?.rows else { return nil }
                    if rows == previous { return nil }
                    previous = rows
                    return try decode(rows)
                }
            }
        ).fetchingTrackedRequest()
    }

    /// Observes the rows of a limited request through `topRows`, which
    /// keeps them after a commit from the rows it holds and the changed
    /// rows (see `TopRowsFetch`), decoded by `decode`.
    static func trackingTopRows<Element>(
        _ topRows: TopRowsFetch<Element>,
        of request: QueryInterfaceRequest<Element>,
        removeDuplicates: Bool,
        decode: @escaping @Sendable ([Row]) throws -> Value
    ) -> Self {
        ValueObservation(
            tracking: .regions([request]),
            fetch: { db in
                if let rows = try topRows.fetch(db) { return rows }
                // The table or the statement do not qualify: the request itself.
                return FetchedRows(rows: try request.asRequest(of: Row.self).fetchAll(db))
            },
            incrementalFetch: topRows.incrementalFetch(),
            makeReducer: {
                var previous: [Row]?
                return { fetched in
                    let rows: [Row]
                    if let top = fetched as? TopRows {
                        rows = top.limitedRows
                    } else if let fetchedRows = fetched as? FetchedRows {
                        rows = fetchedRows.rows
                    } else {
                        // The fetch returns one of the two: an internal invariant.
                        return nil
                    }
                    if removeDuplicates {
                        if rows == previous { return nil }
                        previous = rows
                    }
                    return try decode(rows)
                }
            }
        ).fetchingTrackedRequest()
    }

    /// Observes every record of a request, as an array.
    ///
    /// A `QueryInterfaceRequest` with a limit and no offset (a leaderboard:
    /// `Player.all().order(sql: "score DESC").limit(10)`) orders the rows
    /// that tie by ascending rowid (as SQLite does when no index serves the
    /// ordering), and may keep its rows after a commit from the rows it holds and the rows
    /// the commit changed, instead of running the request again: each value
    /// is what a fresh fetch of the request with that ordering returns.
    /// <doc:DifferencesObservations> says when, today.
    ///
    /// - Parameters:
    ///   - request: The observed request.
    ///   - removeDuplicates: When true, a value is delivered only when the raw
    ///     rows differ from the previous ones (records need not be `Equatable`).
    @inlinable
    public static func trackingAll<Request: FetchRequest>(
        _ request: Request, removeDuplicates: Bool = false
    ) -> Self where Request.Element: FetchableRecord & Sendable, Value == [Request.Element] {
        trackingRows(request, removeDuplicates: removeDuplicates, single: false, fetch: { try $0.fetchAll($1) }) { rows in
            try rows.map { try Request.Element(row: $0) }
        }
    }

    /// Observes every row of a request. A limited request orders ties by
    /// rowid, as the observation of records says.
    @inlinable
    public static func trackingAll<Request: FetchRequest>(
        _ request: Request, removeDuplicates: Bool = false
    ) -> Self where Request.Element == Row, Value == [Row] {
        trackingRows(request, removeDuplicates: removeDuplicates, single: false, fetch: { try $0.fetchAll($1) }) { $0 }
    }

    /// Observes the first column of every row of a request. A limited
    /// request orders ties by rowid, as for records.
    @inlinable
    public static func trackingAll<Request: FetchRequest>(
        _ request: Request, removeDuplicates: Bool = false
    ) -> Self where Request.Element: DatabaseValueConvertible & Sendable, Value == [Request.Element] {
        trackingRows(request, removeDuplicates: removeDuplicates, single: false, fetch: { try $0.fetchAll($1) }) { rows in
            try rows.map { try $0[0] as Request.Element }
        }
    }

    /// Observes the first record of a request: nil when there is none.
    ///
    /// - Parameters:
    ///   - request: The observed request.
    ///   - removeDuplicates: When true, a value is delivered only when the raw
    ///     row differs from the previous one.
    @inlinable
    public static func trackingOne<Request: FetchRequest>(
        _ request: Request, removeDuplicates: Bool = false
    ) -> Self where Request.Element: FetchableRecord & Sendable, Value == Request.Element? {
        trackingRows(request, removeDuplicates: removeDuplicates, single: true, fetch: { try $0.fetchOne($1) }) { rows in
            try rows.first.map { try Request.Element(row: $0) }
        }
    }

    /// Observes the first row of a request: nil when there is none.
    @inlinable
    public static func trackingOne<Request: FetchRequest>(
        _ request: Request, removeDuplicates: Bool = false
    ) -> Self where Request.Element == Row, Value == Row? {
        trackingRows(request, removeDuplicates: removeDuplicates, single: true, fetch: { try $0.fetchOne($1) }) { $0.first }
    }

    /// Observes the first column of the first row of a request: nil when
    /// there is no row, or when its value is NULL and the element is not
    /// optional, as `fetchOne` gives (`SELECT MAX(score) FROM player` of an
    /// empty table).
    @inlinable
    public static func trackingOne<Request: FetchRequest>(
        _ request: Request, removeDuplicates: Bool = false
    ) -> Self where Request.Element: DatabaseValueConvertible & Sendable, Value == Request.Element? {
        trackingRows(request, removeDuplicates: removeDuplicates, single: true, fetch: { try $0.fetchOne($1) }) { rows in
            try rows.first.flatMap { row in
                let value = try row[0] as DatabaseValue
                if value.isNull, Request.Element.fromDatabaseValue(value) == nil { return nil }
                return try row[0] as Request.Element
            }
        }
    }

    /// Observes the number of rows of a request.
    public static func trackingCount<Request: FetchRequest>(_ request: Request) -> Self where Value == Int {
        ValueObservation(
            tracking: .regions([request]), fetch: { try request.fetchCount($0) }, makeReducer: { Self.identity }
        ).fetchingTrackedRequest()
    }
}
