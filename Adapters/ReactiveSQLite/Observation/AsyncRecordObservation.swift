import Dispatch

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
