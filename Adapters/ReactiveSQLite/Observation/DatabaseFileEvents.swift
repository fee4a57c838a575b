import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls back as soon as the database file, its write-ahead log or its
/// rollback journal is written, created or deleted: on Linux, through
/// inotify on the file's directory (a commit appends frames to the log, or
/// writes the file and deletes or truncates the journal).
///
/// The external-change detector reads `data_version` at each call, instead
/// of waiting for its next poll: an external commit is seen within
/// milliseconds, and nothing runs while nothing is written. The timer
/// stays, for the writes no event reports (a file system without inotify,
/// such as most network file systems). Elsewhere than Linux, `init`
/// returns nil and the timer alone detects commits.
///
/// `@unchecked Sendable`: `descriptor` and `source` are set in `init` and
/// then only read; the source's handler runs on the caller's serial queue.
final class DatabaseFileEvents: @unchecked Sendable {
    #if os(Linux)
    private let descriptor: Int32
    private let source: any DispatchSourceRead
    #endif

    /// Starts watching the files of the database at `path`, calling
    /// `onWrite` on `queue`; nil when the platform or the file system
    /// offers no such events.
    init?(path: String, queue: DispatchQueue, onWrite: @escaping @Sendable () -> Void) {
        #if os(Linux)
        let url = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let names: Set<[UInt8]> = [Array(name.utf8), Array("\(name)-wal".utf8), Array("\(name)-journal".utf8)]
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [descriptor] in
            if Self.readEvents(descriptor, concerning: names) { onWrite() }
        }
        source.setCancelHandler { [descriptor] in close(descriptor) }
        source.resume()
        #else
        return nil
        #endif
    }

    /// Stops watching (idempotent).
    func cancel() {
        #if os(Linux)
        source.cancel()
        #endif
    }

    deinit {
        cancel()
    }

    #if os(Linux)
    /// Reads every pending event; returns whether one concerns `names`.
    private static func readEvents(_ descriptor: Int32, concerning names: Set<[UInt8]>) -> Bool {
        var concerned = false
        InotifyEvents.readAll(from: descriptor) { _, name in
            if names.contains(Array(name)) { concerned = true }
        }
        return concerned
    }
    #endif
}
