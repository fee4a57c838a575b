#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// The shared lock of one main database file opened through
/// `WriterYieldingVFS`: real, or optimistic (held without a lock, and
/// validated when it ends; see "Reads without a lock" in
/// `WriterYieldingVFS`).
///
/// Not `Sendable`: SQLite calls the file's methods on the thread of the
/// connection's current access, inside the connection's own calls, and
/// `Database.yieldingToWriters(_:)` uses the cycle there too.
final class SharedLockCycle {
    /// How many first bytes of the file a cycle compares: the header of a
    /// clear file (the change counter at 24, the schema cookie at 40), the
    /// salt and the first encrypted bytes of an encrypted one.
    static let headerCount = 100

    /// The first bytes of a database file that is not encrypted.
    static let clearFileMagic = Array("SQLite format 3\0".utf8)

    /// The file of the default VFS.
    private let file: UnsafeMutablePointer<sqlite3_file>
    /// The path of the file; nil for a file without one.
    private let path: String?
    /// The rollback journal of the file (the database's path and
    /// `-journal`); nil for a file without a path.
    private let journalPath: String?
    /// Whether shared locks may be optimistic now: inside
    /// `yieldingToWriters(_:)` only.
    var allowsOptimism = false
    /// Whether the file's wal-index was ever used: the file is in WAL mode,
    /// and its shared locks stay real.
    private(set) var usesWAL = false
    /// The first bytes of the file before the current optimistic lock
    /// began; nil when the lock held, if any, is real.
    private var header: [UInt8]?
    #if os(Linux)
    /// The writes of the file, by any process (created at the first
    /// optimistic lock): a writer that wrote pages and put them back
    /// leaves the first bytes as they were. Nil without inotify.
    private lazy var writes: FileWriteCounter? = path.flatMap(FileWriteCounter.init(path:))
    #endif
    /// The count of `writes` before the current optimistic lock began.
    private var writesAtStart = 0
    /// Whether a read under an optimistic lock may have met a writer since
    /// `allowsOptimism` was last set: what it read must be thrown away.
    var metWriter = false
    /// Whether the schema may have changed under such a read, so that
    /// SQLite's copy of the schema may mix two states.
    var schemaMayHaveChanged = false
    /// Whether the next reading of the file's version (the 16 bytes at 24
    /// that SQLite reads when it takes a shared lock, to tell whether the
    /// pages it keeps are still the file's) must differ from the file's,
    /// so that SQLite drops them: the fallback of
    /// `SQLITE_FCNTL_RESET_CACHE` for an SQLite without it.
    var forgetsPages = false

    init(file: UnsafeMutablePointer<sqlite3_file>, path: String?) {
        self.file = file
        self.path = path
        journalPath = path.map { $0 + "-journal" }
    }

    /// Whether the shared lock held is optimistic.
    var isOptimistic: Bool { header != nil }

    /// Whether the next shared lock may be optimistic.
    var mayBeOptimistic: Bool { allowsOptimism && !usesWAL }

    private var methods: sqlite3_io_methods { file.pointee.pMethods.unsafelyUnwrapped.pointee }

    // MARK: - Locks

    /// Begins an optimistic shared lock: `SQLITE_OK`, `SQLITE_BUSY` while a
    /// writer is active, or nil when the lock must be real (a first page
    /// that cannot be read, such as an empty file's; a live journal, which
    /// SQLite must see under a lock, and roll back when hot; a file in WAL
    /// mode, whose log SQLite opens next).
    ///
    /// The first bytes are read before the checks: a writer that wrote
    /// them after that and is done before the checks changed them (see
    /// `end()`).
    func beginOptimistically() -> Int32? {
        let writesBefore = writeCount()
        guard let bytes = readHeader() else { return nil }
        // The read and write versions of a clear file (bytes 18 and 19): 2
        // in WAL mode. An encrypted file's are not readable here: its log
        // is found when SQLite opens it (`logWillOpen`).
        if bytes.starts(with: Self.clearFileMagic), bytes[18] == 2 || bytes[19] == 2 { return nil }
        if isReserved() { return SQLITE_BUSY }
        // A writer that began since the check above (its RESERVED lock
        // comes before its journal), or a hot journal.
        if journalIsLive() { return isReserved() ? SQLITE_BUSY : nil }
        header = bytes
        writesAtStart = writesBefore
        Self.setOptimisticCycleOfThread(self)
        return SQLITE_OK
    }

    /// Ends an optimistic shared lock: SQLite released it. A read that may
    /// have met a writer is recorded (`metWriter`).
    func end() {
        _ = isUndisturbed()
        header = nil
        clearOptimisticCycleOfThread()
    }

