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

/// A VFS over SQLite's default one whose database files do not take a
/// shared lock while another connection holds a RESERVED lock (a write
/// transaction under way, in rollback-journal mode): the shared lock
/// reports `SQLITE_BUSY` instead, and the connection's busy handler waits
/// until the writer has committed or rolled back.
///
/// The connections of a database that observes external changes open their
/// files through it (`Configuration.observesExternalChanges`). A reader
/// that holds a shared lock when a writer of another process wants to
/// commit makes that writer's EXCLUSIVE lock fail: a writer without a busy
/// handler (the `sqlite3` shell, many scripts) then fails with
/// `database is locked`. In rollback mode, a writer keeps its RESERVED lock
/// from its first write to the end of its transaction, and commits by
/// going from RESERVED to EXCLUSIVE, so a reader that waits for the end of
/// RESERVED never holds the writer up:
///
/// > A RESERVED lock means that the process is planning on writing to the
/// > database file at some point in the future but that it is currently
/// > just reading from the file. [...] Other processes can continue to
/// > read from the database while the RESERVED lock is held.
/// > https://www.sqlite.org/lockingv3.html
///
/// The check is the file's own `xCheckReservedLock` (on Unix, the lock
/// table of this process's connections, then `fcntl(F_GETLK)` on the
/// RESERVED byte for other processes), made right before each shared lock
/// is taken: a writer that takes RESERVED after that moment, and commits
/// before the read ends, still meets the reader (the read would have to
/// outlast the writer's journal writes). In WAL mode nobody takes RESERVED
/// on the database file, and readers never block writers: nothing changes.
///
/// Only the main database file is wrapped; journals, logs and temporary
/// files are the default VFS's own.
///
/// **Reads without a lock.** The check above leaves a window: a reader
/// that was checked, took its lock, and was then descheduled for some
/// milliseconds still holds the lock when a writer that started meanwhile
/// commits (measured: about one update in 2 000 of a shell loop failed).
/// No check made before a lock can close it. So inside
/// `Database.yieldingToWriters(_:)` on a file in rollback mode, a shared
/// lock is *optimistic* (see `SharedLockCycle`): the file reports it taken
/// without taking it, and the connection reads without any lock, which no
/// writer can meet. The read is then validated: when the lock is released
/// (or raised), no writer may have been active between its start and its
/// end. A writer is active from its RESERVED lock to the end of its
/// transaction, and every write of the database file, a commit's, a cache
/// spill's, a hot journal's rollback, happens while it is active, or
/// leaves a hot journal behind; a commit also changes the first page (the
/// change counter; SQLCipher writes the whole page anew). So the cycle
/// reads the first 100 bytes of the file, then checks that no one holds
/// RESERVED and that no journal is live (hot or in use), then the
/// connection reads; at the end it checks RESERVED and the journal again,
/// then reads the first bytes, which must be those it began with. A writer
/// active at either check is seen there; one that committed between the
/// checks changed the first bytes in between; one done before the first
/// check wrote nothing the reads could see half-done. A writer that wrote
/// pages between the checks and rolled back (a cache spill) leaves the
/// first bytes as they were: on Linux, the cycle also counts the file's
/// writes, by any process (`FileWriteCounter`, through inotify), which
/// must not have grown. A read
/// that fails the validation is thrown away, its pages with it
/// (`SQLITE_FCNTL_RESET_CACHE`, and SQLite's copy of the schema when it
/// may have changed, forgotten inside the next run), and runs again: the
/// writer it met has committed by then, or its next shared lock waits for
/// it. Nothing in between takes a real lock. SQLite never
/// sees a page half-written without knowing: the pages it read go when the
/// read goes, and an error it met on them (a malformed page) is thrown
/// away with the read.
///
/// A cycle takes the real lock, and is validated first, when the
/// connection asks for more than SHARED (a hot journal to roll back, a
/// write), opens the file's log or uses its wal-index (the file is in WAL
/// mode: readers never block writers there, and the first page does not
/// change at each commit, so WAL files never read without a lock; and the
/// lock is what keeps another process from leaving WAL mode and deleting
/// the log under the connection), and when a scope ends with the lock
/// still held (`PRAGMA locking_mode = EXCLUSIVE`). A file whose header
/// says WAL takes a real lock from the start. Memory-
/// mapped reads are refused while a lock is optimistic (SQLite then reads
/// with `xRead`): a writer that shrinks the file would make them fault.

