import Synchronization

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
    ///
    /// SQLite counts the timeout in whole milliseconds, in a 32-bit integer:
    /// the duration is rounded down to milliseconds, a longer one than
    /// `Int32.max` milliseconds (about 24.8 days) waits that long, and a
    /// negative one counts as `.zero`. Any duration opens fine.
    public var busyTimeout: Duration = .seconds(5)

    /// The maximum number of reader connections of a `DatabasePool`. Default 5;
    /// at least 1 (`DatabasePool.init` throws `SQLITE_MISUSE` otherwise).
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
    /// `DatabasePool`, and `<label>.watcher` for the connection that watches
    /// external changes (see `observesExternalChanges`).
    public var label: String = "ReactiveSQLite"

    /// How the writer connection learns about row changes, for observations.
    public enum ChangeTracking: Sendable, Hashable {
        /// SQLite's pre-update hook when the library has it (checked at run
        /// time with `sqlite3_compileoption_used`), else the update hook.
        ///
        /// With the pre-update hook, observers know old and new values: an
        /// UPDATE that changes no value is not a change, a row whose rowid
        /// changes is seen under both rowids, rows deleted by `INSERT OR
        /// REPLACE` are seen as deletions, WITHOUT ROWID tables are observed,
        /// and a VIRTUAL generated column changes only with the columns it is
        /// computed from.
        case automatic
        /// SQLite's update hook only, as on a library built without the
        /// pre-update hook: every UPDATE of an observed column is a potential
        /// change (even one that changes no value); an UPDATE that may change
        /// rowids, and a write that may delete rows through a REPLACE conflict
        /// on a unique index (`INSERT OR REPLACE`, `UPDATE OR REPLACE`, a
        /// trigger's write, an `ON CONFLICT REPLACE` constraint), which the
        /// hook does not report, are potential changes of every row of the
        /// table; user transaction observers get no event for those deleted
        /// rows, nor for the rows that a foreign-key action deletes or
        /// changes with them; and WITHOUT ROWID tables, which the hook does not report,
        /// are observed per statement: a statement that may write one and
        /// changes rows is a potential change of every row of the table
        /// (user transaction observers get no event for them).
        ///
        /// A library without the pre-update hook (SQLCipher 3.4.1, with the
        /// `SQLCipher` package trait) takes this path whatever the setting.
        case updateHookOnly
    }

    /// How the writer connection tracks changes. Default `.automatic`.
    public var changeTracking: ChangeTracking = .automatic

    /// Whether observations notice commits made by other connections and
    /// other processes to the same database file. Default false.
    ///
    /// SQLite's hooks only see the commits of their own connection. With
    /// this option, while at least one observation runs on the queue or
    /// pool, a dedicated read-only connection (labelled `<label>.watcher`)
    /// polls `PRAGMA data_version` every `externalChangePollInterval`, and
    /// on Linux also as soon as the database file, its write-ahead log or
    /// its journal is written (inotify): commits are then seen within
    /// milliseconds, and the interval only bounds the delay on file systems
    /// that report no such events. A
    /// detected external commit counts as a change of the whole database:
    /// value and record observations fetch again (with all their
    /// guarantees), region observations are called once per detection on
    /// the writer's queue, and `TransactionObserver`s are not told. Several
    /// external commits between two polls make one detection. In WAL mode,
    /// the observations that refetch only the rows a commit changed
    /// (`trackingSetDifferences` of a table keyed by an `INTEGER PRIMARY
    /// KEY`, `trackingAll` of a request with a limit) learn those rows from
    /// the pages the external commits wrote in the log.
    ///
    /// Nothing is polled while no observation runs, after the database is
    /// closed, or for an in-memory database. The option works on a
    /// read-only `DatabaseQueue` (see `readonly`) opened on a file that
    /// another process writes.
    ///
    /// The connections of such a queue or pool yield to the writers of
    /// other connections, so that a watch does not make their commits fail
    /// (a writer without a busy timeout fails when a reader holds a shared
    /// lock as it commits): in rollback-journal mode, a read waits while
    /// another connection holds a RESERVED lock, and the observations'
    /// fetches and polls take no lock at all: they read, then check that no
    /// writer was at work meanwhile, and run again after the commit of one
    /// that was. <doc:ExternalChanges> explains the mechanism and its costs.
    ///
    /// When the database file is deleted or replaced (another file renamed
    /// over its path), the connections would go on reading the file they
    /// opened, which nobody changes any more: every value and record
    /// observation ends with a `DatabaseError` of code
    /// `SQLITE_READONLY_DBMOVED`, within one poll interval (at once on
    /// Linux), and so does every observation started later.
    public var observesExternalChanges: Bool = false

    /// How often external changes are looked for, when
    /// `observesExternalChanges` is true: the bound on the delay between an
    /// external commit and its detection (plus the time of an access of the
    /// writer already running, and of the fetch). On Linux, file events
    /// usually see the commit first. Must be positive: a queue
    /// or pool that observes external changes stops the program otherwise.
    /// Default 100 milliseconds.
    public var externalChangePollInterval: Duration = .milliseconds(100)

    /// A function run on every connection the database opens, right after
    /// it opens, before any statement reads the file: set a key, pragmas,
    /// register functions. Default nil.
    ///
    /// ```swift
    /// var configuration = Configuration()
    /// configuration.prepareDatabase = { db in
    ///     // Every commit of this pool survives a power loss (the pool's default is NORMAL).
    ///     try db.execute(sql: "PRAGMA synchronous = FULL")
    /// }
    /// let dbPool = try DatabasePool(path: "/path/to/db.sqlite", configuration: configuration)
    /// ```
    ///
    /// It runs once per connection, on the thread that opens it, with the
    /// connection's `Database` (`db.label` tells which connection it is):
    /// - a `DatabaseQueue`'s connection, in `init`;
    /// - a `DatabasePool`'s writer, in `init`, and each of its readers when a
    ///   read first needs it (up to `maximumReaderCount` readers, each
    ///   opened once);
    /// - the connection that watches external changes (see
    ///   `observesExternalChanges`), each time it is opened: when an
    ///   observation starts while none runs.
    ///
    /// What runs before it reads nothing from the file (the busy timeout,
    /// `foreignKeysEnabled` and SQLite's extended result codes are set with
    /// C calls), so that a key it sets is there for every read. After it:
    /// a `DatabasePool` sets `PRAGMA synchronous = NORMAL` on the connection,
    /// unless this function set `PRAGMA synchronous` itself (its level wins),
    /// then the schema is read, and a pool's writer switches the file to WAL
    /// mode. A `DatabaseQueue` keeps whatever this function sets.
    ///
    /// A pool's readers are read-only: a statement that writes fails there.
    /// An error thrown by this function closes the connection and is
    /// rethrown unchanged by what opened it: the queue's or pool's `init`
    /// (which then leaves nothing open), the read that needed a new reader,
    /// or the start of an observation that needed the watching connection
    /// (the error reaches the observation's `onError`).
    /// A transaction it leaves open is rolled back, and the open throws a
    /// `DatabaseError` (`SQLITE_MISUSE`).
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?

    /// What the connections made with this configuration (and its copies)
    /// learn of each other's settings.
    let connectionSettings = ConnectionSettings()

    /// Creates the default configuration.
    public init() {}

    /// `busyTimeout` for `sqlite3_busy_timeout`: whole milliseconds, clamped
    /// to `0...Int32.max`.
    var busyTimeoutMilliseconds: Int32 {
        // Compared before any arithmetic: the components of a long duration
        // overflow when converted to milliseconds.
        if busyTimeout <= .zero { return 0 }
        if busyTimeout >= .milliseconds(Int32.max) { return .max }
        let (seconds, attoseconds) = busyTimeout.components
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// Settings that any connection of a configuration may have changed, for
/// the others: a pool's writer evaluates row filters for queries that its
/// readers run.
final class ConnectionSettings: Sendable {
    /// Whether one of the connections compiled `PRAGMA case_sensitive_like
    /// = ...` (see `Database.authorizerAnswer`): a query may then compare
    /// with a `LIKE` that the private database of `RowFilterEvaluator` does
    /// not have. The pragma cannot be read back: once set, for good.
    let caseSensitiveLikeMayBeSet = Atomic<Bool>(false)
}
