#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation
import ReactiveSQLite

/// The subscription of the publishers of values (`DatabasePublishers.Value`
/// and `DatabasePublishers.Record`): it runs one observation for one
/// subscriber, and honours the subscriber's demand.
///
/// - The observation starts when the publisher receives the subscriber,
///   right after the subscriber received the subscription (so that a
///   subscriber that requests demand there gets the first value of an
///   `.immediate` observation during `subscribe`). It stops on `cancel()`
///   and on completion.
/// - With demand outstanding, a value is delivered when the observation
///   delivers it, on its scheduler's queue. Without demand, the newest value
///   is kept (it replaces an older kept one: one value at most, never an
///   unbounded buffer), and delivered once demand comes, on the scheduler's
///   queue too (see `ValueObservationScheduler.runOnDeliveryQueue(_:)`):
///   synchronously by the `request(_:)` call that brings demand when it is
///   made there, else asynchronously. The last state is never lost.
/// - A completion (failure, or the end of a record) needs no demand. A
///   value kept for lack of demand is delivered first when demand allows,
///   else dropped: the completion is newer.
/// - Deliveries never overlap, and are in the order of the observation.
/// - After `cancel()` returns, no delivery starts, and none is running,
///   unless `cancel()` was called from inside that delivery. `cancel()` may
///   be called any number of times, from any thread.
/// - The observation holds the subscription weakly: no retain cycle. The
///   subscriber and the subscription hold each other until cancellation
///   or completion, as Combine expects.
///
/// `@unchecked Sendable`: `state` is only read and written while holding
/// `condition`; the downstream subscriber is only called by one thread at a
/// time (the thread that marked itself `deliveringThread`).
final class ObservationSubscription<Downstream: Subscriber & SendableMetatype>: Subscription, @unchecked Sendable
where Downstream.Failure == any Error, Downstream.Input: Sendable {
    typealias Value = Downstream.Input

    /// The callbacks through which an observation feeds the subscription.
    struct Events: Sendable {
        /// Delivers a value.
        var value: @Sendable (Value) -> Void
        /// Ends the publisher successfully.
        var finish: @Sendable () -> Void
        /// Ends the publisher with an error.
        var fail: @Sendable (any Error) -> Void
    }

    private struct State {
        /// Nil once cancelled or completed.
        var downstream: Downstream?
        var demand: Subscribers.Demand = .none
        /// The newest value not delivered for lack of demand.
        var pendingValue: Value?
        /// A completion not delivered yet.
        var pendingCompletion: Subscribers.Completion<any Error>?
        /// The thread that calls the downstream subscriber, if any.
        var deliveringThread: pthread_t?
        /// Stops the observation; nil until it started, and once stopped.
        var cancellable: AnyDatabaseCancellable?
    }

    private let condition = NSCondition()
    private var state: State
    /// Where values are delivered, a kept value included.
    private let scheduler: ValueObservationScheduler

    init(downstream: Downstream, scheduler: ValueObservationScheduler) {
        state = State(downstream: downstream)
        self.scheduler = scheduler
    }

    /// Starts the observation with `start`, unless the subscription was
    /// cancelled already.
    func start(_ start: (Events) -> AnyDatabaseCancellable) {
        guard isActive else { return }
        let events = Events(
            value: { [weak self] value in self?.receive(value) },
            finish: { [weak self] in self?.receive(.finished) },
            fail: { [weak self] error in self?.receive(.failure(error)) })
        let cancellable = start(events)
        condition.lock()
        guard state.downstream != nil else {
            // Cancelled or completed meanwhile.
            condition.unlock()
            cancellable.cancel()
            return
        }
        state.cancellable = cancellable
        condition.unlock()
    }

    private var isActive: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.downstream != nil
    }

    // MARK: - Subscription

    /// Adds demand; delivers the kept value, if any, on the scheduler's
    /// queue. A demand of `.none` does nothing.
    func request(_ demand: Subscribers.Demand) {
        condition.lock()
        guard state.downstream != nil else {
            condition.unlock()
            return
        }
        state.demand += demand
        // A delivery under way (this one, re-entered, or one on the
        // scheduler's queue) picks up the new demand.
        guard state.pendingValue != nil, state.demand > 0, state.deliveringThread == nil else {
            condition.unlock()
            return
        }
        condition.unlock()
        scheduler.runOnDeliveryQueue { [weak self] in self?.deliverPendingValue() }
    }

    /// Delivers the kept value, if demand still allows.
    private func deliverPendingValue() {
        condition.lock()
        drainAndUnlock()
    }

    /// Stops the observation. See the type's guarantees.
    func cancel() {
        condition.lock()
        // What the subscription held is released once the lock is released:
        // a deinit may run user code.
        let released = (state.downstream, state.pendingValue)
        state.downstream = nil
        state.pendingValue = nil
        state.pendingCompletion = nil
        let cancellable = state.cancellable
        state.cancellable = nil
        waitForDeliveryOnOtherThread()
        condition.unlock()
        cancellable?.cancel()
        withExtendedLifetime(released) {}
    }

    // MARK: - Events of the observation

    private func receive(_ value: Value) {
        condition.lock()
        guard state.downstream != nil, state.pendingCompletion == nil else {
            condition.unlock()
            return
        }
        let replaced = state.pendingValue
        state.pendingValue = value
        drainAndUnlock()
        withExtendedLifetime(replaced) {}
    }

    private func receive(_ completion: Subscribers.Completion<any Error>) {
        condition.lock()
        guard state.downstream != nil, state.pendingCompletion == nil else {
            condition.unlock()
            return
        }
        state.pendingCompletion = completion
        drainAndUnlock()
    }

    // MARK: - Delivering

    /// Delivers what demand allows, then releases the lock. Called with the
    /// lock held. When another thread delivers (or this thread, from inside
    /// a delivery), it only releases the lock: that delivery loop picks up
    /// the new state.
    private func drainAndUnlock() {
        guard state.deliveringThread == nil else {
            condition.unlock()
            return
        }
        state.deliveringThread = pthread_self()
        // Released once the lock is released: the subscriber's deinit may
        // run user code.
        var subscriber: Downstream?
        var cancellable: AnyDatabaseCancellable?
        while let downstream = state.downstream {
            subscriber = downstream
            if let value = state.pendingValue, state.demand > 0 {
                state.pendingValue = nil
                state.demand -= 1
                condition.unlock()
                let additionalDemand = downstream.receive(value)
                condition.lock()
                state.demand += additionalDemand
            } else if let completion = state.pendingCompletion {
                state.downstream = nil
                state.pendingValue = nil
                state.pendingCompletion = nil
                cancellable = state.cancellable
                state.cancellable = nil
                condition.unlock()
                downstream.receive(completion: completion)
                condition.lock()
            } else {
                break
            }
        }
        state.deliveringThread = nil
        condition.broadcast()
        condition.unlock()
        // Stops the observation after a completion.
        cancellable?.cancel()
        withExtendedLifetime(subscriber) {}
    }

    /// Waits, with the lock held, until no other thread delivers.
    private func waitForDeliveryOnOtherThread() {
        while let thread = state.deliveringThread, pthread_equal(thread, pthread_self()) == 0 {
            condition.wait()
        }
    }
}

#endif