enum WriterYieldingVFS {
    /// The name the VFS is registered under, or nil when it could not be
    /// registered (no default VFS): connections then open as usual.
    static let name: String? = register()

    /// Where, in a wrapped file, the pointer to the default VFS's file is.
    private static let innerPointerOffset = MemoryLayout<sqlite3_file>.stride
    /// Where the wrapped file's `SharedLockCycle` is (retained until `xClose`).
    private static let cyclePointerOffset = innerPointerOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
    /// Where the wrapped file's methods are (a copy of the default file's,
    /// with forwarding functions).
    private static let methodsOffset = cyclePointerOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
    /// Where the default VFS's file starts, aligned for any C object.
    private static let innerFileOffset =
        (methodsOffset + MemoryLayout<sqlite3_io_methods>.stride + 15) / 16 * 16

    private static func register() -> String? {
        guard let base = sqlite3_vfs_find(nil) else { return nil }
        let name = "reactivesqlite-writer-yielding"
        // Allocated once for the process, never freed: SQLite keeps the
        // pointer in its list of VFSes.
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: base.pointee)
        vfs.pointee.pNext = nil
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.pAppData = UnsafeMutableRawPointer(base)
        vfs.pointee.szOsFile = Int32(innerFileOffset) + base.pointee.szOsFile
        vfs.pointee.xOpen = { vfs, path, file, flags, outFlags in
            guard let vfs, let file else { return SQLITE_MISUSE }
            let base = vfs.pointee.pAppData.assumingMemoryBound(to: sqlite3_vfs.self)
            guard let open = base.pointee.xOpen else { return SQLITE_MISUSE }
            guard flags & SQLITE_OPEN_MAIN_DB != 0 else {
                // A log opened under an optimistic lock: the lock becomes
                // real first (see `SharedLockCycle.logWillOpen`).
                if flags & SQLITE_OPEN_WAL != 0, let path, let cycle = SharedLockCycle.optimisticCycleOfThread {
                    let code = cycle.logWillOpen(String(cString: path))
                    guard code == SQLITE_OK else {
                        file.pointee.pMethods = nil
                        return code
                    }
                }
                // Not wrapped: the default VFS's file fills the space.
                return open(base, path, file, flags, outFlags)
            }
            let outer = UnsafeMutableRawPointer(file)
            let inner = (outer + WriterYieldingVFS.innerFileOffset).assumingMemoryBound(to: sqlite3_file.self)
            inner.pointee.pMethods = nil
            let code = open(base, path, inner, flags, outFlags)
            // > If the xOpen method sets the sqlite3_file.pMethods element to
            // > a non-NULL pointer, then the sqlite3_io_methods.xClose method
            // > will be invoked even if the xOpen reported that it failed.
            // > https://www.sqlite.org/c3ref/vfs.html
            guard let innerMethods = inner.pointee.pMethods else {
                file.pointee.pMethods = nil
                return code
            }
            outer.storeBytes(of: inner, toByteOffset: WriterYieldingVFS.innerPointerOffset, as: UnsafeMutablePointer<sqlite3_file>.self)
            let cycle = Unmanaged.passRetained(SharedLockCycle(file: inner, path: path.map { String(cString: $0) }))
            outer.storeBytes(of: cycle.toOpaque(), toByteOffset: WriterYieldingVFS.cyclePointerOffset, as: UnsafeMutableRawPointer.self)
            let methods = (outer + WriterYieldingVFS.methodsOffset).bindMemory(to: sqlite3_io_methods.self, capacity: 1)
            methods.initialize(to: WriterYieldingVFS.forwardingMethods(of: innerMethods.pointee))
            file.pointee.pMethods = UnsafePointer(methods)
            return code
        }
        guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { return nil }
        return name
    }

    /// The file of the default VFS that `file` wraps.
    @inline(__always)
    fileprivate static func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        UnsafeMutableRawPointer(file!).load(fromByteOffset: innerPointerOffset, as: UnsafeMutablePointer<sqlite3_file>.self)
    }

    /// The methods of the default file's.
    @inline(__always)
    fileprivate static func methods(_ file: UnsafeMutablePointer<sqlite3_file>) -> sqlite3_io_methods {
        file.pointee.pMethods.unsafelyUnwrapped.pointee
    }

    /// The shared-lock cycle of a wrapped file.
    @inline(__always)
    fileprivate static func cycle(_ file: UnsafeMutablePointer<sqlite3_file>?) -> SharedLockCycle {
        Unmanaged<SharedLockCycle>.fromOpaque(
            UnsafeMutableRawPointer(file!).load(fromByteOffset: cyclePointerOffset, as: UnsafeMutableRawPointer.self)
        ).takeUnretainedValue()
    }

    /// The shared-lock cycle of `file`, the main database file of a
    /// connection, when this VFS wrapped it; nil otherwise.
    static func cycle(ofMainFile file: UnsafeMutablePointer<sqlite3_file>) -> SharedLockCycle? {
        guard let methods = file.pointee.pMethods,
            UnsafeRawPointer(methods) == UnsafeRawPointer(UnsafeMutableRawPointer(file) + methodsOffset)
        else { return nil }
        return cycle(file)
    }

    /// The methods of a wrapped file: each calls the default file's method
    /// of the same name on the default file, but `xLock`, which yields to
    /// a writer first. Of the same version as `base`, with the same
    /// methods present.
    private static func forwardingMethods(of base: sqlite3_io_methods) -> sqlite3_io_methods {
        var methods = base
        methods.xClose = { file in
            // SQLite releases its locks before it closes a file: this one
            // is for safety (the thread must not keep the cycle).
            let cycle = WriterYieldingVFS.cycle(file)
            if cycle.isOptimistic { cycle.end() }
            let inner = WriterYieldingVFS.inner(file)
            let code = WriterYieldingVFS.methods(inner).xClose!(inner)
            Unmanaged<SharedLockCycle>.fromOpaque(
                UnsafeMutableRawPointer(file!).load(fromByteOffset: WriterYieldingVFS.cyclePointerOffset, as: UnsafeMutableRawPointer.self)
            ).release()
            return code
        }
        methods.xRead = { file, buffer, count, offset in
            WriterYieldingVFS.cycle(file).read(buffer, count: count, offset: offset)
        }
        methods.xWrite = { file, buffer, count, offset in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xWrite!(inner, buffer, count, offset)
        }
        methods.xTruncate = { file, size in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xTruncate!(inner, size)
        }
        methods.xSync = { file, flags in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xSync!(inner, flags)
        }
        methods.xFileSize = { file, size in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xFileSize!(inner, size)
        }
        methods.xLock = { file, level in
            let inner = WriterYieldingVFS.inner(file)
            let methods = WriterYieldingVFS.methods(inner)
            let cycle = WriterYieldingVFS.cycle(file)
            if cycle.isOptimistic {
                // Held without a lock: validated, then taken for real.
                let code = cycle.makeReal()
                guard code == SQLITE_OK else { return code }
                return level == SQLITE_LOCK_SHARED ? SQLITE_OK : methods.xLock!(inner, level)
            }
            // A connection asks for SHARED only when it holds no lock.
            if level == SQLITE_LOCK_SHARED {
                var isReserved: Int32 = 0
                let code = methods.xCheckReservedLock!(inner, &isReserved)
                if code == SQLITE_OK, isReserved != 0 { return SQLITE_BUSY }
                if cycle.mayBeOptimistic, let code = cycle.beginOptimistically() { return code }
            }
            let code = methods.xLock!(inner, level)
            // A writer that took RESERVED between the check and the lock:
            // give the lock back before it tries to commit.
            if level == SQLITE_LOCK_SHARED, code == SQLITE_OK {
                #if REACTIVESQLITE_INTERNAL_CHECKS
                cycle.didTakeRealSharedLock()
                #endif
                var isReserved: Int32 = 0
                if methods.xCheckReservedLock!(inner, &isReserved) == SQLITE_OK, isReserved != 0 {
                    _ = methods.xUnlock!(inner, SQLITE_LOCK_NONE)
                    return SQLITE_BUSY
                }
            }
            return code
        }
        methods.xUnlock = { file, level in
            let inner = WriterYieldingVFS.inner(file)
            let cycle = WriterYieldingVFS.cycle(file)
            if cycle.isOptimistic {
                // Only SHARED is ever held without a lock.
                if level == SQLITE_LOCK_NONE { cycle.end() }
                return SQLITE_OK
            }
            return WriterYieldingVFS.methods(inner).xUnlock!(inner, level)
        }
        methods.xCheckReservedLock = { file, result in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xCheckReservedLock!(inner, result)
        }
        methods.xFileControl = { file, operation, argument in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xFileControl!(inner, operation, argument)
        }
        methods.xSectorSize = { file in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xSectorSize!(inner)
        }
        methods.xDeviceCharacteristics = { file in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xDeviceCharacteristics!(inner)
        }
        // Version 2: the wal-index in shared memory.
        if base.iVersion >= 2 {
            // A file whose wal-index is used is in WAL mode: its shared
            // locks are real from then on.
            if base.xShmMap != nil {
                methods.xShmMap = { file, region, size, extend, address in
                    let inner = WriterYieldingVFS.inner(file)
                    let code = WriterYieldingVFS.cycle(file).useWALIndex()
                    guard code == SQLITE_OK else { return code }
                    return WriterYieldingVFS.methods(inner).xShmMap!(inner, region, size, extend, address)
                }
            }
            if base.xShmLock != nil {
                methods.xShmLock = { file, offset, count, flags in
                    let inner = WriterYieldingVFS.inner(file)
                    let code = WriterYieldingVFS.cycle(file).useWALIndex()
                    guard code == SQLITE_OK else { return code }
                    return WriterYieldingVFS.methods(inner).xShmLock!(inner, offset, count, flags)
                }
            }
            if base.xShmBarrier != nil {
                methods.xShmBarrier = { file in
                    let inner = WriterYieldingVFS.inner(file)
                    WriterYieldingVFS.methods(inner).xShmBarrier!(inner)
                }
            }
            if base.xShmUnmap != nil {
                methods.xShmUnmap = { file, delete in
                    let inner = WriterYieldingVFS.inner(file)
                    return WriterYieldingVFS.methods(inner).xShmUnmap!(inner, delete)
                }
            }
        }
        // Version 3: memory-mapped reads.
        if base.iVersion >= 3 {
            if base.xFetch != nil {
                methods.xFetch = { file, offset, count, address in
                    // No mapping of a file read without a lock: a null
                    // pointer with SQLITE_OK makes SQLite read the page with
                    // xRead instead, as when a page lies beyond the mapping.
                    if WriterYieldingVFS.cycle(file).isOptimistic {
                        address?.pointee = nil
                        return SQLITE_OK
                    }
                    let inner = WriterYieldingVFS.inner(file)
                    return WriterYieldingVFS.methods(inner).xFetch!(inner, offset, count, address)
                }
            }
            if base.xUnfetch != nil {
                methods.xUnfetch = { file, offset, address in
                    let inner = WriterYieldingVFS.inner(file)
                    return WriterYieldingVFS.methods(inner).xUnfetch!(inner, offset, address)
                }
            }
        }
        return methods
    }
}
