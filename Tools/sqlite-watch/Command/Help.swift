/// The texts of `sqlite-watch --help`.
enum Help {
    static let abstract = "Watch a live query on a SQLite database file, changed by any process."

    static let usage = """
        sqlite-watch DATABASE SQL [--ordered] [--key COLUMN ...] [--format table|json] [--count N]
                     [--passphrase-file PATH] [--serve HOST:PORT [--map X,Y] [--max-connections N]
                     [--header-timeout S] [--allow-host NAME ...] [--allow-origin ORIGIN ...]
                     [--token PATH | --no-auth] [--tls-cert PATH --tls-key PATH]]
          sqlite-watch                (a demo: a leaderboard changed by another process)
          sqlite-watch --serve HOST:PORT   (the demo in a browser: a leaderboard and a map)
        """

    static let discussion = """
        Prints the rows of the query as a table, then every change to them as soon as it is \
        committed, by this or any other process (the sqlite3 shell, another program): inserted \
        rows, updated rows with their changed columns (old → new), deleted rows, and with \
        --ordered the rows that moved (old and new position). The database is opened read-only, \
        and never created. Commits that come in a burst may show as one change.

        Rows are identified by the primary key of the query's only table, when the key columns \
        are in the result; else by the --key columns; else by all their values (then an updated \
        row shows as deleted and inserted).

        Without arguments, sqlite-watch runs a demo: it creates a temporary database with a \
        `player` leaderboard, starts a child process that keeps changing it, watches \
        `SELECT * FROM player ORDER BY score DESC LIMIT 10` with --ordered, stops after 20 \
        changes (or --count) or Ctrl-C, and removes its files and its child process.

        SERVING (--serve HOST:PORT, sqlite-watch built with `--traits Server`): instead of \
        printing, serves the query over HTTP until stopped, and prints its URL. / is a page \
        that shows the rows changing (a table, and a map of the rows' x/y or lon/lat columns, \
        or --map X,Y); /events is a stream of Server-Sent Events (`rows`, then one `diff` per \
        change, each the JSON object below, with an id: a client that reconnects with \
        Last-Event-ID resumes); /ws is the same over a WebSocket. No SQL comes from clients. \
        Requests are checked before they are read: --max-connections (503 beyond), \
        --header-timeout (408), Host must be an IP address, localhost, the --serve host or an \
        --allow-host name (421), a web page opening the WebSocket must be the server's own or an \
        --allow-origin (403). Beyond loopback (0.0.0.0, '*', a host name), --token FILE: every \
        request carries the token (Authorization: Bearer, or the cookie that /?token=TOKEN \
        sets); or --no-auth. --tls-cert FILE --tls-key FILE (PEM) serve HTTPS and wss: instead, \
        so that the token and the rows do not travel in clear.

        EXAMPLES:
          sqlite-watch app.db 'SELECT * FROM player'
          sqlite-watch app.db 'SELECT * FROM player ORDER BY score DESC' --ordered
          sqlite-watch app.db 'SELECT team, count(*) AS n FROM player GROUP BY team' \\
              --key team
          sqlite-watch app.db 'SELECT * FROM player' --format json | jq -c .inserted
          sqlite-watch --count 5                        (the demo, for 5 changes)
          sqlite-watch app.db 'SELECT * FROM place' --serve 127.0.0.1:8080   (open the URL)
        and meanwhile, in another terminal:
          sqlite3 app.db 'UPDATE player SET score = score + 10 WHERE id = 1'

        JSON OUTPUT (--format json), one object per line:
          {"rows":[...]}    the current rows, first, and again if the columns change
          {"inserted":[...],"updated":[...],"previous":[...],"deleted":[...]}
        Rows are objects keyed by column name. "previous" holds, at the index of \
        each updated row, the old values of its changed columns. With --ordered, \
        "insertedAt":[2] (the position of each inserted row) and \
        "moved":[{"from":3,"to":1,"row":{...}}] (positions start at 1). NULL is null; \
        integers are numbers, or strings beyond ±2^53 (which doubles would round); \
        infinite reals are "Infinity" or "-Infinity"; blobs are {"blob":"<hex>"} \
        (uppercase hexadecimal, as SQLite's hex()); a text that is not valid UTF-8 \
        is {"textBytes":"<hex>"} (in tables, its invalid bytes show as \\xE9). \
        Whether a value changed is decided on its bytes.

        ENCRYPTED DATABASES: with --passphrase-file PATH, the database is decrypted with \
        the passphrase on the first line of that file (SQLCipher; sqlite-watch built with \
        `--traits SQLCipher`). The passphrase is never an argument, which any user could \
        read in a process listing. A wrong passphrase fails at once (status 1).

        LOCKS: a read that meets a lock held by a writer waits for --busy-timeout; \
        whenever a lock outlasts it (at start-up or while watching), a note is printed \
        on standard error, once per lock episode, and the read is retried until the \
        lock is released (another note says so).

        SIGNALS: SIGINT (Ctrl-C), SIGTERM and SIGHUP end the tool with status 0 in any \
        state (even with its output blocked, or while it waits for a lock); SIGQUIT \
        (Ctrl-\\) ends it as the signal does by default.

        EXIT STATUS:
          0   --count changes printed; Ctrl-C (SIGINT), SIGTERM, SIGHUP; output closed
          1   no such file (it is never created), not a regular file (a FIFO, a socket,
              a device), not a database, unreadable file; file deleted, replaced,
              overwritten or truncated while watched; its write-ahead log (-wal)
              deleted or replaced while watched (its commits would be lost)
          2   invalid SQL (SQLite's message and the SQL are printed), not a read,
              a --key that is not a result column, a query a schema change broke
          64  invalid command line
          74  the output could not be written (a full disk, an I/O error): the
              message says why; the last line printed may be incomplete
        Rows and changes go to standard output; notes and errors to standard error.
        """
}
