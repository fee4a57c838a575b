#if Server
import ReactiveSQLite

/// Live queries for remote clients: named queries whose rows, then
/// differences, are pushed to every subscriber over Server-Sent Events
/// (`GET /live/{name}`) or a WebSocket (`GET /live`, with subscribe and
/// unsubscribe messages).
///
/// ```swift
/// let dbPool = try DatabasePool(path: "app.sqlite")
/// let liveQueries = try LiveQueryServer(reader: dbPool, queries: [
///     LiveQuery(name: "leaderboard", sql: "SELECT * FROM player ORDER BY score DESC LIMIT 10", isOrdered: true),
/// ])
/// let router = Router(context: BasicWebSocketRequestContext.self)
/// liveQueries.addRoutes(to: router)
/// let app = Application(router: router, server: .http1WebSocketUpgrade(webSocketRouter: router))
/// try await app.runService()
/// ```
///
/// Guarantees:
/// - **No SQL from clients.** Clients name a registered query and give
///   values for its declared parameters, checked before they are bound.
/// - **One observation per distinct query and arguments**, shared by all
///   its subscribers; it stops `idleLifetime` after its last subscriber left,
///   or sooner when more than `maxIdleObservations` have none (the one idle
///   the longest first): clients that subscribe with ever new arguments
///   cannot make the server keep an observation for each.
/// - **Exact differences.** A subscriber is sent its first rows (`rows`),
///   then differences (`diff`), each from the rows it last received: a
///   client that applies them holds the query's latest result. The data of
///   each event is one of `sqlite-watch --format json`'s objects.
/// - **Nobody waits for anybody.** Each subscriber is written to by its own
///   task (the subscriptions of one WebSocket take turns, a whole message
///   each); a slow one is sent merged differences, and holds at most one
///   message in memory.
/// - **Resumption.** Events have ids; a client that reconnects with the id
///   of the latest revision (`Last-Event-ID`, or `lastEventID` in a
///   subscribe message) is sent nothing until the next change, any other
///   client its rows.
/// - **Limits** (`LiveQueryServerOptions`) end what exceeds them, with a
///   reason the client receives.
public final class LiveQueryServer: Sendable {
    /// The limits and timings the server was created with.
    public let options: LiveQueryServerOptions
    let reader: any DatabaseReader
    let queries: [String: LiveQuery]
    private let state = LockedState(State())

    private struct State {
        var shared: [SharedLiveQuery.Key: SharedLiveQuery] = [:]
        /// The observations without subscribers, each with its one timer.
        var idle: [SharedLiveQuery.Key: IdleObservation] = [:]
        var subscriberCount = 0
        var notice: String?
        var failureHandler: (@Sendable (LiveQueryFailure) -> Void)?
    }

    /// A server for `queries`, read through `reader`.
    ///
    /// Each query is compiled once here: it must be one read-only statement
    /// that returns rows, whose named parameters are exactly its declared
    /// parameters, without positional parameters; names must be unique and
    /// made of letters, digits, `-` and `_`.
    ///
    /// - Throws: `LiveQueryServerError` naming the query at fault, or the
    ///   `DatabaseError` of a database that cannot be read.
    public init(reader: some DatabaseReader, queries: [LiveQuery], options: LiveQueryServerOptions = .init()) throws {
        var byName: [String: LiveQuery] = [:]
        for query in queries {
            guard LiveQuery.isValidName(query.name) else {
                throw LiveQueryServerError(
                    queryName: query.name, message: "a name is 1 to 128 letters, digits, '-' or '_'")
            }
            guard byName[query.name] == nil else {
                throw LiveQueryServerError(queryName: query.name, message: "two live queries have this name")
            }
            try reader.read { db in try Self.check(query, in: db) }
            byName[query.name] = query
        }
        self.reader = reader
        self.queries = byName
        self.options = options
    }

