#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the passphrase of `--passphrase-file`: a file, so that the
/// passphrase never appears among the arguments of a process listing.
enum PassphraseFile {
    /// The file's first line, without its line ending (`\n` or `\r\n`), so
    /// that `echo secret > key` works; a passphrase cannot hold a line break.
    ///
    /// - Throws: A `WatchError` (status 64) when the file cannot be read,
    ///   is not UTF-8, or its first line is empty.
    static func read(path: String, kind: String = "passphrase") throws(WatchError) -> String {
        guard let data = contents(ofFileAt: path) else {
            throw WatchError.unreadablePassphraseFile(path, reason: String(cString: strerror(errno)), kind: kind)
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw WatchError.unreadablePassphraseFile(path, reason: "it is not UTF-8 text", kind: kind)
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let passphrase = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        guard !passphrase.isEmpty else {
            throw WatchError.unreadablePassphraseFile(path, reason: "its first line is empty", kind: kind)
        }
        return passphrase
    }

    #if canImport(Glibc)
    private static let systemRead = Glibc.read
    #else
    private static let systemRead = Darwin.read
    #endif

    /// The bytes of the file at `path`; nil with `errno` set when it cannot
    /// be opened or read (a directory, a missing file).
    private static func contents(ofFileAt path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }
}
