import Dispatch
import DatabaseRegions

/// One run of a `ValueObservation`: registered with the writer's broker, it
/// fetches after each commit that modified its region (and after each
/// external commit, which the broker reports as one more commit, when the
/// configuration observes external changes: see `ExternalChangeDetector`),
/// reduces on its own serial queue, and delivers through its scheduler.
///
/// An observation with an `IncrementalFetch` refetches from its previous
/// value and the rows that commits changed when it can (see
/// `IncrementalRefetch`, which keeps that state).
///
/// `@unchecked Sendable`: the `let` properties are Sendable or only used as
/// said here; `reduce` only runs on `reductionQueue`; `observerID` and
/// `region` are only touched on the writer's queue; `fetchState` is behind
/// its lock; `refetch` says how it is safe.
final class ValueObserver<Value: Sendable>: DatabaseCommitObserver, @unchecked Sendable {
    private let host: any ObservationHost
    private let tracking: ObservationTracking
    /// Whether the fetch returns what the one tracked request selects (see
    /// `ValueObservation.fetchesTrackedRequest`).
    private let fetchesTrackedRequest: Bool
    private let fetch: @Sendable (Database) throws -> any Sendable
    /// The incremental refetches of the run: only with `.regions`
    /// tracking and an `IncrementalFetch`.
    private let refetch: IncrementalRefetch?
    private let reduce: (any Sendable) throws -> Value?
    /// See `ValueObservation.reducesFirstValueOnWriter`.
    private let reducesFirstValueOnWriter: Bool
    private let reductionQueue: DispatchQueue
    private let scheduler: ValueObservationScheduler
    private let onChange: @Sendable (Value) -> Void
    private let onError: @Sendable (any Error) -> Void
    let gate = DeliveryGate()
    /// `ValueObservation.fetchInterval`.
    private let fetchInterval: Duration?
    /// See `ValueObservation.coalescesWhileReducing`.
    private let coalescesWhileReducing: Bool
    /// `ValueObservation.events`.
    private let events: ObservationEvents

    // Writer queue only.
    private var observerID: Int?
    private var region = DatabaseRegion()

    /// Commits are told by their `DatabaseCommit.number`.
    private struct FetchState {
        /// A fetch runs (on a reader, for a pool).
        var isFetching = false
        /// The latest commit that may have changed the value.
        var latestChange = 0
        /// The latest commit that changed the region when the latest fetch
        /// started: the fetch reads its state or a later one. When it is
        /// older than `latestChange`, a fetch is due: commits made during a
        /// fetch coalesce into one fetch after it.
        var fetchedChange = 0
        /// Cancelled or failed: never fetch again.
        var isFinished = false
        /// The error was handed to `onError`: no other one will be.
        var hasFailed = false
        /// The run's last event (`didFail` or `didCancel`) was told: the
        /// first of `finish(with:)` and `cancel()` tells it, the other not.
        var hasToldEnd = false
        /// Whether to keep `lastFetched`: the run refetches incrementally.
        var keepsLastFetched = false
        /// The value of the latest fetch, for an incremental fetch.
        var lastFetched: (any Sendable)?
        /// When the latest fetch started, for `fetchInterval`.
        var lastFetchStart: ContinuousClock.Instant?
        /// A fetch waits for `fetchInterval` to pass: a timer will look
        /// again (one at a time).
        var waitsForInterval = false
        /// With `ValueObservation.coalescesWhileReducing`: the fetched value
        /// that waits for the reduction queue, if any. A newer one replaces
        /// it: when reductions (a difference of large results) are slower
        /// than fetches, the values in between are never reduced, and
        /// memory holds one waiting value besides the one reduced.
        var waitingValue: Result<any Sendable, any Error>?
        /// Blocks handed to the reduction queue that have not ended: a
        /// fetch starts there only when it is idle (see
        /// `fetchOnPinnedReader`).
        var reductionsInFlight = 0
    }
    private let fetchState = LockedState(FetchState())
    /// The filter and the boundary of the request's `ORDER BY ... LIMIT`
    /// window, when its filter has one (see `RowWindow`): set on the
    /// writer before the observation registers, read by every fetch.
    private let window = LockedState<(filter: RowFilter, boundary: WindowBoundary)?>(nil)

