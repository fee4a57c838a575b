import Foundation
import Synchronization
import TestSupport

/// A process run by a test: its standard output and standard error are read
/// as they come, so that a test can act when some text appears, and every
/// wait has a deadline after which the process is killed and the test fails.
final class ChildProcess: Sendable {
    /// What a stream of the process printed so far.
    struct Output: Sendable {
        var bytes: [UInt8] = []
        /// The process closed the stream (it exited).
        var isClosed = false
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    typealias Termination = SpawnedProcess.Termination

    /// The deadline of every wait, generous for a loaded machine: it only
    /// decides failures.
    static let timeout: Duration = .seconds(60)

    let processIdentifier: Int32
    let standardOutput = ObservedState(Output())
    let standardError = ObservedState(Output())
    private let process: SpawnedProcess
    /// The write end of the process's standard input, when the test feeds it.
    private let input: Mutex<Int32?>
    let commandLine: String

    /// Launches `executable`.
    ///
    /// - Parameters:
    ///   - feedsInput: Whether the test writes to the standard input of the
    ///     process (see `send(_:)`); else it reads nothing.
    ///   - terminal: A file descriptor to use as standard output instead of
    ///     a pipe (a pseudo-terminal, a file such as `/dev/full`, the end of
    ///     a pipe nobody reads); `standardOutput` then stays empty.
    init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, feedsInput: Bool = false,
        terminal: Int32? = nil
    ) throws {
        StallWatchdog.startIfRequested()
        commandLine = ([executable.path] + arguments).joined(separator: " ")
        let process = try SpawnedProcess(
            executable.path, arguments, environment: environment,
            standardInput: feedsInput ? .pipe : .null,
            standardOutput: terminal.map { .descriptor($0) } ?? .pipe,
            standardError: .pipe)
        self.process = process
        processIdentifier = process.processIdentifier
        input = Mutex(process.inputWriter)
        if let outputReader = process.outputReader {
            Self.read(outputReader, into: standardOutput)
        } else {
            standardOutput.update { $0.isClosed = true }
        }
        if let errorReader = process.errorReader { Self.read(errorReader, into: standardError) }
    }

    deinit {
        process.signal(SIGKILL)
        closeInput()
    }

    /// Reads `fileDescriptor` until the end of the stream into `output`.
    static func read(_ fileDescriptor: Int32, into output: ObservedState<Output>) {
        SpawnedProcess.readToEnd(
            fileDescriptor, onChunk: { chunk in output.update { $0.bytes += chunk } },
            onEnd: { output.update { $0.isClosed = true } })
    }

    // MARK: - Acting

    /// Writes `text` to the standard input of the process.
    func send(_ text: String) {
        input.withLock { fileDescriptor in
            guard let fileDescriptor else { return }
            SpawnedProcess.writeAll(Array(text.utf8), to: fileDescriptor)
        }
    }

    /// Closes the standard input of the process (end of file).
    func closeInput() {
        input.withLock { fileDescriptor in
            if let descriptor = fileDescriptor { close(descriptor) }
            fileDescriptor = nil
        }
    }

    /// Sends a signal to the process (SIGINT: Ctrl-C).
    func signal(_ signal: Int32) {
        process.signal(signal)
    }

    // MARK: - Waiting

    var outputText: String { standardOutput.value.text }
    var errorText: String { standardError.value.text }

    /// Waits until standard output contains `text`.
    ///
    /// - Throws: When the process exits first or the deadline passes; the
    ///   process is then killed.
    func waitForOutput(containing text: String, timeout: Duration = timeout) async throws {
        try await waitFor(standardOutput, "standard output", containing: text, timeout: timeout)
    }

    /// Waits until `condition` holds for the text on standard output.
    func waitForOutput(timeout: Duration = timeout, until condition: @escaping @Sendable (String) -> Bool) async throws {
        let output = await standardOutput.wait(until: { $0.isClosed || condition($0.text) }, timeout: timeout)
        guard let output, condition(output.text) else {
            process.signal(SIGKILL)
            throw failure("standard output does not reach the expected state after \(timeout): killed")
        }
    }

    /// Waits until standard output ends with a line feed: the first line
    /// of a process that prints nothing more until something changes (a
    /// watch's first JSON line), without scanning all its text at each read.
    func waitForOutputLine(timeout: Duration = timeout) async throws {
        let newline = UInt8(ascii: "\n")
        let output = await standardOutput.wait(until: { $0.isClosed || $0.bytes.last == newline }, timeout: timeout)
        guard let output, output.bytes.last == newline else {
            process.signal(SIGKILL)
            throw failure("standard output does not end a line after \(timeout): killed")
        }
    }

    /// Waits until standard error contains `text`.
    func waitForError(containing text: String, timeout: Duration = timeout) async throws {
        try await waitFor(standardError, "standard error", containing: text, timeout: timeout)
    }

    /// Waits until standard error contains `text` `count` times.
    func waitForError(containing text: String, times count: Int, timeout: Duration = timeout) async throws {
        let output = await standardError.wait(
            until: { $0.isClosed || $0.text.components(separatedBy: text).count - 1 >= count }, timeout: timeout)
        guard let output, output.text.components(separatedBy: text).count - 1 >= count else {
            process.signal(SIGKILL)
            throw failure("standard error does not contain \"\(text)\" \(count) times")
        }
    }

    private func waitFor(
        _ stream: ObservedState<Output>, _ name: String, containing text: String, timeout: Duration
    ) async throws {
        let output = await stream.wait(until: { $0.isClosed || $0.text.contains(text) }, timeout: timeout)
        guard let output, output.text.contains(text) else {
            process.signal(SIGKILL)
            throw failure(output == nil
                ? "no \"\(text)\" on \(name) after \(timeout): killed"
                : "\(name) closed without \"\(text)\"")
        }
    }

    /// Waits until the process exits and its output streams are closed.
    ///
    /// - Throws: When the deadline passes; the process is then killed.
    @discardableResult
    func waitForExit(timeout: Duration = timeout) async throws -> Termination {
        let start = ContinuousClock.now
        guard let ending = await process.waitForExit(timeout: timeout) else {
            process.signal(SIGKILL)
            throw failure("still running after \(timeout): killed")
        }
        let remaining = timeout - (ContinuousClock.now - start)
        for stream in [standardOutput, standardError] {
            guard await stream.wait(until: \.isClosed, timeout: max(remaining, .seconds(1))) != nil else {
                throw failure("exited, but its output is still open (a child of it holds it?)")
            }
        }
        return ending
    }

    private func failure(_ reason: String) -> ChildProcessFailure {
        ChildProcessFailure(
            description: "\(commandLine): \(reason)\n--- standard output:\n\(outputText)\n--- standard error:\n\(errorText)")
    }
}

/// A child process that did not do what the test waited for.
struct ChildProcessFailure: Error, CustomStringConvertible {
    var description: String
}
