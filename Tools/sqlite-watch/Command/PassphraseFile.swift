import Foundation
import SQLiteWatchKit

/// Reads the passphrase of `--passphrase-file`: a file, so that the
/// passphrase never appears among the arguments of a process listing.
enum PassphraseFile {
    /// The file's first line, without its line ending (`\n` or `\r\n`), so
    /// that `echo secret > key` works; a passphrase cannot hold a line break.
    ///
    /// - Throws: A `WatchError` (status 64) when the file cannot be read,
    ///   is not UTF-8, or its first line is empty.
    static func read(path: String) throws(WatchError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw WatchError.unreadablePassphraseFile(path, reason: (error as NSError).localizedDescription)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw WatchError.unreadablePassphraseFile(path, reason: "it is not UTF-8 text")
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let passphrase = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        guard !passphrase.isEmpty else {
            throw WatchError.unreadablePassphraseFile(path, reason: "its first line is empty")
        }
        return passphrase
    }
}