    init(
        observation: ValueObservation<Value>,
        host: any ObservationHost,
        scheduler: ValueObservationScheduler,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) {
        self.host = host
        self.tracking = observation.tracking
        self.fetchesTrackedRequest = observation.fetchesTrackedRequest
        self.fetch = observation.fetch
        if case .regions = observation.tracking, let incrementalFetch = observation.incrementalFetch {
            self.refetch = IncrementalRefetch(incrementalFetch)
        } else {
            self.refetch = nil
        }
        self.fetchInterval = observation.fetchInterval
        self.coalescesWhileReducing = observation.coalescesWhileReducing
        self.events = observation.events
        self.reduce = observation.makeReducer()
        self.reducesFirstValueOnWriter = observation.reducesFirstValueOnWriter
        self.reductionQueue = DispatchQueue(label: host.configuration.label + ".observation")
        self.scheduler = scheduler
        self.onChange = onChange
        self.onError = onError
    }

    // MARK: - Starting

    /// Starts the observation: registers it and fetches its first value, in
    /// one writer access, so that no commit can slip between the two.
    ///
    /// The first value is handed to the reduction queue inside that access
    /// too: the value of a commit that follows the access comes after it.
    /// When the reducer runs no code of the user's that may access the
    /// database (`ValueObservation.reducesFirstValueOnWriter`: decoding
    /// the first records of a `trackingSetDifferences` observation), it
    /// even reduces it there, on the writer's thread and on the reduction
    /// queue (`sync`, which runs it on the calling thread), from what the
    /// fetch just read into this core's caches; the writer is held for
    /// that reduction. Either way, `onChange` runs after the access.
    func start() -> AnyDatabaseCancellable {
        for willStart in events.willStart { willStart() }
        if case .immediate = scheduler.kind {
            precondition(
                ValueObservationScheduler.isOnMainThread,
                "ValueObservation.start(in:scheduling: .immediate, ...) must be called from the main thread "
                    + "(the main actor, or the main queue).")
            do {
                // Reduced before the writer is released: the value of a
                // later commit is reduced after this one.
                let value = try host.writer.sync { db in
                    let fetched = try startOnWriter(db)
                    return try reductionQueue.sync { try reduce(fetched) }
                }
                if let value { gate.deliver { onChange(value) } }
            } catch {
                finish(with: error, synchronously: true)
            }
        } else {
            do {
                try host.writer.sync { db in
                    let fetched = try startOnWriter(db)
                    guard reducesFirstValueOnWriter else {
                        enqueue(.success(fetched))
                        return
                    }
                    // The first value is reduced on this thread, whose
                    // caches hold what the fetch just read, rather than
                    // on a thread that would read it all again from
                    // another core. Before the writer is released: the
                    // value of a later commit is reduced after this one.
                    // It is delivered after the access, as later values.
                    reductionQueue.sync { reduceAndDeliver(.success(fetched), onWriter: true) }
                }
            } catch {
                enqueue(.failure(error))
            }
        }
        return AnyDatabaseCancellable { [self] in cancel() }
    }

    /// Starts the observation without waiting for the writer (for async sequences).
    func startWithoutWaiting() -> AnyDatabaseCancellable {
        for willStart in events.willStart { willStart() }
        host.writer.asyncAccess({ [self] db in
            // Cancelled before it started: stay out of the broker.
            guard gate.isOpen else { return }
            enqueue(.success(try startOnWriter(db)))
        }, completion: { [self] result in
            if case .failure(let error) = result { enqueue(.failure(error)) }
        })
        return AnyDatabaseCancellable { [self] in cancel() }
    }

