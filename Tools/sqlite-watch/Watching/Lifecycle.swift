import SQLiteWatchKit
import Dispatch
import Foundation

/// How the process ends: every exit goes through `exit(_:)`, which runs the
/// registered clean-ups (the demo's writer process and temporary files)
/// before exiting.
///
/// Everything here runs on the main queue, the queue of the whole tool:
/// observation values, timers and signals are all delivered there.
@MainActor
enum Lifecycle {
    private static var cleanups: [@MainActor () -> Void] = []
    /// Kept alive for as long as the process runs.
    private static var signalSources: [any DispatchSourceSignal] = []

    /// Registers work to do before exiting; the last registered runs first.
    static func addCleanup(_ cleanup: @escaping @MainActor () -> Void) {
        cleanups.append(cleanup)
    }

    /// Runs the clean-ups and exits with `status`.
    static func exit(_ status: ExitStatus) -> Never {
        let pending = cleanups.reversed()
        cleanups = []
        for cleanup in pending { cleanup() }
        Foundation.exit(status.rawValue)
    }

    /// Prints the error on standard error and exits with its status.
    static func fail(_ error: WatchError) -> Never {
        StandardStreams.error(error.message)
        exit(error.status)
    }

    /// Makes Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) end
    /// the process cleanly, with status 0, and ignores SIGPIPE (a closed
    /// output is seen as `EPIPE`).
    ///
    /// The signals are ignored as signals, and delivered as events on the
    /// main queue by dispatch sources: the exit runs as ordinary code, not
    /// inside a signal handler.
    static func handleTerminationSignals() {
        signal(SIGPIPE, SIG_IGN)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler {
                MainActor.assumeIsolated { () -> Void in Lifecycle.exit(.success) }
            }
            source.resume()
            signalSources.append(source)
        }
    }
}
