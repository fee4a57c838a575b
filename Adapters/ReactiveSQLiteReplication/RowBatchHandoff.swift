import Dispatch
import ReactiveSQLite
import Synchronization

/// Hands batches of rows, one at a time, from a task that reads them from
/// a source to the replica's writer, which inserts them inside its
/// transaction: `ReplicaApplier.replaceTables(_:position:sourceState:batches:)`.
///
/// The writer's access runs on its connection's dispatch queue, outside
/// Swift concurrency, and waits there (`receive()`) for the next batch;
/// the task never blocks: `send(_:)` suspends until the writer took the
/// batch. So at most two batches are held at once, one inserted while the
/// next is read.
///
/// Either side ends the handoff with `fail(_:)`: the other side's next or
/// current call throws that error.
final class RowBatchHandoff: Sendable {
    /// What the reading task sends.
    enum Item: Sendable {
        /// Rows of the current table, values in the order of its columns.
        case rows([[DatabaseValue]])
        /// The current table has no more rows.
        case endOfTable
    }

    /// What the two sides share, under `state`'s lock.
    private struct State {
        /// The item sent and not yet taken.
        var item: Item?
        /// The sender of `item`, resumed when the writer takes it.
        var sender: CheckedContinuation<Void, any Error>?
        /// The error that ended the handoff, if one did.
        var failure: (any Error)?
    }

    /// The shared state; never locked while a continuation resumes.
    private let state = Mutex(State())
    /// Signalled once per item sent, and once when the handoff fails.
    private let signal = DispatchSemaphore(value: 0)

    /// Sends `item`; returns once the writer took it.
    ///
    /// - Throws: The error that ended the handoff (the writer's own when
    ///   it failed), or `CancellationError` when the task is cancelled,
    ///   which ends the handoff.
    func send(_ item: Item) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let failure = state.withLock { state -> (any Error)? in
                    if let failure = state.failure { return failure }
                    assert(state.item == nil, "one item is sent at a time")
                    state.item = item
                    state.sender = continuation
                    return nil
                }
                if let failure {
                    continuation.resume(throwing: failure)
                } else {
                    signal.signal()
                }
            }
        } onCancel: {
            fail(CancellationError())
        }
    }

    /// Waits for the next item, blocking the calling thread (the writer's
    /// queue, never a thread of Swift concurrency), and resumes its sender.
    ///
    /// - Throws: The error that ended the handoff.
    func receive() throws -> Item {
        while true {
            signal.wait()
            let taken = state.withLock { state -> Result<(Item, CheckedContinuation<Void, any Error>?), any Error>? in
                if let failure = state.failure { return .failure(failure) }
                guard let item = state.item else { return nil }
                defer {
                    state.item = nil
                    state.sender = nil
                }
                return .success((item, state.sender))
            }
            switch taken {
            case .failure(let error)?:
                throw error
            case .success(let (item, sender))?:
                sender?.resume()
                return item
            case nil:
                // Every signal comes with an item or a failure, which is
                // never cleared: not reached, but waiting again is safe.
                continue
            }
        }
    }

    /// Ends the handoff with `error`, unless it ended already: a sender
    /// waiting, and a writer waiting or coming, throw it.
    func fail(_ error: any Error) {
        let (isFirst, sender) = state.withLock { state -> (Bool, CheckedContinuation<Void, any Error>?) in
            guard state.failure == nil else { return (false, nil) }
            state.failure = error
            state.item = nil
            defer { state.sender = nil }
            return (true, state.sender)
        }
        guard isFirst else { return }
        sender?.resume(throwing: error)
        signal.signal()
    }
}
