#if Server
import Dispatch
import Foundation
import ReactiveSQLite

/// The one observation of a live query with given arguments, shared by all
/// its subscribers.
///
/// Its observation delivers on a serial queue of its own, where each new
/// result becomes a `LiveRevision` (with the difference from the previous
/// one, rendered once); then each subscriber is woken, and computes what it
/// sends from the rows it last sent. Nobody waits for a subscriber.
final class SharedLiveQuery: Sendable {
    struct Key: Hashable, Sendable {
        var name: String
        var arguments: [String: DatabaseValue]
    }

    let key: Key
    let query: LiveQuery
    /// Distinguishes this observation's event ids from those of an earlier
    /// or later observation of the same query.
    let epoch: String
    private let maxRows: Int
    /// Where results are diffed and rendered, one at a time.
    private let queue: DispatchQueue
    /// Where the observation hands its results: each one replaces the one
    /// waiting for `queue`, if any (see `offer(_:)`).
    private let intake: DispatchQueue
    private let state = LockedState(State())
    /// The differ of consecutive revisions: only used on `queue`.
    private let differ = QueueConfined<RowDiffer?>(nil)
    /// The merged differences to the latest revision, by the revision they
    /// start from: computed once for all the subscribers behind from the
    /// same revision (see `mergedEvent(from:to:_:)`).
    private let merged = LockedState(MergedEvents())

    private struct MergedEvents {
        /// The revision the events lead to.
        var number = 0
        /// The event from each older revision (nil: the same rows).
        var events: [Int: LiveEvent?] = [:]
    }

    private struct State {
        var latest: LiveRevision?
        var identity: RowIdentity?
        var failure: String?
        var subscribers: [ObjectIdentifier: LiveSubscription] = [:]
        var cancellable: AnyDatabaseCancellable?
        var isStopped = false
        /// The latest result not diffed yet: results that arrive while one
        /// is diffed replace each other here, so that one refresh covers
        /// them all and memory holds at most one waiting result.
        var waitingRows: [Row]?
        /// Whether a block of `queue` will take `waitingRows`.
        var isDiffScheduled = false
        /// Incremented when the last subscriber leaves or one arrives, so
        /// that a scheduled idle stop knows whether it is still due.
        var idleGeneration = 0
    }

    init(key: Key, query: LiveQuery, maxRows: Int) {
        self.key = key
        self.query = query
        self.maxRows = maxRows
        self.epoch = String(UInt64.random(in: 0...UInt64.max) >> 16, radix: 36)
        self.queue = DispatchQueue(label: "ReactiveSQLiteServer.\(key.name)")
        self.intake = DispatchQueue(label: "ReactiveSQLiteServer.\(key.name).intake")
    }

    // MARK: - Observing

    /// Finds how rows are identified, then starts the observation.
    /// `onFailure` is called once if the query fails (its subscribers are
    /// told why, and the server forgets this observation).
    func start(reader: any DatabaseReader, onFailure: @escaping @Sendable (SharedLiveQuery, LiveQueryFailure) -> Void) {
        let sql = query.sql
        let keys = query.keyColumns
        let arguments = StatementArguments(key.arguments.mapValues { $0 as (any DatabaseValueConvertible)? })
        Task { [self] in
            do {
                let inspection = try await reader.read { db in
                    let columnNames = try db.makeStatement(sql: sql).columnNames
                    let identity = keys.isEmpty ? try RowIdentity.inferred(fromSQL: sql, in: db) : .columns(keys)
                    return (identity, columnNames)
                }
                state.withLock { $0.identity = inspection.0 }
                let cancellable = ValueObservation.trackingAll(SQLRequest<Row>(sql: sql, arguments: arguments)).start(
                    in: reader, scheduling: .async(onQueue: intake),
                    onError: { [weak self] error in
                        guard let self else { return }
                        self.fail(.error(error), String(describing: error), onFailure: onFailure)
                    },
                    onChange: { [weak self] rows in
                        guard let self else { return }
                        self.offer(rows) { rows in
                            self.receive(rows, identity: inspection.0, columnNames: inspection.1, onFailure: onFailure)
                        }
                    })
                let cancelled: AnyDatabaseCancellable? = state.withLock { state in
                    if state.isStopped { return cancellable }
                    state.cancellable = cancellable
                    return nil
                }
                cancelled?.cancel()
            } catch {
                fail(.error(error), String(describing: error), onFailure: onFailure)
            }
        }
    }

    /// On `intake`: a new result. It waits for `queue`, replacing the
    /// result that waited there: commits faster than diffing are coalesced
    /// (the issue: 643 revisions queued for 655 commits, 1.2 GB in 10 s,
    /// events 21 s after the writer stopped).
    private func offer(_ rows: [Row], to receive: @escaping @Sendable ([Row]) -> Void) {
        let schedules = state.withLock { state -> Bool in
            state.waitingRows = rows
            defer { state.isDiffScheduled = true }
            return !state.isDiffScheduled
        }
        guard schedules else { return }
        queue.async { [self] in
            while let rows = state.withLock({ state -> [Row]? in
                guard let rows = state.waitingRows else {
                    state.isDiffScheduled = false
                    return nil
                }
                state.waitingRows = nil
                return rows
            }) {
                receive(rows)
            }
        }
    }