    /// Makes an optimistic shared lock real, validated first: the reads so
    /// far must be those of the state the lock now protects. `SQLITE_BUSY`
    /// when they may have met a writer (the lock stays optimistic, and
    /// `metWriter` is set), or the error of the lock.
    func makeReal() -> Int32 {
        guard let header else { return SQLITE_OK }
        guard isUndisturbed() else { return SQLITE_BUSY }
        let code = methods.xLock!(file, SQLITE_LOCK_SHARED)
        guard code == SQLITE_OK else { return code }
        #if REACTIVESQLITE_INTERNAL_CHECKS
        didTakeRealSharedLock()
        #endif
        // A writer that came and went between the validation and the lock.
        guard readHeader() == header, writeCount() == writesAtStart else {
            _ = methods.xUnlock!(file, SQLITE_LOCK_NONE)
            recordWriter(schemaMayHaveChanged: true)
            return SQLITE_BUSY
        }
        self.header = nil
        clearOptimisticCycleOfThread()
        return SQLITE_OK
    }

    /// SQLite is about to open `logPath` while it believes it holds the
    /// shared lock of this file: when the lock is optimistic and the log is
    /// this file's, the lock is made real first (validated), or the opening
    /// fails with `SQLITE_BUSY` and the read is thrown away (`metWriter`).
    ///
    /// A connection in WAL mode holds its shared lock on the database file
    /// for as long as it keeps the log open, and that lock is what makes
    /// another process's return to rollback mode (`PRAGMA journal_mode =
    /// DELETE`, which needs EXCLUSIVE) fail instead of deleting the log
    /// under the connection. Without it, a connection could keep a log
    /// that another process deleted, and stay in WAL mode on deleted files:
    /// reads that never begin, external commits never seen again.
    func logWillOpen(_ logPath: String) -> Int32 {
        guard isOptimistic, let path, logPath == path + "-wal" else { return SQLITE_OK }
        let code = makeReal()
        // A lock refused (another process switching the journal mode
        // holds PENDING or EXCLUSIVE): the run is thrown away and runs
        // again, with a real lock once the file says WAL.
        if code != SQLITE_OK { recordWriter(schemaMayHaveChanged: true) }
        return code
    }

    /// The file's wal-index is about to be used: WAL mode, real locks from
    /// now on.
    func useWALIndex() -> Int32 {
        usesWAL = true
        return makeReal()
    }

    /// Ends the scope of `yieldingToWriters(_:)`: a shared lock still held
    /// (`PRAGMA locking_mode = EXCLUSIVE`, or a transaction left open)
    /// becomes real, waiting for a writer up to `timeout`.
    func endScope(timeout: Duration) -> Int32 {
        allowsOptimism = false
        return Self.retryingWhileBusy(upTo: timeout, makeReal, stopsWhen: { metWriter })
    }

    /// Makes an optimistic shared lock that SQLite keeps beyond a scope
    /// (`PRAGMA locking_mode = EXCLUSIVE`), and whose validation failed,
    /// real without validating it again: what was read under it is thrown
    /// away with the pages. Validated against the first bytes of its start,
    /// which a commit changed, it would fail for ever. Waits for a writer's
    /// PENDING or EXCLUSIVE lock up to `timeout`; the error of the lock
    /// otherwise.
    func makeRealAfterDiscard(timeout: Duration) -> Int32 {
        guard isOptimistic else { return SQLITE_OK }
        return Self.retryingWhileBusy(upTo: timeout) {
            let code = methods.xLock!(file, SQLITE_LOCK_SHARED)
            if code == SQLITE_OK {
                #if REACTIVESQLITE_INTERNAL_CHECKS
                didTakeRealSharedLock()
                #endif
                header = nil
                clearOptimisticCycleOfThread()
            }
            return code
        }
    }

    /// Runs `attempt` again, 50 us apart, while it returns `SQLITE_BUSY`,
    /// until `stopsWhen` says so or `timeout` has passed since the first
    /// attempt: the code of the last attempt.
    private static func retryingWhileBusy(
        upTo timeout: Duration, _ attempt: () -> Int32, stopsWhen stops: () -> Bool = { false }
    ) -> Int32 {
        let start = ContinuousClock.now
        while true {
            let code = attempt()
            guard code == SQLITE_BUSY, !stops(), ContinuousClock.now - start < timeout else { return code }
            usleep(50)
        }
    }

    // MARK: - Validation

    /// Whether no writer was active since the optimistic lock began: no
    /// RESERVED lock and no live journal now, then no write of the file
    /// and the first bytes as they were. Records a writer otherwise.
    ///
    /// The writes are counted after the check of the lock: a writer that
    /// released its lock had counted its writes before (see
    /// `FileWriteCounter`).
    private func isUndisturbed() -> Bool {
        let isActive = isReserved() || journalIsLive()
        let wasWritten = writeCount() != writesAtStart
        let bytes = readHeader()
        guard isActive || wasWritten || bytes != header else { return true }
        // The schema cookie of a clear file tells whether the schema
        // changed; the first page of an encrypted file does not, nor a
        // writer still at work, nor one that wrote pages and put them
        // back (they may have been the schema's).
        let schemaMayHaveChanged = isActive || wasWritten || !(header?.starts(with: Self.clearFileMagic) ?? false)
            || !(bytes?.starts(with: Self.clearFileMagic) ?? false) || header![40..<44] != bytes![40..<44]
        recordWriter(schemaMayHaveChanged: schemaMayHaveChanged)
        return false
    }

