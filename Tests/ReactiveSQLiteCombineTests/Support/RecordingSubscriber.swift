#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
import Foundation
import ReactiveSQLite
import ReactiveSQLiteCombine
import TestSupport
import Testing
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// What a publisher sent to a subscriber.
enum PublisherEvent<Value: Sendable>: Sendable {
    case value(Value)
    case finished
    case failure(any Error)

    var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    var isCompletion: Bool { value == nil }
}

extension [PublisherEvent<Int>] {
    /// The values, in order.
    var values: [Int] { compactMap(\.value) }
}

/// A subscriber that records what it receives and checks the rules of
/// Combine as it goes: no call overlaps another, no value exceeds the demand
/// it requested, nothing arrives after completion, and nothing arrives after
/// `cancel()` returned (each violation is an `Issue`).
///
/// It requests `initialDemand` when it receives the subscription, and
/// `demandPerValue` from each value; tests request more with `request(_:)`.
/// It records what `record` makes of each input: inputs that are not
/// `Sendable` (a `Database`) are used during the delivery only.
///
/// `@unchecked Sendable`: `state` is only used while holding `lock`.
final class EventRecordingSubscriber<Input, Recorded: Sendable>: Subscriber, Cancellable, @unchecked Sendable {
    typealias Failure = any Error

    private struct State {
        var subscription: (any Subscription)?
        var subscriptionCount = 0
        /// Total requested demand; nil when unlimited.
        var granted: Int? = 0
        var received = 0
        var isReceiving = false
        var isCompleted = false
        /// `cancel()` returned: any delivery that starts is an issue.
        var isCancelled = false
        /// `cancel()` was called from inside a delivery: once it ends, any
        /// delivery is an issue.
        var isCancelledAfterDelivery = false
    }

    let events = Recorder<PublisherEvent<Recorded>>()
    /// The label of the dispatch queue of each delivery, in order.
    let deliveryQueueLabels = Locked<[String?]>([])
    private let initialDemand: Subscribers.Demand
    private let demandPerValue: Subscribers.Demand
    private let onValue: (@Sendable (Input, EventRecordingSubscriber) -> Void)?
    private let record: @Sendable (Input) -> Recorded
    private let lock = NSLock()
    private var state = State()
    private let sourceLocation: SourceLocation

    init(
        initialDemand: Subscribers.Demand = .unlimited,
        demandPerValue: Subscribers.Demand = .none,
        sourceLocation: SourceLocation = #_sourceLocation,
        record: @escaping @Sendable (Input) -> Recorded,
        onValue: (@Sendable (Input, EventRecordingSubscriber) -> Void)? = nil
    ) {
        self.initialDemand = initialDemand
        self.demandPerValue = demandPerValue
        self.sourceLocation = sourceLocation
        self.record = record
        self.onValue = onValue
    }

    private func withLock<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    private static func add(_ demand: Subscribers.Demand, to granted: inout Int?) {
        if demand == .unlimited {
            granted = nil
        } else if let current = granted, let max = demand.max {
            granted = current + max
        }
    }

    /// The values received so far.
    var values: [Recorded] { events.values.compactMap(\.value) }

    // MARK: - Subscriber

    func receive(subscription: any Subscription) {
        let isFirst = withLock { state -> Bool in
            state.subscriptionCount += 1
            state.subscription = subscription
            return state.subscriptionCount == 1
        }
        if !isFirst { Issue.record("a second subscription", sourceLocation: sourceLocation) }
        if initialDemand != .none { request(initialDemand) }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        beginDelivery(isValue: true)
        deliveryQueueLabels.withLock { $0.append(currentDispatchQueueLabel()) }
        events.append(.value(record(input)))
        onValue?(input, self)
        withLock { state in
            state.isReceiving = false
            if state.isCancelledAfterDelivery { state.isCancelled = true }
            Self.add(demandPerValue, to: &state.granted)
        }
        return demandPerValue
    }

    func receive(completion: Subscribers.Completion<any Error>) {
        beginDelivery(isValue: false)
        deliveryQueueLabels.withLock { $0.append(currentDispatchQueueLabel()) }
        switch completion {
        case .finished: events.append(.finished)
        case .failure(let error): events.append(.failure(error))
        }
        withLock { state in
            state.isReceiving = false
            state.isCompleted = true
            state.subscription = nil
        }
    }

    private func beginDelivery(isValue: Bool) {
        let problems = withLock { state -> [String] in
            var problems: [String] = []
            if state.isReceiving { problems.append("overlapping deliveries") }
            if state.isCompleted { problems.append("a delivery after completion") }
            if state.isCancelled { problems.append("a delivery after cancel() returned") }
            if isValue {
                state.received += 1
                if let granted = state.granted, state.received > granted {
                    problems.append("value \(state.received) exceeds the demand \(granted)")
                }
            }
            state.isReceiving = true
            return problems
        }
        for problem in problems { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
    }

    // MARK: - Driving the subscription

    /// Requests more values.
    func request(_ demand: Subscribers.Demand) {
        let subscription = withLock { state -> (any Subscription)? in
            Self.add(demand, to: &state.granted)
            return state.subscription
        }
        subscription?.request(demand)
    }

    /// Cancels the subscription; from then on, any delivery is an issue
    /// (unless this is called from inside a delivery, which may end).
    func cancel() {
        let subscription = withLock { $0.subscription }
        subscription?.cancel()
        withLock { state in
            if state.isReceiving {
                state.isCancelledAfterDelivery = true
            } else {
                state.isCancelled = true
            }
            state.subscription = nil
        }
    }

    /// Cancels the subscription without releasing it, to check that a
    /// second `cancel()` does nothing.
    func cancelKeepingSubscription() -> (any Subscription)? {
        let subscription = withLock { $0.subscription }
        subscription?.cancel()
        withLock { state in state.isCancelled = true }
        return subscription
    }
}

/// A subscriber that records its inputs themselves.
typealias RecordingSubscriber<Input: Sendable> = EventRecordingSubscriber<Input, Input>

extension EventRecordingSubscriber where Input == Recorded {
    /// A subscriber that records its inputs.
    convenience init(
        initialDemand: Subscribers.Demand = .unlimited,
        demandPerValue: Subscribers.Demand = .none,
        sourceLocation: SourceLocation = #_sourceLocation,
        onValue: (@Sendable (Input, EventRecordingSubscriber) -> Void)? = nil
    ) {
        self.init(
            initialDemand: initialDemand, demandPerValue: demandPerValue, sourceLocation: sourceLocation,
            record: { $0 }, onValue: onValue)
    }
}

/// A subscriber of connections, which records the number of rows of table
/// `t1` that each connection reads during its delivery.
typealias ConnectionSubscriber = EventRecordingSubscriber<Database, Int>

extension EventRecordingSubscriber where Input == Database, Recorded == Int {
    /// A subscriber of connections, which records the number of rows of `t1`.
    convenience init(
        initialDemand: Subscribers.Demand = .unlimited,
        sourceLocation: SourceLocation = #_sourceLocation,
        onValue: (@Sendable (Database, EventRecordingSubscriber) -> Void)? = nil
    ) {
        self.init(
            initialDemand: initialDemand, sourceLocation: sourceLocation,
            record: { db in (try? SQLRequest<Int>(sql: "SELECT COUNT(*) FROM t1").fetchOne(db)) ?? -1 },
            onValue: onValue)
    }
}

#endif