    /// The filter of the tracked request's rows, when the fetch returns
    /// what it selects and it has one (see `RowFilter`).
    private func rowFilter(_ db: Database) -> RowFilter? {
        guard fetchesTrackedRequest, db.observationBroker.usesPreUpdateHook, case .regions(let regions) = tracking,
            regions.count == 1, let request = regions[0] as? any FetchRequest,
            let (sql, arguments) = try? request.makeSQL(db), let filter = RowFilter(sql: sql, arguments: arguments),
            // A region refined to rowids (`filter(key:)`) already tells the
            // rows that matter: evaluating the clause would cost more than
            // it saves.
            region.isModified(by: DatabaseEvent(kind: .insert(tableName: filter.table), rowID: .min))
        else { return nil }
        return filter
    }

    /// Reads the boundary of the request's window in the state of the
    /// commit numbered `commit`, in the fetch's read transaction (see
    /// `WindowBoundary`); nothing without a window.
    private func readWindowBoundary(_ db: Database, commit: Int) {
        guard let (filter, boundary) = window.withLock({ $0 }), let rowWindow = filter.window else { return }
        do {
            let row = try SQLRequest<Row>(
                sql: rowWindow.boundarySQL(from: filter.fromText, where: filter.whereText), arguments: filter.arguments
            ).fetchOne(db)
            let values = row?.databaseValues
            // A text that is not valid UTF-8 (a lone surrogate of a UTF-16
            // database, which SQLite reads as such bytes) does not survive
            // the copy into the private database, where it becomes U+FFFD:
            // such a boundary would place rows wrongly. None then.
            if values?.contains(where: \.isInvalidUTF8Text) == true {
                boundary.forget()
                return
            }
            boundary.update(commit: commit, values: values)
        } catch {
            boundary.forget()
        }
    }

    /// The first fetch starts: `willFetch` is told, and the interval of a
    /// throttled observation starts (after the region was computed, so that
    /// the next fetch starts at least `fetchInterval` after this one: the
    /// instants `willFetch` sees are spaced by it).
    private func willFetchFirstValue() {
        for willFetch in events.willFetch { willFetch() }
        if fetchInterval != nil { fetchState.withLock { $0.lastFetchStart = .now } }
    }

    /// On the writer: computes the region, fetches the first value, registers.
    ///
    /// External changes are watched from before the fetch (see
    /// `ExternalChangeDetector`): an external commit that the fetch misses
    /// is detected later.
    private func startOnWriter(_ db: Database) throws -> any Sendable {
        try host.observationWillStart(db)
        let fetched: any Sendable
        do {
            switch tracking {
            case .regions(let regions):
                // Both may read the schema: without a lock another
                // process's writer could meet (see `yieldingToWriters`).
                let candidatePages: ObservedTablePages?
                (region, candidatePages) = try db.yieldingToWriters {
                    (try db.observedRegion(of: regions),
                     refetch?.candidatePages(db, observesExternalChanges: host.externalChangeDetector != nil))
                }
                for willTrackRegion in events.willTrackRegion { willTrackRegion(region) }
                willFetchFirstValue()
                fetched = try inReadTransaction(db, knowingSnapshot: candidatePages != nil) { snapshot in
                    try refetch?.start(db, pages: candidatePages)
                    let value = try fetch(db)
                    refetch?.pages?.didFetch(db, snapshot: snapshot)
                    return value
                }
            case .recorded, .constantRegion:
                willFetchFirstValue()
                (fetched, region) = try inReadTransaction(db) { _ in try db.recordingSelection { try fetch(db) } }
                for willTrackRegion in events.willTrackRegion { willTrackRegion(region) }
            }
        } catch {
            host.observationDidEnd()
            throw error
        }
        let filter = rowFilter(db)
        var boundary: WindowBoundary?
        if let filter, filter.window != nil, host.externalChangeDetector == nil, refetch == nil {
            // Other processes' commits go through no hook: no window then.
            // An incremental fetch (top rows, differences) keeps rows
            // beyond the window and wants every changed rowid: no window.
            // The writer is still held: the state is the first fetch's.
            boundary = WindowBoundary()
            window.withLock { $0 = (filter, boundary!) }
            readWindowBoundary(db, commit: db.observationBroker.lastCommitNumber)
        }
        observerID = db.observationBroker.register(
            self, region: region, rowIDTable: refetch?.rowIDTable, filter: filter, window: boundary)
        refetch?.didRegister()
        // The commits it sees from now on have higher numbers than any
        // before: `latestChange` and `fetchedChange` start equal.
        let keepsLastFetched = refetch?.isActive == true
        fetchState.withLock { state in
            state.keepsLastFetched = keepsLastFetched
            if keepsLastFetched { state.lastFetched = fetched }
        }
        return fetched
    }