    /// On `queue`: a new result.
    private func receive(
        _ rows: [Row], identity: RowIdentity, columnNames: [String],
        onFailure: @escaping @Sendable (SharedLiveQuery, LiveQueryFailure) -> Void
    ) {
        if state.withLock({ $0.failure != nil }) { return }
        if rows.count > maxRows {
            fail(
                .tooManyRows(count: rows.count, limit: maxRows),
                "the live query '\(query.name)' returned \(rows.count) rows, more than the server's limit of "
                    + "\(maxRows) rows", onFailure: onFailure)
            return
        }
        let number = (state.withLock { $0.latest?.number } ?? 0) + 1
        let revision: LiveRevision
        if var rowDiffer = differ.value {
            let difference: String?
            switch rowDiffer.diff(to: rows) {
            case .unchanged:
                differ.value = rowDiffer
                return
            case .columnsChanged:
                difference = nil
            case .changed(let changes):
                difference = JSONText.line(
                    RowJSON.difference(changes, columnNames: rowDiffer.columnNames, isOrdered: query.isOrdered))
            }
            differ.value = rowDiffer
            revision = LiveRevision(
                epoch: epoch, number: number, columnNames: rowDiffer.columnNames, rows: rows,
                diffFromPrevious: difference)
        } else {
            let rowDiffer = RowDiffer(
                identity: identity, isOrdered: query.isOrdered, columnNames: columnNames, rows: rows)
            differ.value = rowDiffer
            revision = LiveRevision(
                epoch: epoch, number: number, columnNames: rowDiffer.columnNames, rows: rows, diffFromPrevious: nil)
        }
        let subscribers = state.withLock { state in
            state.latest = revision
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.wake() }
    }

    private func fail(
        _ cause: LiveQueryFailure.Reason, _ reason: String,
        onFailure: @Sendable (SharedLiveQuery, LiveQueryFailure) -> Void
    ) {
        let (subscribers, isFirst) = state.withLock { state in
            let isFirst = state.failure == nil
            if isFirst { state.failure = reason }
            return (Array(state.subscribers.values), isFirst)
        }
        guard isFirst else { return }
        // Not here: this may run in the observation's own delivery, which
        // its cancellation would wait for.
        DispatchQueue.global().async { self.stop() }
        for subscriber in subscribers { subscriber.wake() }
        onFailure(self, LiveQueryFailure(
            queryName: key.name, arguments: key.arguments.mapValues { $0.description }, reason: cause, message: reason))
    }

    /// Stops the observation (idempotent).
    func stop() {
        let cancellable = state.withLock { state in
            state.isStopped = true
            defer { state.cancellable = nil }
            return state.cancellable
        }
        cancellable?.cancel()
    }

    /// The event that brings a subscriber from `old` to `new`, more than one
    /// revision apart, made by `make` once for every subscriber behind from
    /// `old`.
    ///
    /// Subscribers that fall behind under a burst of commits are woken
    /// together, and most are behind from the same revision: without this,
    /// each one diffed the whole result on its own (150 readers of 30 000
    /// rows: a full diff each per revision, the server seconds behind).
    /// Only the events to the latest revision are kept; the lock is held
    /// while `make` runs, so that subscribers behind from the same revision
    /// wait for the one that computes it.
    func mergedEvent(from old: LiveRevision, to new: LiveRevision, _ make: () -> LiveEvent?) -> LiveEvent? {
        merged.withLock { merged in
            if merged.number != new.number {
                if merged.number > new.number { return make() }
                merged = MergedEvents(number: new.number)
            }
            if let event = merged.events[old.number] { return event }
            let event = make()
            merged.events[old.number] = event
            return event
        }
    }

    // MARK: - Subscribers

    var latest: LiveRevision? { state.withLock { $0.latest } }
    var subscribers: [LiveSubscription] { state.withLock { Array($0.subscribers.values) } }
    var failure: String? { state.withLock { $0.failure } }
    var identity: RowIdentity? { state.withLock { $0.identity } }

    /// Adds a subscriber; returns the revision it already holds: the latest
    /// one when `lastEventID` is its id (a client that reconnected after
    /// the last change it received), nil otherwise.
    func add(_ subscriber: LiveSubscription, lastEventID: String?) -> LiveRevision? {
        state.withLock { state in
            state.subscribers[ObjectIdentifier(subscriber)] = subscriber
            state.idleGeneration += 1
            guard let lastEventID, let latest = state.latest, latest.id == lastEventID else { return nil }
            return latest
        }
    }

    /// Removes a subscriber; returns the idle generation to check later
    /// when it was the last one, nil otherwise.
    func remove(_ subscriber: LiveSubscription) -> Int? {
        state.withLock { state in
            state.subscribers[ObjectIdentifier(subscriber)] = nil
            guard state.subscribers.isEmpty else { return nil }
            state.idleGeneration += 1
            return state.idleGeneration
        }
    }

    /// Whether nobody subscribed since the last one left at `generation`.
    func isIdle(since generation: Int) -> Bool {
        state.withLock { $0.subscribers.isEmpty && $0.idleGeneration == generation }
    }
}

/// A value only touched on one serial dispatch queue.
///
/// `@unchecked Sendable`: every access to `value` happens on the owner's
/// serial queue (`SharedLiveQuery.queue`, its observation's delivery
/// queue), so accesses never overlap.
final class QueueConfined<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
#endif