    private static func check(_ query: LiveQuery, in db: Database) throws {
        let statement: Statement
        do {
            statement = try db.makeStatement(sql: query.sql)
        } catch let error as DatabaseError where !error.isLockContention {
            throw LiveQueryServerError(queryName: query.name, message: "invalid SQL: \(error)")
        }
        guard statement.isReadOnly, statement.columnCount > 0 else {
            throw LiveQueryServerError(queryName: query.name, message: "not a read that returns rows: \(query.sql)")
        }
        guard statement.positionalParameterCount == 0 else {
            throw LiveQueryServerError(
                queryName: query.name, message: "positional parameters (?) cannot be given by clients: name them (:name)")
        }
        let declared = Set(query.parameters.map(\.name))
        guard declared.count == query.parameters.count else {
            throw LiveQueryServerError(queryName: query.name, message: "a parameter is declared twice")
        }
        let used = Set(statement.namedParameters)
        if let missing = used.subtracting(declared).sorted().first {
            throw LiveQueryServerError(queryName: query.name, message: "the parameter :\(missing) is not declared")
        }
        if let unused = declared.subtracting(used).sorted().first {
            throw LiveQueryServerError(queryName: query.name, message: "the declared parameter '\(unused)' is not in the SQL")
        }
        for key in query.keyColumns where RowIdentity.columns([key]).columnIndexes(in: statement.columnNames) == nil {
            throw LiveQueryServerError(
                queryName: query.name,
                message: "the key column '\(key)' is not a result column (\(statement.columnNames.joined(separator: ", ")))")
        }
    }

    /// Called once for each observation that ends with a failure (see
    /// `LiveQueryFailure`), on an unspecified thread, after its
    /// subscribers were told why. The server goes on: a later subscription
    /// runs the query anew. Nil by default.
    ///
    /// ```swift
    /// liveQueries.failureHandler = { failure in logger.error("\(failure)") }
    /// ```
    public var failureHandler: (@Sendable (LiveQueryFailure) -> Void)? {
        get { state.withLock { $0.failureHandler } }
        set { state.withLock { $0.failureHandler = newValue } }
    }

    /// What every subscriber is told about the data, or nil: an
    /// application sets it when the data is delayed (another process holds
    /// a lock on the database, say). Subscribers get a `notice` event
    /// (`{"notice":"…"}`, then `{"notice":null}` when it is cleared), new
    /// ones after their first rows.
    public var notice: String? {
        get { state.withLock { $0.notice } }
        set {
            let all = state.withLock { state -> [SharedLiveQuery] in
                state.notice = newValue
                return Array(state.shared.values)
            }
            for shared in all {
                for subscriber in shared.subscribers { subscriber.wake() }
            }
        }
    }

    /// The names of the registered queries, sorted.
    public var queryNames: [String] { queries.keys.sorted() }

    /// The number of subscriptions open now, over every transport.
    public var subscriberCount: Int { state.withLock { $0.subscriberCount } }

    /// The number of observations running now: one per distinct query and
    /// arguments with subscribers (or whose last subscriber left less than
    /// `idleLifetime` ago).
    public var observationCount: Int { state.withLock { $0.shared.count } }

    // MARK: - Subscribing

    /// Opens a subscription, counted against `maxSubscribers`.
    func subscribe(
        query name: String, arguments given: [String: ClientValue], lastEventID: String?
    ) throws(LiveRequestError) -> LiveSubscription {
        guard let query = queries[name] else {
            throw LiveRequestError(
                kind: .notFound,
                message: "no live query named '\(name.prefix(128))' (queries: \(queryNames.joined(separator: ", ")))")
        }
        let arguments = try query.resolveArguments(given)
        let key = SharedLiveQuery.Key(name: name, arguments: arguments)
        let limit = options.maxSubscribers
        let maxQueuedBytes = options.maxQueuedBytes
        let maxRows = options.maxRows
        let result: Result<(LiveSubscription, isNew: Bool), LiveRequestError> = state.withLock { state in
            guard state.subscriberCount < limit else {
                return .failure(LiveRequestError(
                    kind: .unavailable,
                    message: "the server has \(limit) subscribers already, its limit (maxSubscribers): try again later"))
            }
            state.subscriberCount += 1
            let existing = state.shared[key]
            // An idle observation has a subscriber again: it stays.
            state.idle.removeValue(forKey: key)?.timer.cancel()
            let shared = existing ?? SharedLiveQuery(key: key, query: query, maxRows: maxRows)
            state.shared[key] = shared
            // Added under the server's lock: an idle observation cannot be
            // stopped between its lookup and its new subscriber (see `stopIfIdle`).
            let subscription = LiveSubscription(
                shared: shared, maxQueuedBytes: maxQueuedBytes, notice: { [weak self] in self?.notice })
            subscription.resume(from: shared.add(subscription, lastEventID: lastEventID))
            return .success((subscription, existing == nil))
        }
        let (subscription, isNew) = try result.get()
        let shared = subscription.shared
        if isNew {
            shared.start(reader: reader) { [weak self] failed, failure in
                guard let self else { return }
                forget(failed)
                state.withLock { $0.failureHandler }?(failure)
            }
        }
        subscription.wake()
        return subscription
    }

