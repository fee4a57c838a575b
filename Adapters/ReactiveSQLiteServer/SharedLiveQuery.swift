#if Server
import Dispatch
import Foundation
import ReactiveSQLite

/// The one observation of a live query with given arguments, shared by all
/// its subscribers.
///
/// Its observation is the library's `trackingRowDifferences`, which stops
/// reading a result at row `maxRows + 1` (the observation then fails, and
/// its subscribers are told why): each new
/// result and its difference from the previous one become a `LiveRevision`
/// (the difference rendered once), on the observation's own queue; then each
/// subscriber is woken, and computes what it sends from the rows it last
/// sent. Nobody waits for a subscriber. Results fetched while one is
/// diffed and rendered replace each other until the queue is free: memory
/// holds at most three results beside the latest revision, whatever the
/// rate of commits.
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
    private let state = LockedState(State())
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
        /// Incremented when the last subscriber leaves or one arrives, so
        /// that a scheduled idle stop knows whether it is still due.
        var idleGeneration = 0
    }

    init(key: Key, query: LiveQuery, maxRows: Int) {
        self.key = key
        self.query = query
        self.maxRows = maxRows
        self.epoch = String(UInt64.random(in: 0...UInt64.max) >> 16, radix: 36)
    }

    // MARK: - Observing

    /// Starts the observation. `onFailure` is called once if the query
    /// fails (its subscribers are told why, and the server forgets this
    /// observation).
    func start(reader: any DatabaseReader, onFailure: @escaping @Sendable (SharedLiveQuery, LiveQueryFailure) -> Void) {
        let observation = ValueObservation.trackingRowDifferences(
            sql: query.sql,
            arguments: StatementArguments(key.arguments.mapValues { $0 as (any DatabaseValueConvertible)? }),
            identifiedBy: query.keyColumns.isEmpty ? nil : .columns(query.keyColumns),
            isOrdered: query.isOrdered,
            maxRows: maxRows)
        // `start` waits for the writer (it registers the observation and
        // fetches the first rows there): not on the caller's thread, which
        // serves requests.
        DispatchQueue.global().async { [self] in
            // Delivered on the observation's queue, where the next result
            // waits for this one to be handled.
            let cancellable = observation.start(
                in: reader, scheduling: .observationQueue,
                onError: { [weak self] error in
                    guard let self else { return }
                    if let error = error as? RowLimitExceeded {
                        // The fetch read one row more than the limit, and no further.
                        let count = error.limit + 1
                        self.fail(
                            .tooManyRows(count: count, limit: error.limit),
                            "the live query '\(query.name)' returned more than the server's limit of "
                                + "\(error.limit) rows (maxRows): the rest of the result was not read",
                            onFailure: onFailure)
                    } else {
                        self.fail(.error(error), String(describing: error), onFailure: onFailure)
                    }
                },
                onChange: { [weak self] value in
                    self?.receive(value)
                })
            let cancelled: AnyDatabaseCancellable? = state.withLock { state in
                if state.isStopped { return cancellable }
                state.cancellable = cancellable
                return nil
            }
            cancelled?.cancel()
        }
    }

    /// On the observation's queue: a new result.
    private func receive(_ value: RowsWithDifference) {
        if state.withLock({ $0.failure != nil }) { return }
        // The fetch fails beyond `maxRows`.
        assert(value.rows.count <= maxRows, "a result of \(value.rows.count) rows, over maxRows (\(maxRows))")
        let number = (state.withLock { $0.latest?.number } ?? 0) + 1
        let difference = value.difference.map { difference in
            JSONText.line(RowJSON.difference(difference, columnNames: value.columnNames, isOrdered: query.isOrdered))
        }
        let revision = LiveRevision(
            epoch: epoch, number: number, columnNames: value.columnNames, rows: value.rows,
            diffFromPrevious: difference)
        let subscribers = state.withLock { state in
            state.latest = revision
            state.identity = value.identity
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

#endif
