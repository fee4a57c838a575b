import Dispatch

/// Up to `maximumCount` connections, opened when first needed and handed
/// out one user at a time, first come first served.
///
/// Waiting never needs a thread of Swift concurrency's cooperative pool to
/// make progress: a connection given back is handed to the oldest waiter by
/// calling its handler on the releasing thread, and the handler of an async
/// access schedules the access on the connection's own dispatch queue. So
/// synchronous accesses that block cooperative threads, mixed with async
/// ones, cannot starve each other into a deadlock.
final class ConnectionPool: Sendable {
    private struct State {
        var available: [SerializedDatabase] = []
        var openedCount = 0
        /// The number of connections opened so far, to name each one.
        var openingCount = 0
        var waiters: [Waiter] = []
        var isClosed = false
    }

    private struct Waiter {
        var resume: @Sendable (Result<SerializedDatabase, any Error>) -> Void
    }

    private enum Acquisition {
        case available(SerializedDatabase)
        /// A slot was reserved: open a connection with this index for it.
        case open(index: Int)
        case wait
        case closed
    }

    /// Behind an `LockedState` rather than a `Synchronization.Mutex`,
    /// whose hand-overs the thread sanitizer cannot see (see `LockedState`).
    private let state = LockedState(State())
    private let maximumCount: Int
    private let makeConnection: @Sendable (_ index: Int) throws -> SerializedDatabase
    private let closedError: @Sendable () -> any Error
    /// Opens connections for `acquire(_:)`. A serial queue of its own, not a
    /// global one: global queues have as many threads as cores, and code
    /// that blocks them (waiting on a semaphore) must not delay an opening.
    private let openingQueue: DispatchQueue

    init(
        label: String,
        maximumCount: Int,
        closedError: @escaping @Sendable () -> any Error,
        makeConnection: @escaping @Sendable (_ index: Int) throws -> SerializedDatabase
    ) {
        precondition(maximumCount >= 1, "a pool needs room for one connection (DatabasePool.init checks it)")
        self.maximumCount = maximumCount
        self.makeConnection = makeConnection
        self.closedError = closedError
        openingQueue = DispatchQueue(label: label)
    }

    /// A connection, waiting (blocking the thread) until one is free.
    ///
    /// - Throws: The error of opening a connection, or `closedError()` when
    ///   the pool is closed (before or while waiting).
    func acquire() throws -> SerializedDatabase {
        let slot = LockedState<Result<SerializedDatabase, any Error>?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
        switch reserve(orEnqueue: { result in
            slot.withLock { $0 = result }
            semaphore.signal()
        }) {
        case .available(let connection): return connection
        case .open(let index): return try open(index: index)
        case .closed: throw closedError()
        case .wait:
            semaphore.wait()
            return try slot.withLock { $0! }.get()
        }
    }

    /// Calls `handler` with a connection as soon as one is free, without
    /// blocking the caller: at once on the current thread when one is idle,
    /// on the pool's opening queue after opening a new one, or later on the
    /// thread that releases one. `handler` must release the connection when done.
    func acquire(_ handler: @escaping @Sendable (Result<SerializedDatabase, any Error>) -> Void) {
        switch reserve(orEnqueue: handler) {
        case .available(let connection):
            handler(.success(connection))
        case .open(let index):
            // Opening reads the file: keep it off the caller's thread, which
            // may be a cooperative one.
            openingQueue.async {
                handler(Result { try self.open(index: index) })
            }
        case .closed:
            handler(.failure(closedError()))
        case .wait:
            break
        }
    }

    /// A connection that is free now (idle, or opened for a free slot), or
    /// nil without waiting when every connection is busy.
    func acquireIfAvailable() -> SerializedDatabase? {
        let acquisition: Acquisition = state.withLock { state in
            if state.isClosed { return .closed }
            return take(&state) ?? .wait
        }
        switch acquisition {
        case .available(let connection): return connection
        case .open(let index): return try? open(index: index)
        case .closed, .wait: return nil
        }
    }

    /// Returns a connection to the pool, handing it to the oldest waiter if
    /// any (whose handler runs on the current thread).
    func release(_ connection: SerializedDatabase) {
        enum Action { case resume(Waiter), close, keep }
        let action: Action = state.withLock { state in
            if state.isClosed {
                state.openedCount -= 1
                return .close
            }
            if !state.waiters.isEmpty {
                return .resume(state.waiters.removeFirst())
            }
            state.available.append(connection)
            return .keep
        }
        switch action {
        case .resume(let waiter): waiter.resume(.success(connection))
        // The releasing thread may run on the connection's queue: never wait for it.
        case .close: connection.closeAfterPendingAccesses()
        case .keep: break
        }
    }

    /// Closes the idle connections now and the busy ones when they are
    /// released; waiters and later acquisitions throw `closedError()`.
    ///
    /// - Parameter waitingForIdleConnections: Whether to close idle
    ///   connections through their queues, waiting for them (false from a
    ///   `deinit`, which may run on one of those queues and knows no access
    ///   is in progress).
    func close(waitingForIdleConnections: Bool = true) {
        let (idle, waiters) = state.withLock { state in
            state.isClosed = true
            let idle = state.available
            state.openedCount -= idle.count
            state.available = []
            let waiters = state.waiters
            state.waiters = []
            return (idle, waiters)
        }
        for connection in idle {
            if waitingForIdleConnections {
                connection.close()
            } else {
                connection.database.close()
            }
        }
        for waiter in waiters { waiter.resume(.failure(closedError())) }
    }

    /// Takes an idle connection or reserves a slot, under the lock; nil when
    /// every slot is taken.
    private func take(_ state: inout State) -> Acquisition? {
        if let connection = state.available.popLast() { return .available(connection) }
        if state.openedCount < maximumCount {
            state.openedCount += 1
            state.openingCount += 1
            return .open(index: state.openingCount)
        }
        return nil
    }

    /// Takes or reserves a connection, or registers `resume` to be called
    /// with one (`.wait`).
    private func reserve(
        orEnqueue resume: @escaping @Sendable (Result<SerializedDatabase, any Error>) -> Void
    ) -> Acquisition {
        state.withLock { state in
            if state.isClosed { return .closed }
            if let acquisition = take(&state) { return acquisition }
            state.waiters.append(Waiter(resume: resume))
            return .wait
        }
    }

    /// Opens a connection for a reserved slot. On failure the slot is given
    /// back, and the oldest waiter, who may have been waiting for that slot,
    /// fails with the same error rather than wait forever.
    private func open(index: Int) throws -> SerializedDatabase {
        do {
            return try makeConnection(index)
        } catch {
            let waiter: Waiter? = state.withLock { state in
                state.openedCount -= 1
                return state.waiters.isEmpty ? nil : state.waiters.removeFirst()
            }
            waiter?.resume(.failure(error))
            throw error
        }
    }
}