    // MARK: - Fetching after commits

    func databaseDidCommit(_ db: Database, _ commit: DatabaseCommit) {
        refetch?.commitDidChange(commit.changedRowIDs)
        // The region compiles the requests, which may read the schema:
        // without a lock another process's writer could meet (see
        // `yieldingToWriters`).
        if commit.changesSchema, case .regions(let regions) = tracking, let observerID,
            let newRegion = try? db.yieldingToWriters({ try db.observedRegion(of: regions) }), newRegion != region
        {
            // A schema change may have redefined a view the regions read.
            trackRegion(newRegion, db, observerID: observerID)
        }
        if !events.databaseDidChange.isEmpty, !fetchState.withLock({ $0.isFinished }) {
            for databaseDidChange in events.databaseDidChange { databaseDidChange() }
        }
        commitDidChangeRegion(db, number: commit.number)
    }

    /// The file was deleted or replaced: the values would come from a file
    /// that is gone. The observation ends with the error.
    func databaseFileDidMove(_ db: Database, _ error: DatabaseError) {
        finish(with: error, synchronously: false, onWriter: true)
    }

    /// On the writer: observes `newRegion` from now on.
    private func trackRegion(_ newRegion: DatabaseRegion, _ db: Database, observerID: Int) {
        region = newRegion
        db.observationBroker.updateRegion(newRegion, forObserver: observerID)
        for willTrackRegion in events.willTrackRegion { willTrackRegion(newRegion) }
    }

    /// The commit numbered `number` changed the region: fetch, now or
    /// after the running fetch.
    private func commitDidChangeRegion(_ db: Database, number: Int) {
        window.withLock { $0?.boundary.noteChange(number) }
        fetchState.withLock { $0.latestChange = max($0.latestChange, number) }
        fetchIfDue(db)
    }

