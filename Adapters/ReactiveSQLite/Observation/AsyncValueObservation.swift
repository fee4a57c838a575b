import Dispatch
import DatabaseRegions

/// The values of a `ValueObservation` as an asynchronous sequence. See
/// `ValueObservation.values(in:bufferingPolicy:)`.
public struct AsyncValueObservation<Element: Sendable>: AsyncSequence, Sendable {
    typealias Continuation = AsyncThrowingStream<Element, any Error>.Continuation
    let bufferingPolicy: Continuation.BufferingPolicy
    let start: @Sendable (Continuation) -> AnyDatabaseCancellable

    init(
        bufferingPolicy: Continuation.BufferingPolicy,
        start: @escaping @Sendable (Continuation) -> AnyDatabaseCancellable
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.start = start
    }

    /// Starts the observation.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let cancellable = start(continuation)
        continuation.onTermination = { _ in cancellable.cancel() }
        return Iterator(base: stream.makeAsyncIterator(), cancellable: cancellable)
    }

    /// Iterates the values; releasing it stops the observation.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator
        let cancellable: AnyDatabaseCancellable

        /// The next value, or nil after the observation was cancelled.
        ///
        /// - Throws: The observation's error.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }
}
