/// The changes of a `DatabaseRegionObservation` as an asynchronous sequence:
/// one element per committed transaction that modified the region. None is
/// dropped when the consumer is slow.
public struct AsyncDatabaseRegionChanges: AsyncSequence, Sendable {
    /// One committed transaction; carries no `Database`.
    public typealias Element = Void
    /// The stream of changes (the one stream machinery of the package's
    /// asynchronous sequences), with an unbounded buffer.
    let base: AsyncValueObservation<Void>

    init(start: @escaping @Sendable (AsyncValueObservation<Void>.Continuation) -> AnyDatabaseCancellable) {
        base = AsyncValueObservation(bufferingPolicy: .unbounded, start: start)
    }

    /// Starts the observation.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Iterates the changes; releasing it stops the observation.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncValueObservation<Void>.Iterator

        /// The next change, or nil after the observation was cancelled.
        ///
        /// - Throws: The observation's error.
        public mutating func next() async throws -> Void? {
            try await base.next()
        }
    }
}
