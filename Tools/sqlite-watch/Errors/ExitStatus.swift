/// The exit statuses of `sqlite-watch`, as `--help` documents them.
enum ExitStatus: Int32, Sendable {
    /// The requested number of changes was printed, or the user pressed
    /// Ctrl-C (SIGINT) or sent SIGTERM, the terminal closed (SIGHUP), or the
    /// reader of the output went away.
    case success = 0
    /// The database file is missing, is not a database, cannot be read, or
    /// was deleted or replaced while watched.
    case databaseError = 1
    /// The query is not valid SQL, is not a read, or a `--key` is not one of
    /// its result columns.
    case queryError = 2
    /// The command line is invalid (swift-argument-parser's `EX_USAGE`).
    case usageError = 64
    /// Standard output could not be written (a full disk, an I/O error):
    /// what was printed may be incomplete (`EX_IOERR`). A closed output
    /// (`EPIPE`, a reader that went away) is a normal end, status 0.
    case outputError = 74
}
