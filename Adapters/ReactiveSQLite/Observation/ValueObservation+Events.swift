import DatabaseRegions

/// The closures of `handleEvents` that do not depend on the value: kept by
/// a `ValueObservation` through its operators, and called by each run
/// (`ValueObserver`). Several `handleEvents` calls add up: each closure is
/// called, in the order of the calls.
struct ObservationEvents: Sendable {
    var willStart: [@Sendable () -> Void] = []
    var willFetch: [@Sendable () -> Void] = []
    var willTrackRegion: [@Sendable (DatabaseRegion) -> Void] = []
    var databaseDidChange: [@Sendable () -> Void] = []
    var didFail: [@Sendable (any Error) -> Void] = []
    var didCancel: [@Sendable () -> Void] = []

    mutating func append(_ other: ObservationEvents) {
        willStart += other.willStart
        willFetch += other.willFetch
        willTrackRegion += other.willTrackRegion
        databaseDidChange += other.databaseDidChange
        didFail += other.didFail
        didCancel += other.didCancel
    }
}

extension ValueObservation {
    /// Calls the given closures at each event of each run of the
    /// observation, for debugging and for instrumenting an app.
    ///
    /// - Parameters:
    ///   - willStart: When a run starts, before its first fetch.
    ///   - willFetch: Before each fetch: the first one, and each one a
    ///     commit makes due (an incremental refetch of a difference or
    ///     top-rows observation included). Commits that coalesce into one
    ///     fetch (a burst, a throttle) call it once.
    ///   - willTrackRegion: With the region the run observes, when it is
    ///     known (at start) and whenever it changes (a recorded region, a
    ///     schema change that redefines a view).
    ///   - databaseDidChange: After each commit that changed the observed
    ///     region. With `Configuration.observesExternalChanges`, after each
    ///     commit of another connection or process too, whatever it
    ///     changed: what it wrote is unknown.
    ///   - didReceiveValue: With each value this point of the observation
    ///     produces: before the operators that follow the call
    ///     (`removeDuplicates()` after it may skip a value this sees).
    ///   - didFail: With the error that ends the run.
    ///   - didCancel: When the run is cancelled, before it stops. A run
    ///     tells one end: `didFail` or `didCancel`, whichever comes first.
    ///
    /// The closures run on the thread of the event: the writer's, a
    /// reader's, the observation's queue. They must not access the
    /// database nor block.
    public func handleEvents(
        willStart: (@Sendable () -> Void)? = nil,
        willFetch: (@Sendable () -> Void)? = nil,
        willTrackRegion: (@Sendable (DatabaseRegion) -> Void)? = nil,
        databaseDidChange: (@Sendable () -> Void)? = nil,
        didReceiveValue: (@Sendable (Value) -> Void)? = nil,
        didFail: (@Sendable (any Error) -> Void)? = nil,
        didCancel: (@Sendable () -> Void)? = nil
    ) -> Self {
        var added = ObservationEvents()
        if let willStart { added.willStart.append(willStart) }
        if let willFetch { added.willFetch.append(willFetch) }
        if let willTrackRegion { added.willTrackRegion.append(willTrackRegion) }
        if let databaseDidChange { added.databaseDidChange.append(databaseDidChange) }
        if let didFail { added.didFail.append(didFail) }
        if let didCancel { added.didCancel.append(didCancel) }
        var observation = self
        if let didReceiveValue {
            let makeReducer = self.makeReducer
            // The closure is the user's: the first value is not reduced
            // inside the writer's access (see `reducesFirstValueOnWriter`),
            // except with `.immediate`, which reduces it there.
            observation = replacingReducer {
                let reduce = makeReducer()
                return { fetched in
                    guard let value = try reduce(fetched) else { return nil }
                    didReceiveValue(value)
                    return value
                }
            }
        }
        observation.events.append(added)
        return observation
    }

    /// Prints each event of each run of the observation (see
    /// `handleEvents(willStart:willFetch:willTrackRegion:databaseDidChange:didReceiveValue:didFail:didCancel:)`),
    /// one line per event, prefixed with `prefix`:
    ///
    /// ```
    /// players: start
    /// players: fetch
    /// players: region player(id,name,score)
    /// players: value [Player(id: 1, ...)]
    /// players: database changed
    /// players: fetch
    /// ```
    ///
    /// - Parameters:
    ///   - prefix: Starts each line, followed by a colon, when not empty.
    ///   - stream: Where lines go; standard output when nil. It is written
    ///     from the threads of the events, one line at a time, behind a
    ///     lock of the observation's: its `write` must not start or cancel
    ///     an observation.
    public func print(
        _ prefix: String = "",
        to stream: (any TextOutputStream & Sendable)? = nil
    ) -> Self {
        let printer = EventPrinter(prefix: prefix, stream: stream)
        return handleEvents(
            willStart: { printer.print("start") },
            willFetch: { printer.print("fetch") },
            willTrackRegion: { printer.print("region \($0)") },
            databaseDidChange: { printer.print("database changed") },
            didReceiveValue: { printer.print("value \($0)") },
            didFail: { printer.print("error \($0)") },
            didCancel: { printer.print("cancel") })
    }
}

/// Writes the lines of `ValueObservation.print(_:to:)`, one at a time.
///
/// `@unchecked Sendable`: `stream` is only used while `lock` is held. The
/// lock serializes the lines; it is the printer's own, held only while a
/// line is written (user code, which takes no lock of the library's).
private final class EventPrinter: @unchecked Sendable {
    private let prefix: String
    private let lock = ThreadCondition()
    /// nil: standard output.
    private var stream: (any TextOutputStream & Sendable)?

    init(prefix: String, stream: (any TextOutputStream & Sendable)?) {
        self.prefix = prefix.isEmpty ? "" : prefix + ": "
        self.stream = stream
    }

    func print(_ event: String) {
        let line = prefix + event
        lock.lock()
        defer { lock.unlock() }
        if stream == nil {
            Swift.print(line)
        } else {
            stream!.write(line + "\n")
        }
    }
}
