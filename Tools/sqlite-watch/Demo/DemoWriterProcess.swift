import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The child process that runs the demo's writer: this same executable,
/// with the hidden `--demo-writer PATH` option, its standard input and
/// output on `/dev/null`.
///
/// `@unchecked Sendable`: `isStopping` is behind its mutex; `processIdentifier`
/// is set once in `init`; `exited` is a semaphore.
final class DemoWriterProcess: @unchecked Sendable {
    let processIdentifier: pid_t
    private let isStopping = Mutex(false)
    /// Signalled once the child is reaped.
    private let exited = DispatchSemaphore(value: 0)

    /// Launches the writer. If it stops on its own, the demo ends with
    /// status 1 (there would be nothing more to watch).
    ///
    /// - Throws: A `WatchError` when the process cannot be started.
    init(databasePath: String) throws {
        let executable = Self.currentExecutable
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        let strings: [String] = [executable, "--demo-writer", databasePath]
        let arguments: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        let environment: [UnsafeMutablePointer<CChar>?] =
            ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for string in arguments + environment { free(string) } }
        var identifier: pid_t = 0
        let code = posix_spawnp(&identifier, executable, &actions, nil, arguments, environment)
        guard code == 0 else {
            throw WatchError(
                status: .databaseError,
                message: "cannot start the demo's writer process: \(String(cString: strerror(code)))")
        }
        processIdentifier = identifier
        DispatchQueue.global().async { [self] in reap() }
    }

    /// Waits for the child to exit; ends the demo if nothing stopped it.
    private func reap() {
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0, errno == EINTR {}
        exited.signal()
        guard !isStopping.withLock({ $0 }) else { return }
        let message = "the demo's writer process stopped (status \(status))"
        DispatchQueue.main.async {
            MainActor.assumeIsolated { () -> Void in
                Lifecycle.fail(WatchError(status: .databaseError, message: message))
            }
        }
    }

    /// Kills the writer and waits for it to exit.
    ///
    /// SIGKILL, because the writer has nothing to clean up (an interrupted
    /// transaction rolls back by itself), and because a process spawned
    /// from a thread that blocks signals (such as a dispatch worker thread)
    /// starts with them blocked, SIGTERM included.
    func stop() {
        let wasStopping = isStopping.withLock { stopping in
            defer { stopping = true }
            return stopping
        }
        guard !wasStopping else { return }
        kill(processIdentifier, SIGKILL)
        exited.wait()
    }

    /// The running executable: `/proc/self/exe` on Linux, whatever name it
    /// was started by; elsewhere the name it was started by.
    private static var currentExecutable: String {
        #if os(Linux)
        return "/proc/self/exe"
        #else
        return CommandLine.arguments[0]
        #endif
    }
}
