/// How a `DatabaseQueue` or a `DatabasePool` opens and uses its connections.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.label = "main"
/// configuration.busyTimeout = .seconds(2)
/// let dbQueue = try DatabaseQueue(path: "/tmp/db.sqlite", configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// Whether SQLite enforces foreign keys (`PRAGMA foreign_keys`). Default true.
    public var foreignKeysEnabled: Bool = true

    /// Whether connections are opened read-only. Default false.
    ///
    /// A read-only connection never creates the database file: opening a
    /// missing file throws `SQLITE_CANTOPEN`. Writes throw `SQLITE_READONLY`.
    public var readonly: Bool = false

    /// How long a statement that meets a lock held by another connection or
    /// process waits for it to be released before it throws `SQLITE_BUSY`.
    /// Default 5 seconds; `.zero` throws at once.
    public var busyTimeout: Duration = .seconds(5)

    /// The maximum number of reader connections of a `DatabasePool`. Default 5.
    ///
    /// Readers are opened when first needed. When all are busy, a read waits
    /// for one to be released (without blocking a cooperative thread when the
    /// access is `async`).
    public var maximumReaderCount: Int = 5

    /// A name for the connections, used in the labels of their dispatch queues
    /// (and so in thread names in a debugger or a crash report) and in the
    /// description of `DatabaseError`. Default `"ReactiveSQLite"`.
    ///
    /// Each connection adds its role: `<label>.queue` for a `DatabaseQueue`,
    /// `<label>.writer` and `<label>.reader.1`, `<label>.reader.2`... for a
    /// `DatabasePool`.
    public var label: String = "ReactiveSQLite"

    /// How the writer connection learns about row changes, for observations.
    public enum ChangeTracking: Sendable, Hashable {
        /// SQLite's pre-update hook when the library has it (checked at run
        /// time with `sqlite3_compileoption_used`), else the update hook.
        ///
        /// With the pre-update hook, observers know old and new values: an
        /// UPDATE that changes no value is not a change, a row whose rowid
        /// changes is seen under both rowids, rows deleted by `INSERT OR
        /// REPLACE` are seen as deletions, and WITHOUT ROWID tables are observed.
        case automatic
        /// SQLite's update hook only, as on a library built without the
        /// pre-update hook: every UPDATE of an observed column is a potential
        /// change (even one that changes no value), rows deleted by `INSERT OR
        /// REPLACE` conflicts are not seen, and changes to WITHOUT ROWID tables
        /// are not observed.
        case updateHookOnly
    }

    /// How the writer connection tracks changes. Default `.automatic`.
    public var changeTracking: ChangeTracking = .automatic

    /// Whether observations notice commits made by other connections and
    /// other processes to the same database file. Default false.
    ///
    /// When true, and while at least one observation runs, a dedicated
    /// connection reads `PRAGMA data_version` every
    /// `externalChangePollInterval`. A commit made elsewhere counts as a
    /// change of the whole database for every active observation: value
    /// observations fetch again, region observations are notified once per
    /// detection. Nothing is polled while no observation runs, nor when
    /// this option is false. In-memory databases have no other writer, and
    /// ignore it.
    public var observesExternalChanges: Bool = false

    /// How often external changes are looked for, when
    /// `observesExternalChanges` is true: the bound on the delay between an
    /// external commit and its notification (plus the time of the fetch).
    /// Default 100 milliseconds.
    public var externalChangePollInterval: Duration = .milliseconds(100)

    /// Creates the default configuration.
    public init() {}

    var busyTimeoutMilliseconds: Int32 {
        let (seconds, attoseconds) = busyTimeout.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}