    /// Starts a fetch of the current state, unless one runs (it fetches
    /// again when it ends, if needed), or the last one read this state.
    private func fetchIfDue(_ db: Database) {
        // The fetch reads the current state, that of the latest commit
        // that changed the region or a later one: the rows changed since
        // the previous fetch are those changed until now.
        // The clock is read only for a throttled observation.
        let now: ContinuousClock.Instant? = fetchInterval == nil ? nil : .now
        var intervalEnd: ContinuousClock.Instant?
        let changes = fetchState.withLock { state -> RefetchChanges? in
            guard !state.isFinished, !state.isFetching, state.latestChange > state.fetchedChange else { return nil }
            if let fetchInterval, let now, let start = state.lastFetchStart, now < start + fetchInterval {
                // Throttled: a timer fetches when the interval ends.
                if !state.waitsForInterval {
                    state.waitsForInterval = true
                    intervalEnd = start + fetchInterval
                }
                return nil
            }
            state.isFetching = true
            state.fetchedChange = state.latestChange
            return RefetchChanges(previous: state.lastFetched, rowIDs: .unknown)
        }
        if let intervalEnd { fetchAfterInterval(endingAt: intervalEnd) }
        guard var changes else { return }
        for willFetch in events.willFetch { willFetch() }
        // The interval starts once `willFetch` was told (no other fetch
        // starts while this one runs: `isFetching`).
        if fetchInterval != nil { fetchState.withLock { $0.lastFetchStart = .now } }
        if let refetch { changes.rowIDs = refetch.takeUnfetchedRowIDs() }
        if let reader = host.readerIfAvailable() {
            // Open a read transaction on the state just committed while the
            // writer is still held, then let the writer go: the fetch runs
            // on the reader, concurrently with later writes.
            do {
                let knowsPages = refetch?.pages != nil
                let snapshot = try reader.sync { readerDB in
                    try readerDB.beginPinnedRead(knowingSnapshot: knowsPages)
                }
                var changes = refetch?.checkingExternalCommits(db, changes) ?? changes
                changes.snapshot = snapshot
                fetchOnPinnedReader(
                    reader, lastCommitNumber: db.observationBroker.lastCommitNumber, changes: changes)
                return
            } catch {
                host.releaseReader(reader)
            }
        }
        // A queue, or a pool whose readers are all busy (they may be waiting
        // for the writer): fetch here.
        let result = Result { try fetchOnWriter(db, changes: changes) }
        if case .failure = result { fetchDidFail() }
        enqueue(result)
        fetchDidEnd(fetched: try? result.get())
    }

