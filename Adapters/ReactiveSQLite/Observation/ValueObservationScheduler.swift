import Dispatch
#if canImport(Darwin)
import Darwin
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// Where and when a `ValueObservation` delivers its values.
public struct ValueObservationScheduler: Sendable {
    enum Kind: Sendable {
        case immediate
        case async(DispatchQueue)
        case observationQueue
    }

    let kind: Kind

    /// The first value is delivered synchronously, before `start` returns;
    /// later values arrive asynchronously on the main queue.
    ///
    /// - Precondition: `start` is called from the main thread: the main
    ///   actor, or a block of the main queue (which, on Linux, a process that
    ///   called `dispatchMain()` runs on another thread).
    public static let immediate = ValueObservationScheduler(kind: .immediate)

    /// Every value is delivered asynchronously on `queue`, in order. Use a
    /// serial queue. The default scheduler is `.async(onQueue: .main)`.
    public static func async(onQueue queue: DispatchQueue) -> ValueObservationScheduler {
        ValueObservationScheduler(kind: .async(queue))
    }

    /// Every value is delivered asynchronously, in order, on a serial queue
    /// of the observation's own, off the main thread: for async contexts,
    /// where values are handed to a task (as `values(in:)` does).
    public static let observationQueue = ValueObservationScheduler(kind: .observationQueue)
}

extension ValueObservationScheduler {
    /// Marks the main queue, so that its blocks can be recognized whatever
    /// thread runs them.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the current thread is the process's first one.
    private static var isMainThread: Bool {
        #if os(Linux)
        _rsqlite_is_main_thread() != 0
        #elseif canImport(Darwin)
        pthread_main_np() != 0
        #else
        Thread.isMainThread
        #endif
    }

    /// Whether the current code runs on the main thread, or in a block of
    /// the main queue (the main actor's executor).
    static var isOnMainThread: Bool {
        isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }
}

extension ValueObservationScheduler {
    /// Runs `body` where this scheduler delivers values after the first
    /// one: synchronously when the caller is there already, else
    /// asynchronously on that queue. For adapters of this package that
    /// deliver a value of their own (the Combine publishers, which deliver
    /// a value kept for lack of demand when demand comes).
    ///
    /// - `.async(onQueue: queue)`: always asynchronously on `queue` (whether
    ///   the caller runs on `queue` cannot be told).
    /// - `.immediate`: synchronously on the main thread, else asynchronously
    ///   on the main queue.
    /// - `.observationQueue`: synchronously: its queue is the observation's own, and
    ///   promises no thread.
    package func runOnDeliveryQueue(_ body: @escaping @Sendable () -> Void) {
        switch kind {
        case .async(let queue):
            queue.async(execute: body)
        case .immediate:
            if Self.isOnMainThread {
                body()
            } else {
                DispatchQueue.main.async(execute: body)
            }
        case .observationQueue:
            body()
        }
    }
}
