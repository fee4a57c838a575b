#if os(Linux)
import Glibc

/// Counts the writes of one file, by any process, through the inotify
/// instance this process shares among its counters: how a read without a
/// lock (`SharedLockCycle`) tells that a writer wrote the database file
/// while it read, even when the writer then put everything back (a cache
/// spill followed by a rollback leaves the first page as it was).
///
/// The kernel queues a file's modification event inside the `write` or
/// `ftruncate` call, before it returns: a writer that released its lock
/// after a write has queued the write's event, so a count read after a
/// check of the writer's lock includes it.
///
/// A counter is created for a file that exists; `init` returns nil when
/// inotify is unavailable or refuses the watch (its limits), and the file's
/// reads then have the first page alone to go by.
final class FileWriteCounter: Sendable {
    /// The inotify watch of the file (one per file and process, shared by
    /// the counters of the file's connections).
    private let watch: Int32

    init?(path: String) {
        guard let watch = Self.registry.withLock({ $0.addWatch(path: path) }) else { return nil }
        self.watch = watch
    }

    deinit {
        Self.registry.withLock { $0.removeWatch(watch) }
    }

    /// The writes of the file seen so far: a number that grows at each
    /// write (several writes may count once), and at an overflow of the
    /// event queue, which counts as a write of every file.
    ///
    /// - Complexity: one `read` of the inotify descriptor, plus the events
    ///   queued since the last count of any file.
    func count() -> Int {
        Self.registry.withLock { registry in
            registry.readEvents()
            return registry.count(of: watch)
        }
    }

    /// Behind a lock that ThreadSanitizer understands (see
    /// `ThreadCondition`).
    private static let registry = LockedState(Registry())

    /// The process's inotify instance, its watches and their counts.
    private struct Registry: Sendable {
        /// The inotify descriptor; -1 until the first watch, or for good
        /// when it could not be created.
        var descriptor: Int32 = -1
        /// Whether creating the descriptor failed (the process's or the
        /// user's limit of inotify instances): not tried again.
        var hasFailed = false
        /// The counters of each watch, and the writes seen.
        var watches: [Int32: (counters: Int, writes: Int)] = [:]
        /// The overflows of the event queue.
        var overflows = 0

        mutating func addWatch(path: String) -> Int32? {
            if descriptor < 0 {
                guard !hasFailed else { return nil }
                descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
                guard descriptor >= 0 else {
                    hasFailed = true
                    return nil
                }
            }
            // The same file (inode) gives the same watch.
            let watch = inotify_add_watch(descriptor, path, UInt32(IN_MODIFY))
            guard watch >= 0 else { return nil }
            watches[watch, default: (0, 0)].counters += 1
            return watch
        }

        mutating func removeWatch(_ watch: Int32) {
            guard let entry = watches[watch] else { return }
            if entry.counters > 1 {
                watches[watch]!.counters -= 1
            } else {
                watches[watch] = nil
                // Fails harmlessly when the kernel removed the watch (the
                // file was deleted).
                _ = inotify_rm_watch(descriptor, watch)
            }
        }

        func count(of watch: Int32) -> Int {
            (watches[watch]?.writes ?? 0) + overflows
        }

        /// Reads the events queued, counting each for its watch.
        mutating func readEvents() {
            InotifyEvents.readAll(from: descriptor) { event, _ in
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    overflows += 1
                } else if event.mask & UInt32(IN_MODIFY) != 0, watches[event.wd] != nil {
                    watches[event.wd]!.writes += 1
                }
            }
        }
    }
}
#endif
