import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SignalForwarding
import Synchronization

/// How the process ends: every exit goes through `exit(_:)`, which runs the
/// registered clean-ups (the demo's writer process and temporary files)
/// once, before exiting.
///
/// Nothing here needs the main queue: a signal must end the process even
/// when the main thread is stuck (in a write to a pipe nobody reads, in the
/// wait for a lock, in SQLite's busy handler).
enum Lifecycle {
    private struct State {
        var cleanups: [@Sendable () -> Void] = []
        var isExiting = false
    }

    private static let state = Mutex(State())
    /// Registers work to do before exiting; the last registered runs first.
    static func addCleanup(_ cleanup: @escaping @Sendable () -> Void) {
        state.withLock { $0.cleanups.append(cleanup) }
    }

    /// Runs the clean-ups and exits with `status`. When another thread is
    /// exiting already, waits for it to end the process.
    static func exit(_ status: ExitStatus) -> Never {
        runCleanupsOnce()
        // `_exit`: no atexit handler or static destructor races the threads
        // that still run (the output is written unbuffered, nothing to flush).
        _exit(status.rawValue)
    }

    /// Prints the error on standard error and exits with its status.
    static func fail(_ error: WatchError) -> Never {
        StandardStreams.error(error.message)
        exit(error.status)
    }

    /// Ends the tool for an error met while watching or serving `sql`: the
    /// file monitor's failure first (a deleted or replaced file explains
    /// any error that follows), then a `WatchError` as it is, anything
    /// else as a failure of the watch.
    @MainActor
    static func fail(_ error: any Error, watching sql: String, monitor: DatabaseFileMonitor?) -> Never {
        if let failure = monitor?.failure { fail(failure) }
        if let error = error as? WatchError { fail(error) }
        fail(.watchFailed(sql, error))
    }

    /// Makes Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) end
    /// the process with status 0, SIGQUIT (Ctrl-\\) end it as the signal
    /// does by default, each after the clean-ups and in any state of the
    /// main thread (`SignalForwarding`: the exit runs on a thread of its
    /// own); and ignores SIGPIPE (a closed output is seen as `EPIPE`).
    static func handleTerminationSignals() {
        signal(SIGPIPE, SIG_IGN)
        SignalForwarding.start(signals: [SIGINT, SIGTERM, SIGHUP, SIGQUIT]) { signalNumber in
            if signalNumber == SIGQUIT { endAsSignal(SIGQUIT) }
            exit(.success)
        }
    }

    /// Runs the clean-ups, then ends the process by `signalNumber` with its
    /// default action (for SIGQUIT, the status a shell shows as 131).
    private static func endAsSignal(_ signalNumber: Int32) -> Never {
        runCleanupsOnce()
        signal(signalNumber, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(signalNumber)
        _exit(128 + signalNumber)
    }

    private static func runCleanupsOnce() {
        let pending = state.withLock { state -> [@Sendable () -> Void]? in
            guard !state.isExiting else { return nil }
            state.isExiting = true
            defer { state.cleanups = [] }
            return state.cleanups.reversed()
        }
        guard let pending else {
            // Another thread runs the clean-ups and exits.
            while true { pause() }
        }
        for cleanup in pending { cleanup() }
    }
}
