import Dispatch

/// What observations need from a `DatabaseQueue` or a `DatabasePool`: the
/// writer, whose broker they register with, and for a pool its readers.
protocol ObservationHost: DatabaseWriter {
    var writer: SerializedDatabase { get }
    /// A reader that is free now, for a pool; nil for a queue, or when
    /// every reader is busy.
    func readerIfAvailable() -> SerializedDatabase?
    /// Gives back a reader obtained from `readerIfAvailable()`.
    func releaseReader(_ reader: SerializedDatabase)
    /// Detects the commits of other connections and processes, when the
    /// configuration asks for it (see `Configuration.observesExternalChanges`).
    var externalChangeDetector: ExternalChangeDetector? { get }
}

extension ObservationHost {
    /// Called on the writer when an observation starts, before its first
    /// fetch and its registration with the broker: starts watching external
    /// changes with the first observation.
    ///
    /// Balance each call that returns with one `observationDidEnd()`, when
    /// the observation leaves the broker (or fails to join it).
    ///
    /// - Throws: The error of opening the connection that watches external changes.
    func observationWillStart(_ db: Database) throws {
        try externalChangeDetector?.observationWillStart(db)
    }

    /// Called on the writer when an observation leaves the broker: stops
    /// watching external changes after the last one.
    func observationDidEnd() {
        externalChangeDetector?.observationDidEnd()
    }
}

extension DatabaseQueue: ObservationHost {
    func readerIfAvailable() -> SerializedDatabase? { nil }
    func releaseReader(_ reader: SerializedDatabase) {}
}

extension SerializedDatabase {
    /// Runs `block` on the connection later, without waiting. Nothing runs
    /// if the connection is closed by then.
    func asyncWithoutWaiting(_ block: @escaping @Sendable (Database) -> Void) {
        asyncAccess(block, completion: { _ in })
    }
}

extension DatabaseReader {
    /// The queue or pool behind an observation.
    var observationHost: any ObservationHost {
        guard let host = self as? any ObservationHost else {
            preconditionFailure(
                "Observations run on a DatabaseQueue or a DatabasePool; \(type(of: self)) is neither.")
        }
        return host
    }
}

extension DatabasePool: ObservationHost {
    func readerIfAvailable() -> SerializedDatabase? { readers.acquireIfAvailable() }
    func releaseReader(_ reader: SerializedDatabase) { readers.release(reader) }
}
