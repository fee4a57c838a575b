#if Server
import ReactiveSQLite

/// One client's subscription to a shared live query.
///
/// It holds the revision the client last received, and at most one pending
/// wake-up: when it wakes, `nextEvent()` computes what to send from the
/// latest revision (the shared difference when the client is one revision
/// behind, a merged difference when it fell further behind, the rows when
/// it has none). So a slow client gets fewer, larger differences, and its
/// memory is bounded whatever the rate of commits.
final class LiveSubscription: Sendable {
    let shared: SharedLiveQuery
    /// Wake-ups: at most one pending (`bufferingNewest(1)`).
    let wakeups: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let maxQueuedBytes: Int
    /// The server's notice now.
    private let notice: @Sendable () -> String?
    private let state = LockedState(State())

    private struct State {
        var lastSent: LiveRevision?
        /// The notice the client holds (none at first).
        var noticeSent: String?
        var needsPing = false
        var endReason: String?
        var hasEnded = false
    }

    init(shared: SharedLiveQuery, maxQueuedBytes: Int, notice: @escaping @Sendable () -> String? = { nil }) {
        self.shared = shared
        self.maxQueuedBytes = maxQueuedBytes
        self.notice = notice
        (wakeups, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Sets the revision the client already holds (resumption).
    func resume(from revision: LiveRevision?) {
        state.withLock { $0.lastSent = revision }
    }

    func wake() {
        continuation.yield(())
    }

    /// Asks for a keep-alive event when there is nothing else to send.
    func requestPing() {
        state.withLock { $0.needsPing = true }
        wake()
    }

    /// Ends the subscription with an error event giving `reason`.
    func end(reason: String) {
        state.withLock { if $0.endReason == nil { $0.endReason = reason } }
        wake()
    }

    /// Ends the wake-ups: the transport's loop stops.
    func finish() {
        continuation.finish()
    }

    /// Ends the subscription without a word (the client unsubscribed).
    func cancel() {
        state.withLock { $0.hasEnded = true }
        continuation.finish()
    }

    /// What to send now, or nil when the client is up to date. After an
    /// event whose `isFinal` is true, there is nothing more.
    func nextEvent() -> LiveEvent? {
        let (lastSent, endReason, needsPing, hasEnded) = state.withLock { state in
            defer { state.needsPing = false }
            return (state.lastSent, state.endReason, state.needsPing, state.hasEnded)
        }
        if hasEnded { return nil }
        if let reason = endReason ?? shared.failure {
            return ending(with: reason)
        }
        if let latest = shared.latest, latest !== lastSent {
            state.withLock { $0.lastSent = latest }
            if let event = event(from: lastSent, to: latest) {
                let size = event.data.utf8.count
                if size > maxQueuedBytes {
                    return ending(
                        with: "a message of \(size) bytes for live query '\(shared.query.name)' is more than the "
                            + "server's limit of \(maxQueuedBytes) bytes per client (maxQueuedBytes)")
                }
                return event
            }
        }
        // A notice once the client has rows, when it changed.
        if lastSent != nil || shared.latest != nil {
            let current = notice()
            let changed = state.withLock { state -> Bool in
                guard state.noticeSent != current else { return false }
                state.noticeSent = current
                return true
            }
            if changed { return .notice(current) }
        }
        return needsPing ? .ping : nil
    }

    private func ending(with reason: String) -> LiveEvent {
        state.withLock { $0.hasEnded = true }
        return .error(reason)
    }

    /// The event that brings a client from `old` to `new`; nil when they
    /// hold the same rows.
    private func event(from old: LiveRevision?, to new: LiveRevision) -> LiveEvent? {
        guard let old, old.columnNames == new.columnNames, let identity = shared.identity else {
            return LiveEvent(kind: .rows, id: new.id, data: new.rowsEventData())
        }
        if new.number == old.number + 1, let difference = new.diffFromPrevious {
            return LiveEvent(kind: .diff, id: new.id, data: difference)
        }
        // Behind by several revisions: one merged difference, shared with
        // the subscribers behind from the same revision.
        let shared = self.shared
        return shared.mergedEvent(from: old, to: new) {
            var differ = RowDiffer(
                identity: identity, isOrdered: shared.query.isOrdered, columnNames: old.columnNames, rows: old.rows)
            switch differ.diff(to: new.rows) {
            case .unchanged:
                return nil
            case .columnsChanged:
                return LiveEvent(kind: .rows, id: new.id, data: new.rowsEventData())
            case .changed(let changes):
                let text = RowJSON.difference(
                    changes, columnNames: differ.columnNames, isOrdered: shared.query.isOrdered)
                return LiveEvent(kind: .diff, id: new.id, data: JSONText.line(text))
            }
        }
    }
}
#endif
