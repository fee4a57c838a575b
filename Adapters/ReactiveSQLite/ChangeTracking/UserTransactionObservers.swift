#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import DatabaseRegions

/// The `TransactionObserver`s a user added to a writer connection
/// (`Database.add(transactionObserver:extent:)`), with their extents: which
/// of them want a statement's row events, whether they let a transaction
/// commit, and the end of each transaction.
///
/// Writer's queue only. The properties read at each statement are
/// `@exclusivity(unchecked)`, as the broker's (see `ObservationBroker`).
final class UserTransactionObservers {
    private struct Entry {
        weak var weakObserver: (any TransactionObserver)?
        var strongObserver: (any TransactionObserver)?
        var extent: TransactionObservationExtent
        var observer: (any TransactionObserver)? { strongObserver ?? weakObserver }
    }
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// The error thrown by an observer's `databaseWillCommit()`, for the
    /// statement that tried to commit to throw when it ends. A statement
    /// that starts meanwhile (run by another observer's
    /// `databaseDidRollback`) forgets it: the commit then throws SQLite's
    /// `SQLITE_CONSTRAINT_COMMITHOOK`.
    @exclusivity(unchecked) private(set) var willCommitError: (any Error)?

    var isEmpty: Bool { entries.isEmpty }

    func add(_ observer: some TransactionObserver, extent: TransactionObservationExtent) {
        switch extent {
        case .databaseLifetime, .nextTransaction:
            entries.append(Entry(strongObserver: observer, extent: extent))
        case .observerLifetime:
            entries.append(Entry(weakObserver: observer, extent: extent))
        }
    }

    func remove(_ observer: some TransactionObserver) {
        entries.removeAll { $0.observer == nil || $0.observer === observer }
    }

    func removeAll() {
        entries = []
    }

    /// Which observers want which row events of a statement.
    ///
    /// - Parameter usesPreUpdateHook: Whether events come from the
    ///   pre-update hook, which reports more kinds of events per statement.
    func interests(
        in effects: StatementEffects, usesPreUpdateHook: Bool
    ) -> [StatementContext.UserObserverInterest: [any TransactionObserver]] {
        guard !effects.writes.isEmpty, !entries.isEmpty else { return [:] }
        entries.removeAll { $0.observer == nil }
        var interests: [StatementContext.UserObserverInterest: [any TransactionObserver]] = [:]
        for writes in effects.writes {
            let table = writes.name.lowercasedIdentifier
            var kinds: [(Int32, DatabaseEventKind)] = []
            if writes.inserts { kinds.append((SQLITE_INSERT, .insert(tableName: writes.name))) }
            if writes.deletes { kinds.append((SQLITE_DELETE, .delete(tableName: writes.name))) }
            if !writes.updatedColumns.isEmpty {
                kinds.append((SQLITE_UPDATE, .update(tableName: writes.name, columnNames: writes.updatedColumns)))
            }
            // With the pre-update hook, a changed rowid is reported as a
            // deletion and an insertion, and the rows that an `INSERT OR
            // REPLACE` (or `UPDATE OR REPLACE`) deletes, which the
            // authorizer does not announce, as deletions.
            if usesPreUpdateHook {
                if writes.inserts || !writes.updatedColumns.isEmpty {
                    kinds.append((SQLITE_DELETE, .delete(tableName: writes.name)))
                }
                if !writes.updatedColumns.isEmpty { kinds.append((SQLITE_INSERT, .insert(tableName: writes.name))) }
            }
            for (operation, kind) in kinds {
                let interest = StatementContext.UserObserverInterest(table: table, operation: operation)
                guard interests[interest] == nil else { continue }
                let observers = entries.compactMap { entry -> (any TransactionObserver)? in
                    guard let observer = entry.observer, observer.observes(eventsOfKind: kind) else { return nil }
                    return observer
                }
                if !observers.isEmpty { interests[interest] = observers }
            }
        }
        return interests
    }

    /// Asks each observer whether the transaction may commit; false when
    /// one throws (its error is `willCommitError`).
    func allowCommit() -> Bool {
        for entry in entries {
            guard let observer = entry.observer else { continue }
            do {
                try observer.databaseWillCommit()
            } catch {
                willCommitError = error
                return false
            }
        }
        return true
    }

    /// The error of a vetoed commit, once: the statement that tried to
    /// commit throws it.
    func takeWillCommitError() -> (any Error)? {
        defer { willCommitError = nil }
        return willCommitError
    }

    func forgetWillCommitError() {
        willCommitError = nil
    }

    /// Tells every observer of the commit; those of `.nextTransaction`, and
    /// those released, go.
    func transactionDidCommit(_ database: Database) {
        for entry in entries {
            entry.observer?.databaseDidCommit(database)
        }
        removeEnded()
    }

    /// Tells every observer of the rollback; those of `.nextTransaction`,
    /// and those released, go.
    func transactionDidRollback(_ database: Database) {
        for entry in entries {
            entry.observer?.databaseDidRollback(database)
        }
        removeEnded()
    }

    private func removeEnded() {
        entries.removeAll { $0.observer == nil || $0.extent == .nextTransaction }
    }
}
