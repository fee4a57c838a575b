#if PostgreSQL
import Synchronization

/// Counts what the replicator holds of the initial copy: the rows read
/// from PostgreSQL and not yet written to the replica, and the bytes of
/// their values. The most it held at once is what the copy's memory grows
/// with; a test checks that it stays bounded whatever the size of the
/// tables.
final class CopyMeter: Sendable {
    /// Rows and the bytes of their values.
    struct Amount: Equatable {
        /// The rows.
        var rows = 0
        /// The bytes of their values, as PostgreSQL sent them.
        var bytes = 0
    }

    /// What is held now, and the most held at once (rows and bytes each).
    private let amounts = Mutex<(held: Amount, peak: Amount)>((Amount(), Amount()))

    /// A copy starts: it holds nothing (a failed copy before it dropped
    /// what it held).
    func start() {
        amounts.withLock { $0.held = Amount() }
    }

    /// Counts a batch read from PostgreSQL.
    func read(_ amount: Amount) {
        amounts.withLock { amounts in
            amounts.held.rows += amount.rows
            amounts.held.bytes += amount.bytes
            amounts.peak.rows = max(amounts.peak.rows, amounts.held.rows)
            amounts.peak.bytes = max(amounts.peak.bytes, amounts.held.bytes)
        }
    }

    /// Counts a batch written to the replica.
    func released(_ amount: Amount) {
        amounts.withLock { amounts in
            amounts.held.rows -= amount.rows
            amounts.held.bytes -= amount.bytes
        }
    }

    /// The most rows, and the most bytes, held at once.
    var peak: Amount { amounts.withLock { $0.peak } }
}
#endif
