import Dispatch

/// An observation of one record, identified by its primary key: it emits the
/// record when it starts and after each transaction that changed its row,
/// and finishes when the row is deleted.
///
/// ```swift
/// let cancellable = RecordObservation<Player>(key: 1).start(in: dbQueue) { error in
///     print(error)
/// } onDeletion: {
///     print("deleted")
/// } onChange: { player in
///     print(player)
/// }
/// ```
///
/// A record that encodes itself observes its own row, whatever its primary
/// key (single, compound, text):
///
/// ```swift
/// let cancellable = RecordObservation(record: player).start(in: dbQueue) { ... }
/// ```
///
/// On a table whose primary key is the rowid, only changes of that row
/// notify. When the row does not exist at start, the observation finishes at
/// once, with no value.
///
/// With `Configuration.observesExternalChanges`, each commit detected from
/// another connection or process fetches the record again: it is emitted
/// when its row changed, and the observation finishes when it was deleted.
public struct RecordObservation<Record: FetchableRecord & TableRecord & Sendable>: Sendable {
    /// The request of the record's row.
    let request: QueryInterfaceRequest<Record>

    /// Observes the record whose primary key is `key`: a single column key,
    /// or the rowid when the table declares no primary key.
    public init(key: some DatabaseValueConvertible) {
        request = Record.filter(key: key)
    }

    /// Observes the row of `record`: the row of its primary key, read from
    /// the table's schema when the observation starts, and from the values
    /// the record encodes (its key columns, or `rowid` for a table without
    /// primary key). The observation of RxGRDB's `Observable.from(record:)`.
    ///
    /// ```swift
    /// var player = try Player.filter(key: 1).fetchOne(db)!
    /// let cancellable = RecordObservation(record: player).start(in: dbQueue) {
    ///     print($0)
    /// } onDeletion: {
    ///     print("deleted")
    /// } onChange: { player in
    ///     print("fresh value: \(player)")
    /// }
    /// ```
    ///
    /// The record is encoded now: its later changes do not move the
    /// observation. An encoding error, or a record that does not encode
    /// its key, reaches `onError` when the observation starts.
    ///
    /// - Complexity: O(c) to encode the record, where c is its number of columns.
    public init(record: Record) where Record: EncodableRecord {
        let encoding = Result { () throws -> PersistenceContainer in
            var container = PersistenceContainer()
            try record.encode(to: &container)
            container.deduplicateColumns()
            return container
        }
        var request = Record.all()
        request.filters.append(.recordKey(encoding))
        self.request = request
    }

    /// The underlying observation: the record or nil, duplicates (equal raw
    /// rows) removed.
    var observation: ValueObservation<Record?> {
        ValueObservation.trackingOne(request, removeDuplicates: true)
    }

    /// Starts the observation.
    ///
    /// - Parameters:
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - scheduler: Where values are delivered. Default: asynchronously on the main queue.
    ///   - onError: Called once with the first error; the observation ends.
    ///   - onDeletion: Called once when the row is deleted (or does not exist
    ///     at start); the observation ends.
    ///   - onChange: Called with the record, at start and after each change.
    public func start(
        in reader: some DatabaseReader,
        scheduling scheduler: ValueObservationScheduler = .async(onQueue: .main),
        onError: @escaping @Sendable (any Error) -> Void,
        onDeletion: @escaping @Sendable () -> Void,
        onChange: @escaping @Sendable (Record) -> Void
    ) -> AnyDatabaseCancellable {
        let holder = CancellableHolder()
        let cancellable = observation.start(in: reader, scheduling: scheduler, onError: onError) { record in
            if let record {
                onChange(record)
            } else {
                holder.cancel()
                onDeletion()
            }
        }
        holder.set(cancellable)
        return cancellable
    }

    /// The record's values as an asynchronous sequence, which ends when the
    /// row is deleted (at once, with no element, when it does not exist).
    public func values(in reader: some DatabaseReader) -> AsyncRecordObservation<Record> {
        AsyncRecordObservation(base: observation.values(in: reader))
    }
}
