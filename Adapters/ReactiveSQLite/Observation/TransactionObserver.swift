import DatabaseRegions

/// A type that follows the transactions of a writer connection: the row
/// changes they make, their commits and their rollbacks.
///
/// Register one with `Database.add(transactionObserver:extent:)`. Every
/// method is called on the writer connection's queue, inside the access
/// that runs the statement.
///
/// ```swift
/// final class ChangeCounter: TransactionObserver {
///     var count = 0
///     func observes(eventsOfKind kind: DatabaseEventKind) -> Bool { kind.tableName == "player" }
///     func databaseDidChange(with event: DatabaseEvent) { count += 1 }
///     func databaseDidCommit(_ db: Database) { print("\(count) changes committed") ; count = 0 }
///     func databaseDidRollback(_ db: Database) { count = 0 }
/// }
/// ```
///
/// An event is delivered once nothing but a rollback of the whole
/// transaction can undo it: when its statement ends successfully (a
/// statement that fails and is undone by SQLite, such as a CHECK or UNIQUE
/// violation caught inside a transaction, delivers none of its events),
/// and inside a savepoint when the outermost savepoint is released (or the
/// transaction commits); a `ROLLBACK TO` drops the events of the savepoint,
/// and a rollback drops every event of the transaction. Virtual tables
/// (FTS, R*Tree) produce no event: the writes of their shadow tables do.
/// On the pre-update hook path (see `Configuration.changeTracking`) an
/// UPDATE that leaves every value unchanged produces no event, an UPDATE
/// that changes a rowid produces a deletion of the old rowid and an
/// insertion of the new one, rows deleted by `INSERT OR REPLACE` produce
/// deletions, and WITHOUT ROWID tables produce events with a nil rowid.
///
/// On the update-hook path, an UPDATE event names every column the
/// statement sets, whether its value changed or not; an UPDATE that changes
/// a rowid produces one update event, with the new rowid (observations then
/// count it as a change of any row of the table); rows deleted by
/// `INSERT OR REPLACE` produce no event (observations count a write that may
/// replace on a unique index as a change of any row of the table);
/// WITHOUT ROWID tables produce no event at all.
public protocol TransactionObserver: AnyObject {
    /// Whether the observer wants the events of this kind. Called once per
    /// statement for each kind of change the statement may make (including
    /// through triggers and foreign key actions), before it runs.
    func observes(eventsOfKind kind: DatabaseEventKind) -> Bool

    /// A row change of a kind the observer asked for.
    func databaseDidChange(with event: DatabaseEvent)

    /// Called before a transaction commits. Throwing an error rolls the
    /// transaction back, and the statement that was committing throws that error.
    func databaseWillCommit() throws

    /// Called after a transaction has committed, before any other statement runs.
    ///
    /// A transaction begun here must end here: one still open when the
    /// access ends is rolled back, and the access throws a `DatabaseError`
    /// (`SQLITE_MISUSE`).
    func databaseDidCommit(_ db: Database)

    /// Called after a transaction has rolled back.
    func databaseDidRollback(_ db: Database)
}

extension TransactionObserver {
    /// Does nothing: the commit goes on.
    public func databaseWillCommit() throws {}
}

extension Database {
    /// Registers a transaction observer.
    ///
    /// - Parameters:
    ///   - transactionObserver: The observer.
    ///   - extent: How long it stays registered. Default `.observerLifetime`:
    ///     the database holds it weakly.
    public func add(
        transactionObserver: some TransactionObserver,
        extent: TransactionObservationExtent = .observerLifetime
    ) {
        checkAccess()
        observationBroker.add(transactionObserver: transactionObserver, extent: extent)
    }

    /// Unregisters a transaction observer.
    public func remove(transactionObserver: some TransactionObserver) {
        checkAccess()
        observationBroker.remove(transactionObserver: transactionObserver)
    }
}
