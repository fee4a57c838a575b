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
/// On a table whose primary key is the rowid, only changes of that row
/// notify. When the row does not exist at start, the observation finishes at
/// once, with no value.
///
/// With `Configuration.observesExternalChanges`, each commit detected from
/// another connection or process fetches the record again: it is emitted
/// when its row changed, and the observation finishes when it was deleted.
public struct RecordObservation<Record: FetchableRecord & TableRecord & Sendable>: Sendable {
    let key: DatabaseValue

    /// Observes the record whose primary key is `key`.
    public init(key: some DatabaseValueConvertible) {
        self.key = key.databaseValue
    }

    /// The underlying observation: the record or nil, duplicates (equal raw
    /// rows) removed.
    var observation: ValueObservation<Record?> {
        ValueObservation.trackingOne(Record.filter(key: key), removeDuplicates: true)
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

/// The values of a `RecordObservation` as an asynchronous sequence, which
/// ends when the record is deleted.
public struct AsyncRecordObservation<Record: Sendable>: AsyncSequence, Sendable {
    let base: AsyncValueObservation<Record?>

    /// Starts the observation.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Iterates the record's values; releasing it stops the observation.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncValueObservation<Record?>.Iterator
        var isFinished = false

        /// The next value of the record, or nil once it is deleted.
        ///
        /// - Throws: The observation's error.
        public mutating func next() async throws -> Record? {
            guard !isFinished else { return nil }
            guard let element = try await base.next(), let record = element else {
                isFinished = true
                base.cancellable.cancel()
                return nil
            }
            return record
        }
    }
}

/// Holds a cancellable that a callback may need before `start` returns it.
///
/// It holds the cancellable weakly: the callback that uses it is owned by
/// the observation, and a strong reference would keep the observation
/// running after its user dropped the last reference to the cancellable.
final class CancellableHolder: Sendable {
    private struct State {
        weak var cancellable: AnyDatabaseCancellable?
        var isCancelled = false
    }
    private let state = ObservationLock(State())

    func set(_ cancellable: AnyDatabaseCancellable) {
        let cancelNow = state.withLock { state -> Bool in
            state.cancellable = cancellable
            return state.isCancelled
        }
        if cancelNow { cancellable.cancel() }
    }

    func cancel() {
        let cancellable = state.withLock { state -> AnyDatabaseCancellable? in
            state.isCancelled = true
            return state.cancellable
        }
        cancellable?.cancel()
    }
}
