import Foundation
import SQLiteWatchKit
import Synchronization

/// The child process that runs the demo's writer: this same executable,
/// with the hidden `--demo-writer PATH` option.
///
/// `@unchecked Sendable`: `isStopping` is behind its mutex; `process` is
/// only launched in `init`, then read (its identifier) or signalled and
/// awaited, from the one thread that exits (see `Lifecycle`).
final class DemoWriterProcess: @unchecked Sendable {
    private let process = Process()
    private let isStopping = Mutex(false)

    /// Launches the writer. If it stops on its own, the demo ends with
    /// status 1 (there would be nothing more to watch).
    init(databasePath: String) throws {
        process.executableURL = Self.currentExecutable
        process.arguments = ["--demo-writer", databasePath]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.terminationHandler = { [weak self] process in
            let status = process.terminationStatus
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    guard let self, !self.isStopping.withLock({ $0 }) else { return }
                    Lifecycle.fail(WatchError(
                        status: .databaseError, message: "the demo's writer process stopped (status \(status))"))
                }
            }
        }
        try process.run()
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// Kills the writer and waits for it to exit.
    ///
    /// SIGKILL, because the writer has nothing to clean up (an interrupted
    /// transaction rolls back by itself), and because a process spawned
    /// from a thread that blocks signals (such as a dispatch worker thread)
    /// starts with them blocked, SIGTERM included.
    func stop() {
        isStopping.withLock { $0 = true }
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The running executable: `/proc/self/exe` on Linux, whatever name it
    /// was started by.
    private static var currentExecutable: URL {
        #if os(Linux)
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
    }
}
