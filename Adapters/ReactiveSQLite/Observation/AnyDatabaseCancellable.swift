/// A token that stops an observation.
///
/// Call `cancel()`, or release the last reference: either way, no value or
/// notification is delivered after `cancel()` returns (a delivery already
/// under way on another thread is waited for first), and the observation
/// releases its resources.
public final class AnyDatabaseCancellable: Sendable {
    private let onCancel: LockedState<(@Sendable () -> Void)?>

    /// Creates a cancellable that runs `cancel` once, on the first call to
    /// `cancel()` or on deinit.
    public init(cancel: @escaping @Sendable () -> Void) {
        onCancel = LockedState(cancel)
    }

    deinit {
        cancel()
    }

    /// Stops the observation. Calling it again does nothing.
    public func cancel() {
        let cancel = onCancel.withLock { onCancel in
            defer { onCancel = nil }
            return onCancel
        }
        cancel?()
    }
}
