import DatabaseRegions

/// An observation of the transactions that modify a region of the database.
///
/// ```swift
/// let observation = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM player"))
/// let cancellable = observation.start(in: dbQueue) { error in
///     print(error)
/// } onChange: { db in
///     print("players were modified")
/// }
/// ```
///
/// `onChange` is called on the writer's queue, right after each committed
/// transaction that modified the region, exactly once per such
/// transaction, before any other write can happen and before the
/// committing `write` returns. Rolled-back transactions and savepoints
/// notify nothing. Dropping or altering a table of the region counts as a
/// modification.
///
/// With `Configuration.observesExternalChanges`, a commit made by another
/// connection or process counts as a modification of every region: once
/// it is detected, `onChange` is called once (for all the external commits
/// made since the previous detection), on the writer's queue with its
/// `Database`, as after a local commit. On a read-only `DatabaseQueue`,
/// which commits nothing itself, these are the only calls: the observation
/// then tells when another process changed the file.
public struct DatabaseRegionObservation: Sendable {
    let regions: [any DatabaseRegionConvertible]

    /// Observes the union of `regions` (requests, or `DatabaseRegion` values).
    public init(tracking regions: any DatabaseRegionConvertible...) {
        self.regions = regions
    }

    /// Observes the union of `regions` (requests, or `DatabaseRegion` values).
    public init(tracking regions: [any DatabaseRegionConvertible]) {
        self.regions = regions
    }

    /// Starts the observation; it is registered before `start` returns.
    ///
    /// - Parameters:
    ///   - writer: A `DatabaseQueue` or a `DatabasePool`.
    ///   - onError: Called when the region cannot be computed (a request
    ///     whose SQL does not compile): the observation does not start; or,
    ///     with `Configuration.observesExternalChanges`, when the database
    ///     file is deleted or replaced under the connections
    ///     (`SQLITE_READONLY_DBMOVED`): the observation ends.
    ///   - onChange: Called on the writer's queue with the writer's
    ///     `Database`, after each transaction that modified the region. A
    ///     transaction it begins must end before it returns: one still open
    ///     when the writer's access ends is rolled back, and that access
    ///     throws a `DatabaseError` (`SQLITE_MISUSE`).
    /// - Precondition: Not called from inside an access of the same writer.
    public func start(
        in writer: some DatabaseWriter,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Database) -> Void
    ) -> AnyDatabaseCancellable {
        let host = writer.observationHost
        let observer = RegionObserver(host: host, regions: regions, onError: onError, onChange: onChange)
        do {
            try host.writer.sync { db in
                let region = try db.observedRegion(of: regions)
                try host.observationWillStart(db)
                observer.observerID = db.observationBroker.register(observer, region: region)
            }
        } catch {
            observer.gate.cancel()
            onError(error)
        }
        return AnyDatabaseCancellable { observer.cancel() }
    }

    /// One element per committed transaction that modified the region, as an
    /// asynchronous sequence. The observation starts when iteration starts
    /// and stops when the loop ends or its task is cancelled. Elements are
    /// buffered without limit: none is lost. The sequence throws when the
    /// region cannot be computed, and when the database file is deleted or
    /// replaced under the connections (`SQLITE_READONLY_DBMOVED`).
    public func changes(in writer: some DatabaseWriter) -> AsyncDatabaseRegionChanges {
        let host = writer.observationHost
        let regions = self.regions
        return AsyncDatabaseRegionChanges { continuation in
            let observer = RegionObserver(
                host: host, regions: regions, onError: { continuation.finish(throwing: $0) },
                onChange: { _ in continuation.yield() })
            host.writer.asyncAccess({ db in
                let region = try db.observedRegion(of: regions)
                // Cancelled before it started: stay out of the broker.
                guard observer.gate.isOpen else { return }
                try host.observationWillStart(db)
                observer.observerID = db.observationBroker.register(observer, region: region)
            }, completion: { result in
                if case .failure(let error) = result { continuation.finish(throwing: error) }
            })
            return AnyDatabaseCancellable { observer.cancel() }
        }
    }
}
