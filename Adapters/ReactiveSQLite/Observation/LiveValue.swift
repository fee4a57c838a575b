import Observation

/// The latest value of a `ValueObservation`, as an `@Observable` object of
/// the main actor: what a SwiftUI view holds in `@State`, and a view model
/// holds as many of as it shows.
///
/// ```swift
/// struct PlayerList: View {
///     @State var players = LiveValue(
///         ValueObservation.tracking { try Player.order(sql: "score DESC").fetchAll($0) },
///         in: dbQueue, initialValue: [])
///
///     var body: some View {
///         List(players.value) { PlayerRow(player: $0) }
///             .onAppear { players.isPaused = false }
///             .onDisappear { players.isPaused = true }
///     }
/// }
/// ```
///
/// Guarantees:
/// - The observation starts when the object is made; `value` is
///   `initialValue` until its first value, `isLoading` true until then.
/// - `value` is set once per delivered value, on the main actor, in commit
///   order (`withObservationTracking` sees one change per value; apply
///   `removeDuplicates()` to the observation to skip equal ones).
/// - While `isPaused`, nothing is fetched nor delivered: the observation is
///   stopped and holds no connection work. Resuming fetches the current
///   state once.
/// - An error (a dropped table) sets `error` and keeps the last `value`;
///   the observation is then over until it is paused and resumed, which
///   starts it again (and clears `error` with its first value).
/// - Releasing the object stops the observation.
@MainActor
@Observable
public final class LiveValue<Value: Sendable> {
    /// The latest value: `initialValue` until the first one is fetched.
    public private(set) var value: Value

    /// True until the observation delivers its first value (and again
    /// after resuming, until the value of the current state comes).
    public private(set) var isLoading = true

    /// The error that ended the observation, if any. The value keeps the
    /// last one delivered before it.
    public private(set) var error: (any Error)?

    /// Whether the observation is stopped. Setting true stops it at once
    /// (no value is delivered after); setting false starts it again, and
    /// its first value is the current state of the database.
    public var isPaused: Bool {
        get { paused }
        set {
            guard newValue != paused else { return }
            paused = newValue
            if newValue {
                subscription.stop()
            } else {
                isLoading = true
                startObservation()
            }
        }
    }

    private var paused = false
    @ObservationIgnored private let observation: ValueObservation<Value>
    @ObservationIgnored private let reader: any DatabaseReader
    /// Not isolated, so that `deinit` can stop the observation.
    @ObservationIgnored private let subscription = LiveValueSubscription()

    /// Starts observing at once.
    ///
    /// - Parameters:
    ///   - observation: The observed value.
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - initialValue: The value until the first one is fetched.
    public init(_ observation: ValueObservation<Value>, in reader: some DatabaseReader, initialValue: Value) {
        self.observation = observation
        self.reader = reader
        self.value = initialValue
        startObservation()
    }

    deinit {
        subscription.stop()
    }

    private func startObservation() {
        // Registered and fetched in the writer's next access: the main
        // actor never waits for a write under way.
        let cancellable = observation.startOnMainActor(in: reader, waitingForWriter: false) { [weak self] error in
            self?.error = error
            self?.isLoading = false
        } onChange: { [weak self] value in
            guard let self else { return }
            self.value = value
            if isLoading { isLoading = false }
            if error != nil { error = nil }
        }
        subscription.replace(with: cancellable)
    }
}

/// The cancellable of a `LiveValue`'s current observation, reachable from
/// its non-isolated `deinit`.
private final class LiveValueSubscription: Sendable {
    private let cancellable = LockedState<AnyDatabaseCancellable?>(nil)

    func replace(with new: AnyDatabaseCancellable) {
        // The previous one (none: `isPaused` stopped it) is released
        // outside the lock.
        let previous = cancellable.withLock { cancellable in
            defer { cancellable = new }
            return cancellable
        }
        previous?.cancel()
    }

    func stop() {
        // Cancelled outside the lock: it may wait for a delivery under way.
        cancellable.withLock { cancellable in
            defer { cancellable = nil }
            return cancellable
        }?.cancel()
    }
}
