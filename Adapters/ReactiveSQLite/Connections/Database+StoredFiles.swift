#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

extension Database {
    /// A file SQLite keeps for the main database.
    package enum StoredFile: Sendable {
        /// The database file.
        case database
        /// The write-ahead log (WAL mode), or the rollback journal.
        case journal
    }

    /// Reads `count` bytes at `offset` of a file of the main database,
    /// through the file handle SQLite itself opened (no other descriptor is
    /// opened, so no POSIX lock of the process is dropped when it would be
    /// closed).
    ///
    /// The bytes are the file's, as stored: an encrypted database gives
    /// encrypted pages.
    ///
    /// - Returns: nil when the file is not open (no journal), or when it
    ///   ends before `offset + count`.
    /// - Throws: `DatabaseError` when SQLite cannot give the file, or the read fails.
    package func readStoredFile(_ file: StoredFile, offset: Int64, count: Int) throws -> [UInt8]? {
        checkAccess()
        guard let handle = try storedFileHandle(file), let read = handle.pointee.pMethods?.pointee.xRead else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let code = bytes.withUnsafeMutableBytes { read(handle, $0.baseAddress, Int32(count), offset) }
        // SQLITE_IOERR_SHORT_READ (a macro Swift does not import): the file ends before.
        if code == SQLITE_IOERR | (2 << 8) { return nil }
        try check(code)
        return bytes
    }

    /// The first `count` bytes of the wal-index (the `-shm` file, as SQLite
    /// maps it), copied after a memory barrier; nil when the connection has
    /// no wal-index mapped (not in WAL mode, or not read yet).
    ///
    /// Other processes change these bytes at any time: readers check what
    /// they copied (see `WALIndexHeader`).
    package func walIndexBytes(count: Int) throws -> [UInt8]? {
        checkAccess()
        guard let handle = try storedFileHandle(.database), let methods = handle.pointee.pMethods?.pointee,
            methods.iVersion >= 2, let map = methods.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        // Region 0, of the size SQLite uses (32 KB), never extended.
        let code = withUnsafeMutablePointer(to: &region) { pointer in
            pointer.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) {
                map(handle, 0, 32768, 0, UnsafeMutablePointer(mutating: $0))
            }
        }
        guard code == SQLITE_OK, let region else { return nil }
        methods.xShmBarrier?(handle)
        return Array(UnsafeRawBufferPointer(start: region, count: count))
    }

    private func storedFileHandle(_ file: StoredFile) throws -> UnsafeMutablePointer<sqlite3_file>? {
        var pointer: UnsafeMutableRawPointer?
        let operation = file == .database ? SQLITE_FCNTL_FILE_POINTER : SQLITE_FCNTL_JOURNAL_POINTER
        try check(sqlite3_file_control(connection, "main", operation, &pointer))
        guard let pointer else { return nil }
        let handle = pointer.assumingMemoryBound(to: sqlite3_file.self)
        return handle.pointee.pMethods == nil ? nil : handle
    }
}
