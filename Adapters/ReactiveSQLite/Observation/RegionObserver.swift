import DatabaseRegions

/// The runtime of a `DatabaseRegionObservation`.
///
/// `@unchecked Sendable`: `observerID` and `region` are only touched on
/// the writer's queue; the rest is immutable or a `DeliveryGate`.
final class RegionObserver: DatabaseCommitObserver, @unchecked Sendable {
    let host: any ObservationHost
    let regions: [any DatabaseRegionConvertible]
    let onChange: @Sendable (Database) -> Void
    /// Told when the observation ends with an error (the database file
    /// deleted or replaced under the connections).
    let onError: @Sendable (any Error) -> Void
    let gate = DeliveryGate()
    var observerID: Int?

    init(
        host: any ObservationHost, regions: [any DatabaseRegionConvertible],
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Database) -> Void
    ) {
        self.host = host
        self.regions = regions
        self.onError = onError
        self.onChange = onChange
    }

    func databaseDidCommit(_ db: Database, _ commit: DatabaseCommit) {
        // A schema change may have redefined a view the regions read: they
        // are recorded again (kept when they no longer compile).
        if commit.changesSchema, let observerID, let region = try? db.observedRegion(of: regions) {
            db.observationBroker.updateRegion(region, forObserver: observerID)
        }
        gate.deliver { onChange(db) }
    }

    /// The file the connections read is no longer the one at the path: the
    /// observation ends with `error`, unless it was cancelled.
    func databaseFileDidMove(_ db: Database, _ error: DatabaseError) {
        guard let observerID else { return }
        self.observerID = nil
        db.observationBroker.unregister(observerID)
        host.observationDidEnd()
        gate.deliver { onError(error) }
        gate.cancel()
    }

    func cancel() {
        guard gate.cancel() else { return }
        if host.writer.isCurrentQueue {
            // Cancelled on the writer (from inside `onChange`): unregister now.
            if let observerID {
                host.writer.database.observationBroker.unregister(observerID)
                host.observationDidEnd()
            }
            observerID = nil
            return
        }
        host.writer.asyncWithoutWaiting { [self] db in
            guard let observerID else { return }
            self.observerID = nil
            db.observationBroker.unregister(observerID)
            host.observationDidEnd()
        }
    }
}
