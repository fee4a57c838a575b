import SQLiteWatchKit
import Dispatch
import Foundation

/// Checks, periodically, that the watched path still names the file that
/// was opened.
///
/// An open connection keeps reading a deleted file (its inode lives on
/// while open), and nobody can write to it any more: the watch would go on
/// silently forever. So the path is checked with `stat` a few times per
/// second, and a deleted or replaced file ends the tool with status 1.
@MainActor
final class DatabaseFileMonitor {
    /// How often the path is checked.
    static let interval: DispatchTimeInterval = .milliseconds(200)

    let path: String
    private let device: UInt64
    private let inode: UInt64
    private var timer: (any DispatchSourceTimer)?

    /// Records the identity of the file at `path`.
    ///
    /// - Throws: `WatchError` (status 1) when there is no such file, or
    ///   when it is a directory.
    init(path: String) throws {
        self.path = path
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw WatchError.missingFile(path) }
            throw WatchError(status: .databaseError, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) != S_IFDIR else { throw WatchError.directory(path) }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// Starts the periodic check: `onFailure` is called on the main queue
    /// when the file is gone.
    func start(onFailure: @escaping @MainActor (WatchError) -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval)
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self, let error = self.failure else { return }
                self.timer?.cancel()
                onFailure(error)
            }
        }
        timer.resume()
        self.timer = timer
    }

    /// Why the file can no longer be watched, or nil when it is still there.
    var failure: WatchError? {
        var info = stat()
        guard stat(path, &info) == 0 else { return .deleted(path) }
        guard UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else { return .replaced(path) }
        return nil
    }
}
