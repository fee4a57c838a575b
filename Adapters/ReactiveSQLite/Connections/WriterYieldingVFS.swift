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

enum WriterYieldingVFS {
    /// The name the VFS is registered under, or nil when it could not be
    /// registered (no default VFS): connections then open as usual.
    static let name: String? = register()

    /// Where, in a wrapped file, the pointer to the default VFS's file is.
    private static let innerPointerOffset = MemoryLayout<sqlite3_file>.stride
    /// Where the wrapped file's methods are (a copy of the default file's,
    /// with forwarding functions).
    private static let methodsOffset = innerPointerOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
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

    /// The methods of a wrapped file: each calls the default file's method
    /// of the same name on the default file, but `xLock`, which yields to
    /// a writer first. Of the same version as `base`, with the same
    /// methods present.
    private static func forwardingMethods(of base: sqlite3_io_methods) -> sqlite3_io_methods {
        var methods = base
        methods.xClose = { file in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xClose!(inner)
        }
        methods.xRead = { file, buffer, count, offset in
            let inner = WriterYieldingVFS.inner(file)
            return WriterYieldingVFS.methods(inner).xRead!(inner, buffer, count, offset)
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
            // A connection asks for SHARED only when it holds no lock.
            if level == SQLITE_LOCK_SHARED {
                var isReserved: Int32 = 0
                let code = methods.xCheckReservedLock!(inner, &isReserved)
                if code == SQLITE_OK, isReserved != 0 { return SQLITE_BUSY }
            }
            let code = methods.xLock!(inner, level)
            // A writer that took RESERVED between the check and the lock:
            // give the lock back before it tries to commit.
            if level == SQLITE_LOCK_SHARED, code == SQLITE_OK {
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
            if base.xShmMap != nil {
                methods.xShmMap = { file, region, size, extend, address in
                    let inner = WriterYieldingVFS.inner(file)
                    return WriterYieldingVFS.methods(inner).xShmMap!(inner, region, size, extend, address)
                }
            }
            if base.xShmLock != nil {
                methods.xShmLock = { file, offset, count, flags in
                    let inner = WriterYieldingVFS.inner(file)
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