    /// Closes a subscription (idempotent per subscription: call it once).
    func unsubscribe(_ subscription: LiveSubscription) {
        subscription.finish()
        let shared = subscription.shared
        state.withLock { $0.subscriberCount -= 1 }
        guard let generation = shared.remove(subscription) else { return }
        let lifetime = options.idleLifetime
        if lifetime <= .zero {
            stopIfIdle(shared, since: generation)
            return
        }
        let maxIdle = max(0, options.maxIdleObservations)
        let evicted = state.withLock { state -> [SharedLiveQuery] in
            guard state.shared[shared.key] === shared, shared.isIdle(since: generation) else { return [] }
            // One timer per idle observation (a later unsubscribe replaces it).
            state.idle[shared.key]?.timer.cancel()
            let timer = Task { [weak self] in
                try? await Task.sleep(for: lifetime)
                guard !Task.isCancelled else { return }
                self?.stopIfIdle(shared, since: generation)
            }
            state.idle[shared.key] = IdleObservation(since: .now, generation: generation, timer: timer)
            var evicted: [SharedLiveQuery] = []
            while state.idle.count > maxIdle, let oldest = state.idle.min(by: { $0.value.since < $1.value.since }) {
                state.idle[oldest.key] = nil
                oldest.value.timer.cancel()
                if let stopped = state.shared[oldest.key], stopped.isIdle(since: oldest.value.generation) {
                    state.shared[oldest.key] = nil
                    evicted.append(stopped)
                }
            }
            return evicted
        }
        for stopped in evicted { stopped.stop() }
    }

    private func stopIfIdle(_ shared: SharedLiveQuery, since generation: Int) {
        let isStopped = state.withLock { state in
            guard state.shared[shared.key] === shared, shared.isIdle(since: generation) else { return false }
            state.shared[shared.key] = nil
            state.idle[shared.key] = nil
            return true
        }
        if isStopped { shared.stop() }
    }

    /// A failed observation: the next subscription starts a new one.
    private func forget(_ shared: SharedLiveQuery) {
        state.withLock { state in
            if state.shared[shared.key] === shared {
                state.shared[shared.key] = nil
                state.idle.removeValue(forKey: shared.key)?.timer.cancel()
            }
        }
    }

    /// Stops every observation and ends every subscription with `reason`.
    public func shutDown(reason: String = "the server is shutting down") {
        let all = state.withLock { state in
            defer {
                state.shared = [:]
                for idle in state.idle.values { idle.timer.cancel() }
                state.idle = [:]
            }
            return Array(state.shared.values)
        }
        for shared in all {
            shared.stop()
            shared.endSubscribers(reason: reason)
        }
    }
}

/// An observation without subscribers, kept for `idleLifetime`.
private struct IdleObservation {
    /// When its last subscriber left.
    var since: ContinuousClock.Instant
    /// Its generation then (see `SharedLiveQuery.isIdle(since:)`).
    var generation: Int
    /// Stops it at the end of its idle lifetime; cancelled when it has a
    /// subscriber again.
    var timer: Task<Void, Never>
}

extension SharedLiveQuery {
    /// Ends every subscriber with `reason`.
    func endSubscribers(reason: String) {
        for subscriber in subscribers { subscriber.end(reason: reason) }
    }
}
#endif
