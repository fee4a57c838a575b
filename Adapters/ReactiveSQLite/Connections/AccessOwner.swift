#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The identity of one `DatabaseQueue` or `DatabasePool`, shared by all its
/// connections, and recorded on each thread while it runs an access of them.
///
/// A new access of a queue or pool started on a thread that already runs one
/// of its accesses would deadlock (the same connection's serial queue, or a
/// pool's writer or readers all held by the outer accesses of this thread),
/// so it traps instead, whichever connection each access uses: a write inside
/// a read inside a write of a pool is caught as well as a write inside a write.
///
/// Sendable: immutable. The per-thread records live in thread-specific
/// storage, read and written only by their own thread.
final class AccessOwner: Sendable {
    /// `Configuration.label`, for messages.
    let label: String

    init(label: String) {
        self.label = label
    }

    /// Stops the program when the current thread runs an access of this
    /// queue or pool, with a message (printed in release builds too, unlike
    /// the message of a `precondition`).
    ///
    /// - Parameter operation: What was attempted, for the message.
    func preconditionNoAccessOnCurrentThread(_ operation: @autoclosure () -> String) {
        guard isAccessedOnCurrentThread else { return }
        fatalError(
            "\(operation()) was called from inside an access of the same database (\(label)): accesses are not "
                + "reentrant. Use the Database the closure was given instead, or start the access after this one returns.")
    }

    /// Whether the current thread runs an access of this queue or pool.
    var isAccessedOnCurrentThread: Bool {
        var frame = pthread_getspecific(Self.key)
        let identifier = ObjectIdentifier(self)
        while let current = frame?.assumingMemoryBound(to: Frame.self) {
            if current.pointee.owner == identifier { return true }
            frame = current.pointee.next
        }
        return false
    }

    /// Runs `body` as an access of this queue or pool on the current thread.
    func runAccess<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(Self.key)
        var frame = Frame(owner: ObjectIdentifier(self), next: previous)
        return try withUnsafeMutablePointer(to: &frame) { frame in
            pthread_setspecific(Self.key, frame)
            defer { pthread_setspecific(Self.key, previous) }
            return try body()
        }
    }

    /// One access in progress on a thread: a linked list from the innermost
    /// access outwards, each frame on the stack of `runAccess`.
    private struct Frame {
        var owner: ObjectIdentifier
        var next: UnsafeMutableRawPointer?
    }

    /// The thread-specific key of the innermost frame (created once, never deleted).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = pthread_key_create(&key, nil)
        precondition(code == 0, "pthread_key_create failed (\(code))")
        return key
    }()
}
