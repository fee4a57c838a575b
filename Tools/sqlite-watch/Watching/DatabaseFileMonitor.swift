import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks, periodically, that the watched path still names the database
/// file that was opened, and that it is still a database.
///
/// An open connection keeps reading a deleted file (its inode lives on
/// while open), and may keep serving cached pages of a file overwritten in
/// place: the watch would go on silently forever. So every `interval` the
/// path is checked with `stat`, and its first bytes are read: a deleted or
/// replaced file, one truncated to nothing, or one whose header is no
/// longer SQLite's, ends the tool with status 1. So does a write-ahead log
/// (`-wal`) deleted or replaced while watched: the commits it holds would
/// be lost when the last connection closes, and the watcher would show
/// commits that are about to vanish.
@MainActor
final class DatabaseFileMonitor {
    /// How often the path is checked.
    static let interval: DispatchTimeInterval = .milliseconds(200)

    /// > Every valid SQLite database file begins with the following 16
    /// > bytes (in hex): 53 51 4c 69 74 65 20 66 6f 72 6d 61 74 20 33 00.
    /// https://www.sqlite.org/fileformat.html#magic_header_string
    static let header = Array("SQLite format 3\0".utf8)

    let path: String
    /// The file, open for the life of the process and never closed: closing
    /// any descriptor of a file drops every POSIX lock the process holds on
    /// it, SQLite's included (https://www.sqlite.org/howtocorrupt.html,
    /// 2.2), so the header is read through this one.
    private let descriptor: Int32
    private let identity: FileIdentity
    /// Whether the file had SQLite's header when watching started: only a
    /// file that was a database can stop being one (an empty file is an
    /// empty database for SQLite; a file of other bytes fails to open).
    private let hadHeader: Bool
    /// The write-ahead log, once seen (a database may switch to WAL mode
    /// while watched).
    private var walIdentity: FileIdentity?
    private var timer: (any DispatchSourceTimer)?

    /// Records the identity of the file at `path`.
    ///
    /// - Throws: `WatchError` (status 1) when there is no such file, or when
    ///   it is not a regular file: a directory, or a FIFO, socket or device,
    ///   whose opening could block forever or read a stream.
    init(path: String) throws {
        self.path = path
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw WatchError.missingFile(path) }
            throw WatchError(status: .databaseError, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw WatchError.directory(path)
        default: throw WatchError.notARegularFile(path, kind: Self.kind(of: info.st_mode))
        }
        identity = FileIdentity(info)
        // Non-blocking: the file was a regular file a moment ago, but
        // another process may have swapped it for a FIFO since.
        descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        hadHeader = Self.hasSQLiteHeader(descriptor)
        walIdentity = Self.identity(ofFileAt: path + "-wal")
    }

    /// Starts the periodic check: `onFailure` is called on the main queue
    /// when the file can no longer be watched, `onCheck` after each check
    /// that found it still there (the watcher reads the database then).
    func start(onFailure: @escaping @MainActor (WatchError) -> Void, onCheck: @escaping @MainActor () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval)
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                guard let error = self.failure else { return onCheck() }
                self.timer?.cancel()
                onFailure(error)
            }
        }
        timer.resume()
        self.timer = timer
    }

    /// Why the file can no longer be watched, or nil when it still can.
    var failure: WatchError? {
        var info = stat()
        guard stat(path, &info) == 0 else { return .deleted(path) }
        guard FileIdentity(info) == identity else { return .replaced(path) }
        if hadHeader {
            guard info.st_size > 0 else { return .noLongerADatabase(path, reason: "it was truncated to 0 bytes") }
            guard Self.hasSQLiteHeader(descriptor) else {
                return .noLongerADatabase(path, reason: "its header is no longer SQLite's (the file was overwritten)")
            }
        }
        let wal = Self.identity(ofFileAt: path + "-wal")
        if let walIdentity {
            guard let wal else { return .walLost(path, reason: "deleted") }
            guard wal == walIdentity else { return .walLost(path, reason: "replaced by another file") }
        } else {
            walIdentity = wal
        }
        return nil
    }

    /// Records the write-ahead log's identity when none is known yet. The
    /// watcher calls it before it prints what it read: the connection had
    /// the log open then, so a log deleted at any later moment is seen as
    /// lost, even one created and deleted between two periodic checks.
    func noteWriteAheadLog() {
        if walIdentity == nil { walIdentity = Self.identity(ofFileAt: path + "-wal") }
    }

    /// Whether another process holds a write lock on the database file:
    /// RESERVED, PENDING or EXCLUSIVE (a write transaction under way in
    /// rollback-journal mode, or a connection in exclusive locking mode).
    ///
    /// Asked with `fcntl(F_GETLK)` on SQLite's lock bytes, for a read lock:
    /// only write locks conflict with it, and the locks of this process
    /// (SQLite's connections) are not reported. No lock is taken. A file
    /// that cannot be asked is said to be locked: the caller then reads,
    /// as it would without this test.
    ///
    /// > The PENDING_BYTE [is at] 0x40000000 [...], RESERVED_BYTE is one
    /// > byte past it, and the 510-byte SHARED range follows.
    /// > https://www.sqlite.org/fileformat.html#the_lock_byte_page
    var anotherProcessHoldsWriteLock: Bool {
        guard descriptor >= 0 else { return true }
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0x4000_0000
        lock.l_len = 512
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return true }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// Whether the file starts with SQLite's 16-byte header. A file that
    /// cannot be read (no descriptor, a read error) is given the benefit of
    /// the doubt: SQLite's own reads report what is wrong with it.
    private static func hasSQLiteHeader(_ descriptor: Int32) -> Bool {
        guard descriptor >= 0 else { return true }
        var bytes = [UInt8](repeating: 0, count: header.count)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return true }
        return count == header.count && bytes == header
    }

    private static func identity(ofFileAt path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}

/// A file's device and inode: what stays the same while the file is
/// renamed, and changes when another file takes its path.
private struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