    // MARK: - The optimistic lock of the current thread

    /// The key of the thread-local reference to the cycle whose optimistic
    /// lock the current thread holds (retained): how `WriterYieldingVFS`
    /// finds, when SQLite opens a log, the database file whose lock SQLite
    /// believes it holds. SQLite opens the log in the same call that took
    /// the lock, on the same thread. A reference left at a thread's exit
    /// is released.
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        #if canImport(Glibc)
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<SharedLockCycle>.fromOpaque(pointer).release() }
        }
        #else
        pthread_key_create(&key) { pointer in Unmanaged<SharedLockCycle>.fromOpaque(pointer).release() }
        #endif
        return key
    }()

    /// The cycle whose optimistic lock the current thread holds, if any.
    static var optimisticCycleOfThread: SharedLockCycle? {
        pthread_getspecific(threadKey).map { Unmanaged<SharedLockCycle>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func setOptimisticCycleOfThread(_ cycle: SharedLockCycle?) {
        if let previous = pthread_getspecific(threadKey) {
            Unmanaged<SharedLockCycle>.fromOpaque(previous).release()
        }
        pthread_setspecific(threadKey, cycle.map { Unmanaged.passRetained($0).toOpaque() })
    }

    /// The optimistic lock of this cycle ended: forgotten by the thread.
    private func clearOptimisticCycleOfThread() {
        if Self.optimisticCycleOfThread === self { Self.setOptimisticCycleOfThread(nil) }
    }

    private func recordWriter(schemaMayHaveChanged: Bool) {
        metWriter = true
        if schemaMayHaveChanged { self.schemaMayHaveChanged = true }
    }

    /// The writes of the file counted so far; 0 where they are not counted.
    private func writeCount() -> Int {
        #if os(Linux)
        writes?.count() ?? 0
        #else
        0
        #endif
    }

    /// Whether a connection holds RESERVED or more (the file's own check:
    /// on Unix, this process's lock table, then `fcntl(F_GETLK)`).
    private func isReserved() -> Bool {
        var isReserved: Int32 = 0
        let code = methods.xCheckReservedLock!(file, &isReserved)
        return code != SQLITE_OK || isReserved != 0
    }

    /// The first bytes of the file, read without a lock; nil when the file
    /// is shorter.
    private func readHeader() -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: Self.headerCount)
        let code = bytes.withUnsafeMutableBytes { methods.xRead!(file, $0.baseAddress, Int32(Self.headerCount), 0) }
        return code == SQLITE_OK ? bytes : nil
    }

    /// Whether the rollback journal holds a transaction: in use by a writer,
    /// or hot (left by a writer that died). A journal that is absent
    /// (`DELETE`), empty (`TRUNCATE`) or whose header is zeroed (`PERSIST`)
    /// holds none. A journal that cannot be read counts as live.
    ///
    /// Its own descriptor, closed at once: SQLite takes no lock on
    /// journals, so closing it drops no lock of this process.
    private func journalIsLive() -> Bool {
        guard let journalPath else { return false }
        let descriptor = open(journalPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno != ENOENT }
        defer { close(descriptor) }
        var magic: UInt64 = 0
        let count = pread(descriptor, &magic, 8, 0)
        return count < 0 || (count == 8 && magic != 0)
    }

    /// Reads `count` bytes at `offset` for SQLite: the file's, but for the
    /// reading of its version when `forgetsPages` (see there).
    func read(_ buffer: UnsafeMutableRawPointer?, count: Int32, offset: Int64) -> Int32 {
        let code = methods.xRead!(file, buffer, count, offset)
        if forgetsPages, code == SQLITE_OK, offset == 24, count == 16, let buffer {
            forgetsPages = false
            buffer.storeBytes(of: ~buffer.load(as: UInt8.self), as: UInt8.self)
        }
        return code
    }
}

#if REACTIVESQLITE_INTERNAL_CHECKS
extension SharedLockCycle {
    /// Real shared locks taken on files in rollback-journal mode, by path:
    /// each is a moment when a commit of another process's writer could
    /// meet a reader (tests; REACTIVESQLITE_INTERNAL_CHECKS builds only).
    /// Per path, so that tests running in parallel count their own files.
    /// Behind a lock that ThreadSanitizer understands (see `ThreadCondition`).
    static let realSharedLocks = LockedState<[String: Int]>([:])

    /// Counts a real shared lock on a file not in WAL mode.
    func didTakeRealSharedLock() {
        guard !usesWAL, let path else { return }
        Self.realSharedLocks.withLock { $0[path, default: 0] += 1 }
    }

    /// The real shared locks taken so far on the file at `path`, in
    /// rollback-journal mode, by connections that yield to writers.
    static func realSharedLockCount(path: String) -> Int {
        realSharedLocks.withLock { $0[path] ?? 0 }
    }
}
#endif
