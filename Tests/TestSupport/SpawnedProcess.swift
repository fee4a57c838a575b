import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, whose end is seen by a
/// thread blocked in `waitpid`.
///
/// Tests start their child processes here rather than with Foundation's
/// `Process`. On Linux, `Process` learns that a child ended when a socket
/// whose other end the child holds reaches its end of file, and it closes
/// the parent's other descriptors in the child from a list taken at each
/// start. A start on another thread between the socket's creation and the
/// spawn that closes it in the parent gives the socket's end to that other
/// child too: the first child's exit is then seen only when the second one
/// exits. In a test run, where a shell command and a 60-second watch start
/// at the same moment, the shell's exit went unseen for 30 s (2 starts in
/// 3 267 of a `true` beside a loop of `sleep 5` waited exactly 5 s).
///
/// Here every descriptor the parent makes for a child is close-on-exec, a
/// child keeps only its three standard streams (`closefrom(3)` in the
/// spawn), and the exit is `waitpid`'s: nothing another child holds can
/// hide it.
public final class SpawnedProcess: Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A new pipe; the parent's end is in `inputWriter`, `outputReader`
        /// or `errorReader`.
        case pipe
        /// This descriptor of the parent (a file, a pseudo-terminal).
        case descriptor(Int32)
    }

    /// How the process ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exit(Int32)
        case signal(Int32)

        public var description: String {
            switch self {
            case .exit(let status): "exit status \(status)"
            case .signal(let signal): "killed by signal \(signal)"
            }
        }
    }

    public let processIdentifier: pid_t
    /// The parent's end of the child's standard input, when it is a pipe:
    /// the caller writes to it and closes it.
    public let inputWriter: Int32?
    /// The parent's end of the child's standard output, when it is a pipe:
    /// the caller reads it and closes it.
    public let outputReader: Int32?
    /// The parent's end of the child's standard error, when it is a pipe.
    public let errorReader: Int32?
    private let termination = ObservedState<Termination?>(nil)

    /// Starts `executable` (a path, or a name looked up in `PATH`) with
    /// `arguments`, in a process group of its own, with an empty signal
    /// mask.
    ///
    /// - Parameters:
    ///   - environment: The child's environment; the parent's when nil.
    ///   - onExit: Called once, on the waiting thread, when the child ended.
    /// - Throws: `POSIXError` when a pipe or the spawn fails.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        standardInput: Stream = .null, standardOutput: Stream = .null, standardError: Stream = .null,
        onExit: (@Sendable (Termination) -> Void)? = nil
    ) throws {
        // Descriptors to close in the parent once the child holds them.
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        var succeeded = false
        defer {
            for descriptor in childEnds { close(descriptor) }
            if !succeeded { for descriptor in parentEnds { close(descriptor) } }
        }
        func pipeEnds() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [-1, -1]
            guard GlibcExtensions.pipe2(&ends, O_CLOEXEC) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            return (ends[0], ends[1])
        }
        func childDescriptor(_ stream: Stream, isInput: Bool) throws -> (child: Int32, parent: Int32?) {
            switch stream {
            case .null:
                let descriptor = open("/dev/null", (isInput ? O_RDONLY : O_WRONLY) | O_CLOEXEC)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                childEnds.append(descriptor)
                return (descriptor, nil)
            case .pipe:
                let ends = try pipeEnds()
                let (child, parent) = isInput ? (ends.read, ends.write) : (ends.write, ends.read)
                childEnds.append(child)
                parentEnds.append(parent)
                return (child, parent)
            case .descriptor(let descriptor):
                return (descriptor, nil)
            }
        }
        let input = try childDescriptor(standardInput, isInput: true)
        let output = try childDescriptor(standardOutput, isInput: false)
        let error = try childDescriptor(standardError, isInput: false)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy; everything from 3 up is
        // closed in the child, whatever its flag.
        for (source, target) in [(input.child, STDIN_FILENO), (output.child, STDOUT_FILENO), (error.child, STDERR_FILENO)] {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        guard GlibcExtensions.addCloseFrom(&actions, 3) == 0 else { throw POSIXError(.ENOSYS) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in variables { free(variable) } }
        var spawned: pid_t = 0
        let status = executable.contains("/")
            ? posix_spawn(&spawned, executable, &actions, &attributes, argv, variables)
            : posix_spawnp(&spawned, executable, &actions, &attributes, argv, variables)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        let pid = spawned
        succeeded = true
        processIdentifier = pid
        inputWriter = input.parent
        outputReader = output.parent
        errorReader = error.parent

        let termination = self.termination
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WTERMSIG, which Swift does not import.
            let ending: Termination = status & 0x7f == 0 ? .exit((status >> 8) & 0xff) : .signal(status & 0x7f)
            termination.update { $0 = ending }
            onExit?(ending)
        }
        thread.name = "waitpid \(pid)"
        thread.start()
    }

    /// How the process ended, or nil while it runs.
    public var ending: Termination? { termination.value }

    /// Waits until the process ends; nil when `timeout` passed first.
    public func waitForExit(timeout: Duration) async -> Termination? {
        await termination.wait(until: { $0 != nil }, timeout: timeout) ?? nil
    }

    /// Sends `signal` to the process, unless it has been waited for (its
    /// number could then name another process).
    public func signal(_ signal: Int32) {
        if termination.value == nil { kill(processIdentifier, signal) }
    }

    // MARK: - Pipes

    /// Reads `descriptor` on a thread of its own until the end of the
    /// stream, 64 KB at a time (each chunk may wake waiters that scan
    /// everything read so far), then closes it and calls `onEnd`.
    public static func readToEnd(
        _ descriptor: Int32, onChunk: @escaping @Sendable (ArraySlice<UInt8>) -> Void,
        onEnd: @escaping @Sendable () -> Void = {}
    ) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    onChunk(buffer[..<count])
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
            onEnd()
        }
        thread.start()
    }

    /// Writes all of `bytes` to `descriptor`; false when the reader is gone
    /// (or another error stopped it).
    @discardableResult
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    // MARK: - Running to the end

    /// What a process run to its end printed, and how it ended.
    public struct Outcome: Sendable {
        public var termination: Termination
        public var output: String
        public var error: String
    }

    /// The failure of a process run to its end: it outlived the deadline
    /// (it was then killed).
    public struct Timeout: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `executable` to its end: `input` is written to its standard
    /// input, which is then closed; both output streams are read as they
    /// come (a child that fills one pipe while the parent waits on the
    /// other would never end).
    ///
    /// - Throws: `Timeout` when the process or its streams are still open
    ///   after `timeout`; the process is then killed.
    public static func run(
        _ executable: String, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(60)
    ) async throws -> Outcome {
        let (process, streams) = try start(executable, arguments, input: input)
        guard let termination = await process.waitForExit(timeout: timeout),
            let collected = await streams.wait(until: { $0.closed == 2 }, timeout: .seconds(10))
        else {
            process.signal(SIGKILL)
            throw Timeout(description: "\(executable) \(arguments): still running after \(timeout): killed")
        }
        return Outcome(termination: termination, output: collected.text(1), error: collected.text(2))
    }

    /// `run(_:_:input:timeout:)` for code that cannot wait asynchronously:
    /// it blocks its thread (never a task's, for long).
    public static func runBlocking(
        _ executable: String, _ arguments: [String], input: String? = nil, timeout: Duration = .seconds(60)
    ) throws -> Outcome {
        // Signalled once when the process ends, once per stream closed.
        let ended = DispatchSemaphore(value: 0)
        let (process, streams) = try start(
            executable, arguments, input: input, onExit: { _ in ended.signal() }, onStreamClosed: { ended.signal() })
        let deadline = DispatchTime.now()
            + Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
        for _ in 0..<3 where ended.wait(timeout: deadline) == .timedOut {
            process.signal(SIGKILL)
            throw Timeout(description: "\(executable) \(arguments): still running after \(timeout): killed")
        }
        let collected = streams.value
        return Outcome(termination: process.ending ?? .exit(-1), output: collected.text(1), error: collected.text(2))
    }

    private struct Collected: Sendable {
        var bytes: [Int32: [UInt8]] = [:]
        var closed = 0
        func text(_ descriptor: Int32) -> String { String(decoding: bytes[descriptor] ?? [], as: UTF8.self) }
    }

    private static func start(
        _ executable: String, _ arguments: [String], input: String?,
        onExit: (@Sendable (Termination) -> Void)? = nil, onStreamClosed: (@Sendable () -> Void)? = nil
    ) throws -> (SpawnedProcess, ObservedState<Collected>) {
        let process = try SpawnedProcess(
            executable, arguments, standardInput: input == nil ? .null : .pipe, standardOutput: .pipe,
            standardError: .pipe, onExit: onExit)
        let streams = ObservedState(Collected())
        if let writer = process.inputWriter {
            let bytes = Array((input ?? "").utf8)
            let thread = Thread {
                writeAll(bytes, to: writer)
                close(writer)
            }
            thread.start()
        }
        for (reader, key) in [(process.outputReader, Int32(1)), (process.errorReader, Int32(2))] {
            guard let reader else { continue }
            readToEnd(reader, onChunk: { chunk in streams.update { $0.bytes[key, default: []] += chunk } }, onEnd: {
                streams.update { $0.closed += 1 }
                onStreamClosed?()
            })
        }
        return (process, streams)
    }
}

/// Two functions of glibc (2.34 and later) that its Swift module does not
/// import (they need `_GNU_SOURCE`), looked up by name.
private enum GlibcExtensions {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// `pipe2(2)`: both ends created close-on-exec at once (`pipe` then
    /// `fcntl` would leave a moment when a spawn elsewhere inherits them).
    static let pipe2: Pipe2 = function("pipe2")
    /// `posix_spawn_file_actions_addclosefrom_np(3)`: the child closes
    /// every descriptor from a number on.
    static let addCloseFrom: AddCloseFrom = function("posix_spawn_file_actions_addclosefrom_np")

    private static func function<Function>(_ name: String) -> Function {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            preconditionFailure("glibc has no \(name): 2.34 or later is needed")
        }
        return unsafeBitCast(symbol, to: Function.self)
    }
}
