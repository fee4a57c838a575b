import DatabaseRegions

/// How long a transaction observer stays registered.
public enum TransactionObservationExtent: Sendable {
    /// Until it is removed with `Database.remove(transactionObserver:)`, or
    /// deallocated (the database holds it weakly).
    case observerLifetime
    /// Until the end of the current transaction (or of the next one, outside
    /// of a transaction): removed after its commit or rollback. The database
    /// holds it strongly until then, so it may be added and forgotten.
    case nextTransaction
    /// Until the database connection is closed (the database holds it strongly).
    case databaseLifetime
}