    /// Looks for a due fetch once `end` has come (`throttle(_:)`). The
    /// observer is kept until then; a cancelled one fetches nothing.
    private func fetchAfterInterval(endingAt end: ContinuousClock.Instant) {
        let nanoseconds = ContinuousClock.now.duration(to: end).clampedNanoseconds()
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            fetchState.withLock { $0.waitsForInterval = false }
            host.writer.asyncWithoutWaiting { [self] db in fetchIfDue(db) }
        }
    }

    /// The value of the current state: refetched from the previous one
    /// and the changed rows when the run can, else fetched.
    private func fetchValue(_ db: Database, changes: RefetchChanges) throws -> any Sendable {
        guard let refetch else { return try fetch(db) }
        return try refetch.fetchValue(db, changes: changes, fullFetch: fetch)
    }

    private func fetchOnWriter(_ db: Database, changes: RefetchChanges) throws -> any Sendable {
        guard case .recorded = tracking else {
            // The read may run again (see `Database.yieldingToWriters`):
            // each run checks for external commits from the same state.
            let externalCommitState = refetch?.externalCommitState
            return try inReadTransaction(db, knowingSnapshot: refetch?.pages != nil) { snapshot in
                if let refetch, let externalCommitState { refetch.externalCommitState = externalCommitState }
                var changes = refetch?.checkingExternalCommits(db, changes) ?? changes
                changes.snapshot = snapshot
                let value = try fetchValue(db, changes: changes)
                readWindowBoundary(db, commit: db.observationBroker.lastCommitNumber)
                return value
            }
        }
        let (fetched, newRegion) = try inReadTransaction(db) { _ in try db.recordingSelection { try fetch(db) } }
        if newRegion != region, let observerID {
            trackRegion(newRegion, db, observerID: observerID)
        }
        return fetched
    }

    /// Fetches on a reader whose read transaction is pinned to the commit
    /// numbered `lastCommitNumber`, then releases it.
    ///
    /// When the reduction queue is idle, the fetch runs from it, through
    /// the reader's queue (`sync` on an idle queue runs on the calling
    /// thread): the value is then reduced on the thread that fetched it,
    /// one thread wake-up less between the commit and the delivery. When
    /// the queue reduces an earlier value, the fetch runs on the reader's
    /// queue, concurrently with that reduction.
    private func fetchOnPinnedReader(_ reader: SerializedDatabase, lastCommitNumber: Int, changes: RefetchChanges) {
        let access: @Sendable (Database) throws -> (any Sendable, DatabaseRegion?) = { [self] db in
            defer { db.endPinnedRead() }
            if case .recorded = tracking {
                let (fetched, region) = try db.recordingSelection { try fetch(db) }
                return (fetched, region)
            }
            let value = try fetchValue(db, changes: changes)
            readWindowBoundary(db, commit: lastCommitNumber)
            return (value, nil)
        }
        let completion: @Sendable (Result<(any Sendable, DatabaseRegion?), any Error>) -> Void = { [self] result in
            host.releaseReader(reader)
            if case .success((_, let newRegion?)) = result {
                // Regions live on the writer. Update it before the value is
                // delivered, so that a write started by whoever receives the
                // value runs after the update. A region that grew misses
                // the commits made since the fetched snapshot: fetch again
                // when there were some.
                host.writer.asyncWithoutWaiting { [self] db in
                    guard let observerID, newRegion != region else { return }
                    let grew = region.union(newRegion) != region
                    trackRegion(newRegion, db, observerID: observerID)
                    let latestCommitNumber = db.observationBroker.lastCommitNumber
                    if grew && latestCommitNumber != lastCommitNumber {
                        refetch?.forgetUnfetchedRowIDs()
                        commitDidChangeRegion(db, number: latestCommitNumber)
                    }
                }
            }
            if case .failure = result { fetchDidFail() }
            enqueue(result.map { $0.0 })
            fetchDidEnd(fetched: try? result.get().0)
        }
        let isReductionIdle = fetchState.withLock { state in
            guard state.reductionsInFlight == 0 else { return false }
            state.reductionsInFlight += 1
            return true
        }
        guard isReductionIdle else {
            reader.asyncAccess(access, completion: completion)
            return
        }
        reductionQueue.async { [self] in
            completion(Result { try reader.sync(access) })
            fetchState.withLock { $0.reductionsInFlight -= 1 }
        }
    }

    /// A fetch failed: the observation ends now, so that no later commit
    /// fetches again, although the error reaches `onError` later.
    private func fetchDidFail() {
        fetchState.withLock { $0.isFinished = true }
    }

    /// Ends a fetch, keeping its value for the next incremental fetch;
    /// fetches again, from the writer, if a commit happened meanwhile.
    private func fetchDidEnd(fetched: (any Sendable)?) {
        let fetchAgain = fetchState.withLock { state -> Bool in
            state.isFetching = false
            if state.keepsLastFetched { state.lastFetched = fetched }
            return !state.isFinished && state.latestChange > state.fetchedChange
        }
        if fetchAgain {
            host.writer.asyncWithoutWaiting { [self] db in fetchIfDue(db) }
        }
    }

    /// Runs `body` in a read transaction, unless one is open already, with
    /// the transaction's snapshot when `knowingSnapshot` and it is known
    /// (see `TablePageTracker.beginSnapshot`): nil otherwise.
    private func inReadTransaction<T>(
        _ db: Database, knowingSnapshot: Bool = false, _ body: (WALIndexHeader?) throws -> T
    ) throws -> T {
        if db.isInsideTransaction { return try body(nil) }
        // Reads that another process's writer interrupts run again.
        return try db.yieldingToWriters {
            guard knowingSnapshot else { return try db.inTransaction(.deferred) { try body(nil) } }
            let snapshot = try TablePageTracker.beginSnapshot(db)
            do {
                let result = try body(snapshot)
                if db.isInsideTransaction { try db.execute(sql: "COMMIT") }
                return result
            } catch {
                db.rollbackIfInsideTransaction()
                throw error
            }
        }
    }

    // MARK: - Delivering

    /// Hands a fetched value (or an error) to the reduction queue, in fetch
    /// order. With `coalescesWhileReducing`, a value that still waits for
    /// the queue is replaced by this newer one (see `FetchState.waitingValue`).
    private func enqueue(_ fetched: Result<any Sendable, any Error>) {
        guard coalescesWhileReducing else {
            fetchState.withLock { $0.reductionsInFlight += 1 }
            reductionQueue.async { [self] in
                reduceAndDeliver(fetched)
                fetchState.withLock { $0.reductionsInFlight -= 1 }
            }
            return
        }
        let schedules = fetchState.withLock { state -> Bool in
            defer { state.waitingValue = fetched }
            if state.waitingValue == nil { state.reductionsInFlight += 1 }
            return state.waitingValue == nil
        }
        guard schedules else { return }
        reductionQueue.async { [self] in
            let latest = fetchState.withLock { state -> Result<any Sendable, any Error>? in
                defer { state.waitingValue = nil }
                return state.waitingValue
            }
            if let latest { reduceAndDeliver(latest) }
            fetchState.withLock { $0.reductionsInFlight -= 1 }
        }
    }

    /// On the reduction queue: reduces a fetched value and delivers the
    /// result, or ends the observation with the error.
    ///
    /// - Parameter onWriter: Whether this runs inside an access of the
    ///   writer: then `onChange` and `onError` run after it (see
    ///   `deliver(_:onWriter:)`).
    private func reduceAndDeliver(_ fetched: Result<any Sendable, any Error>, onWriter: Bool = false) {
        guard gate.isOpen else { return }
        switch fetched {
        case .success(let fetched):
            do {
                guard let value = try reduce(fetched) else { return }
                deliver({ [onChange] in onChange(value) }, onWriter: onWriter)
            } catch {
                finish(with: error, synchronously: false, onWriter: onWriter)
            }
        case .failure(let error):
            finish(with: error, synchronously: false, onWriter: onWriter)
        }
    }

    /// Delivers through the scheduler: with `.observationQueue`, on the
    /// reduction queue, now, or after the writer's access when called
    /// inside one (`onWriter`), so that `onChange` never runs inside an
    /// access (it may access the database itself).
    private func deliver(_ body: @escaping @Sendable () -> Void, onWriter: Bool = false) {
        switch scheduler.kind {
        case .observationQueue where onWriter:
            reductionQueue.async { [gate] in gate.deliver(body) }
        case .observationQueue:
            gate.deliver(body)
        case .async(let queue):
            queue.async { [gate] in gate.deliver(body) }
        case .immediate:
            DispatchQueue.main.async { [gate] in gate.deliver(body) }
        }
    }

    /// Ends the observation with an error, delivered once.
    ///
    /// - Parameter onWriter: See `deliver(_:onWriter:)`.
    private func finish(with error: any Error, synchronously: Bool, onWriter: Bool = false) {
        let (isFirst, tellsEnd) = fetchState.withLock { state in
            defer {
                state.isFinished = true
                state.hasFailed = true
                state.hasToldEnd = true
            }
            return (!state.hasFailed, !state.hasToldEnd)
        }
        guard isFirst else { return }
        if tellsEnd {
            for didFail in events.didFail { didFail(error) }
        }
        unregister()
        let onError = self.onError
        if synchronously {
            gate.deliver { onError(error) }
            gate.cancel()
        } else {
            deliver({ [gate] in
                onError(error)
                gate.cancel()
            }, onWriter: onWriter)
        }
    }

    // MARK: - Cancelling

    func cancel() {
        // A failed fetch finishes the run before its error reaches
        // `finish(with:)`: a cancel in between tells the end (no error
        // will be delivered after it).
        let tellsEnd = fetchState.withLock { state in
            defer {
                state.isFinished = true
                state.hasToldEnd = true
            }
            return !state.hasToldEnd
        }
        if tellsEnd {
            for didCancel in events.didCancel { didCancel() }
        }
        gate.cancel()
        unregister()
    }

    private func unregister() {
        host.writer.asyncWithoutWaiting { [self] db in
            guard let observerID else { return }
            self.observerID = nil
            db.observationBroker.unregister(observerID)
            host.observationDidEnd()
        }
    }
}
