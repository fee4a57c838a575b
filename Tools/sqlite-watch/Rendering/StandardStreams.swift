#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered writes to standard output and standard error: each change
/// reaches a pipe as soon as it is printed, whole.
enum StandardStreams {
    /// What became of a write to standard output.
    enum OutputResult: Equatable {
        case written
        /// The reader is gone (`EPIPE`: the output was piped to a program
        /// that exited, such as `head`): a normal end. SIGPIPE is ignored
        /// (see `Lifecycle`), so that the tool can exit cleanly instead.
        case closed
        /// Another error (`ENOSPC` on a full disk, `EIO`...), with its
        /// description: the output is incomplete, the tool fails.
        case failed(String)
    }

    /// Writes `text` to standard output.
    static func output(_ text: String) -> OutputResult {
        guard write(text, to: STDOUT_FILENO) else {
            let error = errno
            return error == EPIPE ? .closed : .failed(String(cString: strerror(error)))
        }
        return .written
    }

    /// Writes a line to standard error, prefixed with `sqlite-watch: `.
    static func note(_ message: String) {
        write("sqlite-watch: \(message)\n", to: STDERR_FILENO)
    }

    /// Writes an error message to standard error.
    static func error(_ message: String) {
        write("sqlite-watch: error: \(message)\n", to: STDERR_FILENO)
    }

    /// Whether standard output is a terminal.
    static var outputIsTerminal: Bool {
        isatty(STDOUT_FILENO) == 1
    }

    /// Writes all of `text`, retrying after signals; false with `errno` set
    /// when a write fails.
    @discardableResult
    private static func write(_ text: String, to fileDescriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(fileDescriptor, buffer.baseAddress, buffer.count)
                #else
                Darwin.write(fileDescriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }
}
