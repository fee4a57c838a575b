import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
    /// main thread; and ignores SIGPIPE (a closed output is seen as `EPIPE`).
    ///
    /// A signal handler that only writes the signal's number to a pipe,
    /// and a thread of its own that reads the pipe and exits: the exit runs
    /// as ordinary code, not inside the handler, and on no queue that a
    /// stuck thread could hold. The handler is in place when this returns,
    /// whichever thread the kernel picks for the signal.
    ///
    /// Not dispatch signal sources: on Linux they set the signal's action
    /// on the manager thread after `resume()` returns, and a signal that
    /// came between the two was ignored, so the tool, told to stop just
    /// after it started, watched on (once in 300 early `SIGTERM`s).
    static func handleTerminationSignals() {
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // No descriptor left: the signals keep their default action,
            // which ends the process too, without the clean-ups.
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The handler must never block: a full pipe already holds a signal.
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        SignalPipe.writeEnd = ends[1]
        let readEnd = ends[0]
        let signalNumbers = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
        var action = sigaction()
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = SignalPipe.forward
        #else
        action.__sigaction_u.__sa_handler = SignalPipe.forward
        #endif
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        for signalNumber in signalNumbers {
            sigaction(signalNumber, &action, nil)
        }
        // A parent may start the tool with these signals blocked (a
        // process spawned from a dispatch worker thread inherits its mask,
        // which blocks nearly all): blocked, they would wait forever. The
        // reader thread inherits the unblocked mask, so at least one thread
        // always takes them (dispatch's threads block them).
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for signalNumber in signalNumbers { sigaddset(&unblocked, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        let reader = Thread {
            while true {
                var number: UInt8 = 0
                let count = read(readEnd, &number, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return }
                if Int32(number) == SIGQUIT { endAsSignal(SIGQUIT) }
                exit(.success)
            }
        }
        reader.name = "sqlite-watch.signals"
        reader.start()
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

/// The write end of the pipe that carries signals from the handler to the
/// thread that acts on them.
private enum SignalPipe {
    /// `nonisolated(unsafe)`: written once by `handleTerminationSignals()`
    /// before the handler that reads it is installed, never written again.
    nonisolated(unsafe) static var writeEnd: Int32 = -1

    /// The signal handler: async-signal-safe, it writes one byte and keeps
    /// `errno` as it found it.
    static let forward: @convention(c) (Int32) -> Void = { signalNumber in
        let savedErrno = errno
        var number = UInt8(truncatingIfNeeded: signalNumber)
        _ = write(writeEnd, &number, 1)
        errno = savedErrno
    }
}
