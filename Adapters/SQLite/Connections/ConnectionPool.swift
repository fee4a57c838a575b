import Dispatch
import Synchronization

/// Up to `maximumCount` connections, opened when first needed and handed
/// out one user at a time. Waiting for one never blocks a cooperative
/// thread when done with `acquire() async`.
final class ConnectionPool: Sendable {
    private struct State {
        var available: [SerializedDatabase] = []
        var openedCount = 0
        var waiters: [Waiter] = []
        var isClosed = false
    }

    private struct Waiter {
        var resume: @Sendable (Result<SerializedDatabase, any Error>) -> Void
    }

    private enum Acquisition {
        case available(SerializedDatabase)
        case open
        case wait
        case closed
    }

    private let state = Mutex(State())
    private let maximumCount: Int
    private let makeConnection: @Sendable (_ index: Int) throws -> SerializedDatabase
    private let closedError: @Sendable () -> any Error

    init(
        maximumCount: Int,
        closedError: @escaping @Sendable () -> any Error,
        makeConnection: @escaping @Sendable (_ index: Int) throws -> SerializedDatabase
    ) {
        precondition(maximumCount > 0, "Configuration.maximumReaderCount must be at least 1 (got \(maximumCount))")
        self.maximumCount = maximumCount
        self.makeConnection = makeConnection
        self.closedError = closedError
    }

    /// A connection, waiting (blocking the thread) until one is free.
    func acquire() throws -> SerializedDatabase {
        let slot = Mutex<Result<SerializedDatabase, any Error>?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
        if let connection = try tryAcquire(orEnqueue: { result in
            slot.withLock { $0 = result }
            semaphore.signal()
        }) {
            return connection
        }
        semaphore.wait()
        return try slot.withLock { $0! }.get()
    }

    /// A connection, suspending the task until one is free.
    func acquire() async throws -> SerializedDatabase {
        // Fast path without a continuation.
        switch takeOrReserve() {
        case .available(let connection): return connection
        case .open: return try open()
        case .closed: throw closedError()
        case .wait: break
        }
        return try await withCheckedThrowingContinuation { continuation in
            do {
                if let connection = try tryAcquire(orEnqueue: { continuation.resume(with: $0) }) {
                    continuation.resume(returning: connection)
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// A connection that is free now (idle, or opened for a free slot), or
    /// nil without waiting when every connection is busy.
    func acquireIfAvailable() -> SerializedDatabase? {
        switch takeOrReserve() {
        case .available(let connection): return connection
        case .open: return try? open()
        case .closed, .wait: return nil
        }
    }

    /// Returns a connection to the pool, handing it to the oldest waiter if any.
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
        case .close: connection.close()
        case .keep: break
        }
    }

    /// Closes the idle connections now and the busy ones when they are
    /// released; waiters and later acquisitions throw.
    func close() {
        let (idle, waiters) = state.withLock { state in
            state.isClosed = true
            let idle = state.available
            state.openedCount -= idle.count
            state.available = []
            let waiters = state.waiters
            state.waiters = []
            return (idle, waiters)
        }
        for connection in idle { connection.close() }
        for waiter in waiters { waiter.resume(.failure(closedError())) }
    }

    private func takeOrReserve() -> Acquisition {
        state.withLock { state in
            if state.isClosed { return .closed }
            if let connection = state.available.popLast() { return .available(connection) }
            if state.openedCount < maximumCount {
                state.openedCount += 1
                return .open
            }
            return .wait
        }
    }

    /// Takes or opens a connection, or registers `resume` to be called with one.
    private func tryAcquire(
        orEnqueue resume: @escaping @Sendable (Result<SerializedDatabase, any Error>) -> Void
    ) throws -> SerializedDatabase? {
        let acquisition: Acquisition = state.withLock { state in
            if state.isClosed { return .closed }
            if let connection = state.available.popLast() { return .available(connection) }
            if state.openedCount < maximumCount {
                state.openedCount += 1
                return .open
            }
            state.waiters.append(Waiter(resume: resume))
            return .wait
        }
        switch acquisition {
        case .available(let connection): return connection
        case .open: return try open()
        case .closed: throw closedError()
        case .wait: return nil
        }
    }

    /// Opens a connection for a reserved slot. On failure the slot is given
    /// back, and the oldest waiter, who may have been waiting for that slot,
    /// fails with the same error rather than wait forever.
    private func open() throws -> SerializedDatabase {
        let index = state.withLock { $0.openedCount }
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
