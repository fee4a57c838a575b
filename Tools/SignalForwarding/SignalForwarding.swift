#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Hands signals to ordinary code: the command-line tools' way to end
/// cleanly on SIGINT, SIGTERM and the like.
///
/// The handler only writes the signal's number to a pipe; a thread of its
/// own reads the pipe and calls the tool's closure, as ordinary code (not
/// inside the handler, and on no queue that a stuck thread could hold).
///
/// Not dispatch signal sources: on Linux they set the signal's action on
/// the manager thread after `resume()` returns, and a signal that came in
/// between was ignored (a tool told to stop just after it started went on,
/// once in 300 early SIGTERMs). Not a blocked mask and `sigwait` either:
/// the mask would hold for the calling thread only, and the default action
/// on the threads that Swift concurrency started before would end the
/// process.
public enum SignalForwarding {
    /// Installs the handler for `signals`, unblocks them on the calling
    /// thread (a parent may start the tool with them blocked: a process
    /// spawned from a dispatch worker inherits its mask), and starts the
    /// thread that calls `onSignal` with each signal's number, one at a
    /// time, in the order they came.
    ///
    /// The handler is in place when this returns, whichever thread the
    /// kernel picks for the signal. Call it once per process.
    ///
    /// - Returns: false when no pipe could be made (no descriptor left):
    ///   the signals then keep their default action, which ends the
    ///   process without the tool's clean-ups.
    @discardableResult
    public static func start(signals: [Int32], _ onSignal: @escaping @Sendable (Int32) -> Void) -> Bool {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The handler must never block: a full pipe already holds a signal.
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        writeEnd = ends[1]
        let readEnd = ends[0]
        var action = sigaction()
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = forward
        #else
        action.__sigaction_u.__sa_handler = forward
        #endif
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in signals {
            sigaction(number, &action, nil)
            sigaddset(&unblocked, number)
        }
        // The reader thread inherits the unblocked mask, so at least one
        // thread always takes the signals (dispatch's threads block them).
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        let reader = Thread {
            while true {
                var number: UInt8 = 0
                let count = read(readEnd, &number, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return }
                onSignal(Int32(number))
            }
        }
        reader.name = "signals"
        reader.start()
        return true
    }

    /// The write end of the pipe.
    ///
    /// `nonisolated(unsafe)`: written once by `start`, before the handler
    /// that reads it is installed, never written again.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// The signal handler: async-signal-safe, it writes one byte and keeps
    /// `errno` as it found it.
    private static let forward: @convention(c) (Int32) -> Void = { number in
        let savedErrno = errno
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(writeEnd, &byte, 1)
        errno = savedErrno
    }
}
