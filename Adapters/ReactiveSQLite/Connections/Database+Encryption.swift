#if SQLCipher
internal import CSQLCipher
#endif

extension Database {
    /// Sets the passphrase that decrypts the database, from
    /// `Configuration.prepareDatabase` (SQLCipher's `sqlite3_key`).
    ///
    /// ```swift
    /// var configuration = Configuration()
    /// configuration.prepareDatabase = { db in
    ///     try db.usePassphrase(passphrase)
    /// }
    /// let dbQueue = try DatabaseQueue(path: "/path/to/encrypted.sqlite", configuration: configuration)
    /// ```
    ///
    /// Call it in `prepareDatabase`, which runs on every connection of a
    /// queue or pool (readers and the connection that watches external
    /// changes included) before anything reads the file. A new file is
    /// created encrypted with this passphrase; an empty passphrase leaves it
    /// unencrypted.
    ///
    /// SQLite checks the passphrase when it first reads the file, which the
    /// queue or pool does right after `prepareDatabase`: a wrong passphrase
    /// (or a file that is not a database) fails the open, never a later
    /// access, with a `DatabaseError` whose code is `SQLITE_NOTADB`.
    ///
    /// - Parameter passphrase: The passphrase, used as UTF-8 bytes.
    /// - Throws: A `DatabaseError` (`SQLITE_MISUSE`) when ReactiveSQLite was
    ///   built without the `SQLCipher` trait (plain SQLite cannot decrypt);
    ///   `SQLITE_TOOBIG` for a passphrase of 2 GiB or more; SQLCipher's
    ///   error otherwise.
    public func usePassphrase(_ passphrase: String) throws {
        checkAccess()
        #if SQLCipher
        try check(withPassphraseBytes(passphrase) { bytes, count in _rsqlite_key(connection, bytes, count) })
        #else
        throw encryptionUnavailableError(function: "usePassphrase(_:)")
        #endif
    }

    /// Changes the passphrase of an encrypted database and re-encrypts the
    /// file with it (SQLCipher's `sqlite3_rekey`).
    ///
    /// ```swift
    /// try dbQueue.writeWithoutTransaction { db in
    ///     try db.changePassphrase(newPassphrase)
    /// }
    /// ```
    ///
    /// The connection must have opened the file with its current passphrase
    /// (`usePassphrase(_:)` in `Configuration.prepareDatabase`), and must not
    /// be inside a transaction. The file is rewritten page by page in one
    /// transaction: it reads with the new passphrase only once this returns.
    ///
    /// Only this connection knows the new passphrase, so it runs only on a
    /// `DatabaseQueue` whose configuration does not observe external changes
    /// (other connections would keep reading with the old one): a pool's
    /// readers, and the connection that watches external changes, cannot
    /// be given the new key. Close every other connection to the file, then
    /// open it again with a configuration whose `prepareDatabase` uses the
    /// new passphrase.
    ///
    /// - Parameter passphrase: The new passphrase, used as UTF-8 bytes.
    /// - Throws: A `DatabaseError` (`SQLITE_MISUSE`) when ReactiveSQLite was
    ///   built without the `SQLCipher` trait, when a transaction is open,
    ///   on a `DatabasePool`, or on a queue that observes external changes;
    ///   `SQLITE_TOOBIG` for a passphrase of 2 GiB or more; SQLCipher's error otherwise (`SQLITE_BUSY` when another connection
    ///   holds a lock on the file).
    public func changePassphrase(_ passphrase: String) throws {
        checkAccess()
        #if SQLCipher
        guard isQueueConnection, !configuration.observesExternalChanges else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "changePassphrase(_:) runs only on a DatabaseQueue that does not observe external changes: "
                    + "the other connections of a pool, or the one that watches external changes, would keep the old "
                    + "passphrase; close them and change it from a DatabaseQueue",
                connectionLabel: label)
        }
        guard !isInsideTransaction else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "changePassphrase(_:) cannot run inside a transaction: call it from writeWithoutTransaction",
                connectionLabel: label)
        }
        try check(withPassphraseBytes(passphrase) { bytes, count in _rsqlite_rekey(connection, bytes, count) })
        #else
        throw encryptionUnavailableError(function: "changePassphrase(_:)")
        #endif
    }

    #if SQLCipher
    /// Calls `body` with the UTF-8 bytes of `passphrase` and their count.
    ///
    /// - Throws: A `DatabaseError` (`SQLITE_TOOBIG`) for a passphrase of
    ///   2 GiB or more, whose length a C `int` cannot hold.
    private func withPassphraseBytes(
        _ passphrase: String, _ body: (UnsafeRawPointer?, Int32) -> Int32
    ) throws -> Int32 {
        var passphrase = passphrase
        return try passphrase.withUTF8 { bytes in
            guard let count = Int32(exactly: bytes.count) else {
                throw DatabaseError(
                    resultCode: .SQLITE_TOOBIG, message: "the passphrase is too long", connectionLabel: label)
            }
            return body(bytes.baseAddress.map(UnsafeRawPointer.init), count)
        }
    }
    #else
    private func encryptionUnavailableError(function: String) -> DatabaseError {
        DatabaseError(
            resultCode: .SQLITE_MISUSE,
            message: "\(function) needs SQLCipher: this ReactiveSQLite is built on SQLite, which cannot encrypt. "
                + "Enable the package trait SQLCipher (swift build --traits SQLCipher, or traits: [\"SQLCipher\"] "
                + "in the dependency), with libsqlcipher-dev installed",
            connectionLabel: label)
    }
    #endif
}
