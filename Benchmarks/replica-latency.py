#!/usr/bin/env python3
"""Latency from a PostgreSQL commit to `sqlite-replica`'s SQLite commit and
to `sqlite-watch`'s JSON line on the replica, and the CPU that a slot costs
PostgreSQL under 1 000 transactions a second.

PostgreSQL is driven by one long-lived `psql` (standard input a pipe): each
statement is followed by `\\echo MARK n`, and a commit is time-stamped when
its mark is read back, so no process start-up is measured. The replica
file is polled from Python's sqlite3 (`PRAGMA data_version`, then the
updated row) every `--poll` seconds; the measured poll granularity is
reported with the figures.

1. **Commit to replica.** `--commits` single-row UPDATEs, `--interval`
   apart on average (uniformly 0.5x to 1.5x, so that the commits do not
   keep one phase against the replicator's 5 ms poll cycle); one sample
   is the time from the mark of the UPDATE to the first poll that reads
   the new value in the replica.
2. **Commit to sqlite-watch.** The same, with `sqlite-watch --format json`
   running on the replica: the time from the mark to the line that carries
   the new value (and, from the polls, how much of it is the replica).
3. **Idle.** Nothing is committed for `--idle` seconds: the CPU of
   sqlite-replica and of its PostgreSQL backend (the replicator polls the
   slot every 5 ms).
4. **Load.** `pgbench --rate` (default 1 000 transactions a second) runs
   one-row UPDATEs of the published table for `--duration` seconds, first
   without the replicator (no slot exists yet), then with it; the same
   load both times, after VACUUM and CHECKPOINT. Reported: the CPU (user +
   system, /proc/PID/stat) of the whole cluster (the postmaster, its live
   children, and the children it reaped, from its cutime/cstime), of the
   backend that serves the replicator, and of sqlite-replica, from the
   start of the load until the replica caught up (the load's end plus one
   second without it), divided by the load's duration: shares of one core.
   While the load runs, a marker row is updated every `--lag-interval`
   seconds (in both runs) and its arrival in the replica timed, and the
   slot's restart_lsn and confirmed_flush_lsn are read (with the
   replicator); at the load's end, the replica's lag behind
   pg_current_wal_lsn() is read, and the time it takes to catch up.

The replicator's backend is found from the replicator's own TCP sockets
(/proc/PID/fd and /proc/net/tcp give the client ports;
pg_stat_activity.client_port gives the backend), and checked against
its query text. PostgreSQL must run on this machine for the CPU figures.

Without `--url`, a throw-away cluster is started with `.ci/postgres start`
in a new folder of /tmp, and stopped and removed at the end (also on
failure). With `--url`, the table, the publication and the slot are
created there, and dropped at the end.

    swift build -c release --traits PostgreSQL --scratch-path /tmp/relbench-build --product sqlite-replica
    swift build -c release --traits PostgreSQL --scratch-path /tmp/relbench-build --product sqlite-watch
    python3 Benchmarks/replica-latency.py \\
        --replica-tool /tmp/relbench-build/release/sqlite-replica \\
        --watch-tool /tmp/relbench-build/release/sqlite-watch
"""
import argparse
import math
import os
import pathlib
import random
import re
import select
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse


def cpu_seconds(pid):
    """User + system CPU seconds of a process (all its threads), None when
    it is gone."""
    stat = process_stat(pid)
    return None if stat is None else stat[1]


def process_stat(pid):
    """(ppid, utime + stime, cutime + cstime) in seconds, None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks, (int(fields[13]) + int(fields[14])) / ticks


def children(parent):
    """The pids whose parent is `parent`."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = process_stat(int(entry))
            if stat and stat[0] == parent:
                pids.append(int(entry))
    return pids


def cluster_cpu(postmaster):
    """CPU seconds of the whole cluster so far: the postmaster's own, those
    of its live children, and those of the children it reaped (a backend
    that ends during the window is counted once: live at the start, reaped
    at the end). Also the number of live children."""
    live = children(postmaster)
    total = sum(cpu_seconds(pid) or 0 for pid in live)
    stat = process_stat(postmaster)
    if stat is None:
        return None, len(live)
    return total + stat[1] + stat[2], len(live)


def percentile(samples, fraction):
    """Nearest rank."""
    ordered = sorted(samples)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1))]


def summary(samples, unit="ms"):
    if not samples:
        return "no sample"
    return (f"p50 {percentile(samples, 0.5):.2f} {unit}, p90 {percentile(samples, 0.9):.2f} {unit}, "
            f"p99 {percentile(samples, 0.99):.2f} {unit} (min {min(samples):.2f}, max {max(samples):.2f}, "
            f"{len(samples)} samples)")


def lsn_value(text):
    high, low = text.strip().split("/")
    return int(high, 16) << 32 | int(low, 16)


class Psql:
    """One psql, fed statements on its standard input; its output (errors
    included) read line by line, with the time each line arrived."""

    def __init__(self, binary, url):
        self.process = subprocess.Popen(
            [binary, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0", url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self.fd = self.process.stdout.fileno()
        self.buffer = b""
        self.marks = 0

    def send(self, text):
        self.process.stdin.write(text.encode())

    def mark(self):
        """Sends `\\echo MARK n`; returns n."""
        self.marks += 1
        self.send(f"\\echo MARK {self.marks}\n")
        return self.marks

    def read_lines(self, timeout):
        """The lines that arrive within `timeout` seconds, as (time, text)."""
        ready, _, _ = select.select([self.fd], [], [], max(0, timeout))
        if not ready:
            return []
        now = time.monotonic()
        data = os.read(self.fd, 1 << 16)
        if not data:
            raise RuntimeError("psql ended")
        self.buffer += data
        *complete, self.buffer = self.buffer.split(b"\n")
        lines = [(now, line.decode(errors="replace")) for line in complete]
        for _, line in lines:
            if "ERROR:" in line or "FATAL:" in line:
                raise RuntimeError(f"psql: {line}")
        return lines

    @staticmethod
    def mark_number(line):
        return int(line[5:]) if line.startswith("MARK ") else None

    def query(self, sql, timeout=120):
        """Runs `sql`; returns its output lines (fields separated by |)."""
        sql = sql.strip()
        self.send(sql + ("\n" if sql.endswith(";") else ";\n"))
        number = self.mark()
        output = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for _, line in self.read_lines(deadline - time.monotonic()):
                mark = self.mark_number(line)
                if mark == number:
                    return output
                if mark is None:
                    output.append(line)
        raise RuntimeError(f"psql: no answer in {timeout} s to {sql!r}")

    def value(self, sql):
        lines = self.query(sql)
        return lines[0] if lines else None

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class Replica:
    """The replica file, read by a connection of our own."""

    def __init__(self, path, table):
        self.connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        self.table = table
        self.version = self.data_version()
        self.polls = []
        self.changes = 0

    def data_version(self):
        return self.connection.execute("PRAGMA data_version").fetchone()[0]

    def poll(self):
        """Whether the file changed since the last poll (counts the changes)."""
        self.polls.append(time.monotonic())
        version = self.data_version()
        if version == self.version:
            return False
        self.version = version
        self.changes += 1
        return True

    def name(self, key):
        row = self.connection.execute(f"SELECT name FROM {self.table} WHERE id = ?", (key,)).fetchone()
        return row[0] if row else None

    def position(self):
        row = self.connection.execute("SELECT max(position) FROM _reactivesqlite_replication").fetchone()
        return row[0] or 0

    def granularity(self):
        """The intervals between polls, in microseconds."""
        return [(b - a) * 1e6 for a, b in zip(self.polls, self.polls[1:])]

    def reset(self):
        self.polls = []
        self.changes = 0


class Lines:
    """The standard output of a child, read line by line with arrival times."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.buffer = bytearray()

    def read(self, data, now):
        self.buffer += data
        if b"\n" not in data:
            return []
        *complete, rest = bytes(self.buffer).split(b"\n")
        self.buffer = bytearray(rest)
        return [(now, line) for line in complete]


def stderr_collector(process, lines, ready, pattern):
    """Collects a child's standard error; sets `ready` when a line matches."""
    for raw in process.stderr:
        line = raw.decode(errors="replace").rstrip("\n")
        lines.append(line)
        if pattern in line:
            ready.set()


def socket_inodes(pid):
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except FileNotFoundError:
        pass
    return inodes


def client_ports(pid, server_port):
    """The local ports of `pid`'s TCP connections to `server_port`."""
    inodes = socket_inodes(pid)
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines)
                for line in lines:
                    fields = line.split()
                    local, remote, inode = fields[1], fields[2], fields[9]
                    if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == server_port:
                        ports.append(int(local.rsplit(":", 1)[1], 16))
        except FileNotFoundError:
            pass
    return ports


def find_backend(psql, replica_pid, server_port):
    """The pid of the backend that serves the replicator, and how it was found."""
    ports = client_ports(replica_pid, server_port)
    if ports:
        rows = psql.query(
            "SELECT pid, client_port, coalesce(application_name, ''), left(regexp_replace(query, '\\s+', ' ', 'g'), 70) "
            f"FROM pg_stat_activity WHERE client_port IN ({', '.join(map(str, ports))})")
        if len(rows) == 1:
            pid, port, application, query = rows[0].split("|", 3)
            return int(pid), f"client port {port} of sqlite-replica's socket, application_name {application!r}, last query {query!r}"
    # The fallback: the query text.
    rows = psql.query(
        "SELECT pid, client_port FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND "
        "(query LIKE '%pg_logical_slot_peek_binary_changes%' OR query LIKE '%pg_current_wal_lsn()::text%' "
        "OR query LIKE '%pg_replication_slot_advance%')")
    if len(rows) == 1:
        pid, port = rows[0].split("|")
        return int(pid), f"its query text (pg_logical_slot_peek_binary_changes...), client port {port}"
    raise RuntimeError(f"cannot find the replicator's backend (client ports {ports}, candidates {rows})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="an existing PostgreSQL (wal_level = logical) on this machine; "
                        "default: start a throw-away cluster with .ci/postgres")
    parser.add_argument("--replica-tool", default="/tmp/relbench-build/release/sqlite-replica")
    parser.add_argument("--watch-tool", default="/tmp/relbench-build/release/sqlite-watch")
    parser.add_argument("--pg-bin", default="/usr/lib/postgresql/15/bin", help="where psql and pgbench are")
    parser.add_argument("--table", default="replbench_item")
    parser.add_argument("--slot", default="replbench")
    parser.add_argument("--rows", type=int, default=1000,
                        help="rows 1 to ROWS take the timed commits and the load; row 0 the load's markers")
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.02,
                        help="mean seconds between the timed commits (each uniformly 0.5x to 1.5x)")
    parser.add_argument("--poll", type=float, default=0.00025,
                        help="seconds between two polls of the replica file (and the longest wait for a line)")
    parser.add_argument("--idle", type=float, default=10, help="seconds without commits for the idle CPU")
    parser.add_argument("--rate", type=int, default=1000, help="pgbench --rate: transactions a second")
    parser.add_argument("--duration", type=int, default=20, help="seconds of pgbench load, each run")
    parser.add_argument("--clients", type=int, default=4, help="pgbench --client")
    parser.add_argument("--jobs", type=int, default=2, help="pgbench --jobs")
    parser.add_argument("--lag-interval", type=float, default=0.5,
                        help="seconds between two marker updates during the load")
    parser.add_argument("--skip-load", action="store_true", help="measure latencies only")
    arguments = parser.parse_args()
    for tool in (arguments.replica_tool, arguments.watch_tool):
        if not os.access(tool, os.X_OK):
            sys.exit(f"error: {tool} is not an executable (build it: see --help)")

    # SIGTERM ends the run as Ctrl-C does: through the cleanup below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))

    root = pathlib.Path(__file__).resolve().parent.parent
    directory = tempfile.mkdtemp(prefix="replica-latency-")
    cluster = None
    psql = None
    processes = []
    created = []
    try:
        url = arguments.url
        if url is None:
            cluster = tempfile.mkdtemp(prefix="replbench-pg.", dir="/tmp")
            url = subprocess.run([str(root / ".ci" / "postgres"), "start", cluster],
                                 check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        parts = urllib.parse.urlsplit(url)
        server_port = parts.port or 5432
        psql = Psql(os.path.join(arguments.pg_bin, "psql"), url)
        version = psql.value("SHOW server_version")
        if psql.value(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{arguments.slot}'") != "0":
            raise RuntimeError(f"the slot {arguments.slot} exists: drop it, or choose another --slot")
        table = arguments.table
        psql.query(f"CREATE TABLE {table} (id integer PRIMARY KEY, name text NOT NULL, score integer NOT NULL)")
        created.append("table")
        psql.query(f"INSERT INTO {table} SELECT i, 'i' || i, i FROM generate_series(0, {arguments.rows}) i")
        # The CPU figures read /proc: PostgreSQL must run here.
        own_backend = int(psql.value("SELECT pg_backend_pid()"))
        try:
            with open(f"/proc/{own_backend}/cmdline", "rb") as file:
                local = file.read().startswith(b"postgres")
        except FileNotFoundError:
            local = False
        if not local:
            raise RuntimeError(f"PostgreSQL's backend {own_backend} is not a process of this machine: "
                               "run PostgreSQL here (or without --url)")
        postmaster = process_stat(own_backend)[0]

        script = os.path.join(directory, "update.sql")
        with open(script, "w") as file:
            file.write(f"\\set id random(1, {arguments.rows})\n"
                       f"UPDATE {table} SET score = score + 1 WHERE id = :id;\n")
        pgbench = [os.path.join(arguments.pg_bin, "pgbench"), "--no-vacuum",
                   "--host", parts.hostname or "127.0.0.1", "--port", str(server_port),
                   "--username", parts.username or "postgres",
                   "--client", str(arguments.clients), "--jobs", str(arguments.jobs),
                   "--time", str(arguments.duration), "--rate", str(arguments.rate), "--file", script,
                   parts.path.lstrip("/") or "postgres"]
        environment = dict(os.environ)
        if parts.password:
            environment["PGPASSWORD"] = urllib.parse.unquote(parts.password)

        replica_path = os.path.join(directory, "replica.db")
        replica_command = [arguments.replica_tool, url, replica_path, "--slot", arguments.slot,
                           "--create-publication", table]
        watch_query = f"SELECT id, name FROM {table}"
        watch_command = [arguments.watch_tool, replica_path, watch_query, "--format", "json"]
        shown = parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")) if parts.password else parts
        print(f"PostgreSQL {version} at {urllib.parse.urlunsplit(shown)}; {os.cpu_count()} CPUs")
        print(f"replica: {' '.join(replica_command).replace(url, urllib.parse.urlunsplit(shown))}")
        print(f"watch:   {' '.join(watch_command[:2])} {watch_query!r} --format json")
        print(f"load:    {' '.join(pgbench)}  (update.sql: one UPDATE of {table} by a random id)")
        sys.stdout.flush()
        loads = []

        def run_load(label, prefix, replicator):
            """One pgbench run; `replicator` is (process, backend pid,
            replica) or None."""
            psql.query(f"VACUUM ANALYZE {table}")
            psql.query("CHECKPOINT")
            time.sleep(1)
            load_average = os.getloadavg()[0]
            cluster_start, children_start = cluster_cpu(postmaster) if postmaster else (None, 0)
            if replicator:
                process, backend, replica = replicator
                backend_start, tool_start = cpu_seconds(backend), cpu_seconds(process.pid)
                replica.reset()
            started = time.monotonic()
            bench = subprocess.Popen(pgbench, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment)
            processes.append(bench)
            pending = {}  # mark number -> marker number
            sent = {}  # marker number -> time sent
            marked = {}  # marker number -> time psql returned
            arrived = {}  # marker number -> time seen in the replica
            slot_lags = []  # (bytes behind restart_lsn, behind confirmed_flush_lsn)
            next_marker, number = started + arguments.lag_interval, 0
            while bench.poll() is None:
                now = time.monotonic()
                if now >= next_marker:
                    number += 1
                    psql.send(f"UPDATE {table} SET name = '{prefix}{number}' WHERE id = 0;\n")
                    if replicator:
                        # How far behind the slot's restart_lsn is: each
                        # peek (and each advance) decodes the WAL from there.
                        psql.send("SELECT 'SLOT', pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), "
                                  "pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) "
                                  f"FROM pg_replication_slots WHERE slot_name = '{arguments.slot}';\n")
                    sent[number] = now
                    pending[psql.mark()] = number
                    next_marker += arguments.lag_interval
                for at, line in psql.read_lines(arguments.poll if replicator else 0.01):
                    mark = Psql.mark_number(line)
                    if mark in pending:
                        marked[pending.pop(mark)] = at
                    elif line.startswith("SLOT|"):
                        slot_lags.append([int(float(value)) for value in line.split("|")[1:]])
                if replicator and replica.poll():
                    name = replica.name(0)
                    if name and name.startswith(prefix):
                        seen = int(name[len(prefix):])
                        for k in range(1, seen + 1):
                            arrived.setdefault(k, replica.polls[-1])
            ended = time.monotonic()
            while pending and time.monotonic() < ended + 10:
                for at, line in psql.read_lines(1):
                    mark = Psql.mark_number(line)
                    if mark in pending:
                        marked[pending.pop(mark)] = at
                    elif line.startswith("SLOT|"):
                        slot_lags.append([int(float(value)) for value in line.split("|")[1:]])
            output = bench.stdout.read().decode(errors="replace")
            if bench.returncode != 0:
                raise RuntimeError(f"pgbench failed ({bench.returncode}):\n{output}")
            end_lsn = lsn_value(psql.value("SELECT pg_current_wal_lsn()"))
            result = {"label": label, "load_average": load_average, "seconds": ended - started, "pgbench": output}
            if replicator:
                behind = end_lsn - replica.position()
                tool_at_end = cpu_seconds(process.pid)
                backend_at_end = cpu_seconds(backend)
                caught = None
                while time.monotonic() < ended + 120:
                    if replica.poll():
                        name = replica.name(0)
                        if name and name.startswith(prefix):
                            for k in range(1, int(name[len(prefix):]) + 1):
                                arrived.setdefault(k, replica.polls[-1])
                        if replica.position() >= end_lsn:
                            caught = replica.polls[-1]
                            break
                    time.sleep(arguments.poll)
                result.update(behind_bytes=behind, caught_up=None if caught is None else (caught - ended) * 1000,
                              markers=[(arrived[k] - marked[k]) * 1000 for k in marked if k in arrived],
                              markers_lost=[k for k in marked if k not in arrived], slot_lags=slot_lags)
            # Let the backends of pgbench end and be reaped: the window ends
            # at least a second after the load.
            settle = time.monotonic() + 5
            time.sleep(max(0, ended + 1 - time.monotonic()))
            while postmaster and time.monotonic() < settle and len(children(postmaster)) > children_start:
                time.sleep(0.05)
            closed = time.monotonic()
            if postmaster:
                cluster_end, _ = cluster_cpu(postmaster)
                result["cluster"] = (cluster_end - cluster_start) / result["seconds"]
            if replicator:
                backend_end, tool_end = cpu_seconds(backend), cpu_seconds(process.pid)
                result.update(
                    backend=None if backend_end is None else (backend_end - backend_start) / result["seconds"],
                    backend_during=None if backend_at_end is None else (backend_at_end - backend_start) / result["seconds"],
                    tool=(tool_end - tool_start) / result["seconds"],
                    tool_during=(tool_at_end - tool_start) / result["seconds"])
            result["window"] = closed - started
            loads.append(result)

        if not arguments.skip_load:
            # Without a slot: before the replicator ever ran.
            run_load("without the replicator (no slot)", "A", None)

        # The replicator.
        started = time.monotonic()
        replica_stderr = []
        ready = threading.Event()
        replicator = subprocess.Popen(replica_command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)
        processes.append(replicator)
        created.append("slot")
        threading.Thread(target=stderr_collector, args=(replicator, replica_stderr, ready, "replicating into"),
                         daemon=True).start()
        while not ready.wait(0.1):
            if replicator.poll() is not None or time.monotonic() > started + 120:
                raise RuntimeError("sqlite-replica did not start:\n" + "\n".join(replica_stderr))
        ready_seconds = time.monotonic() - started
        backend, found_by = find_backend(psql, replicator.pid, server_port)
        replica = Replica(replica_path, table)

        # 1. Commit to the replica's commit.
        def timed_commits(prefix, watch=None):
            """Times `--commits` UPDATEs: to the replica (and to the watch's line)."""
            to_replica, to_line, round_trips, intervals = [], [], [], []
            marker = re.compile(rb'"name":"' + prefix.encode() + rb'(\d+)"')
            replica.reset()
            for k in range(arguments.commits):
                key = k % arguments.rows + 1
                sent = time.monotonic()
                psql.send(f"UPDATE {table} SET name = '{prefix}{k}' WHERE id = {key};\n")
                number = psql.mark()
                replica.polls = []
                marked = seen = line_at = None
                deadline = sent + 10
                while (marked is None or seen is None or (watch and line_at is None)) and time.monotonic() < deadline:
                    descriptors = [psql.fd] + ([watch[1].fd] if watch else [])
                    ready_fds, _, _ = select.select(descriptors, [], [], arguments.poll)
                    if psql.fd in ready_fds:
                        for at, line in psql.read_lines(0):
                            if Psql.mark_number(line) == number:
                                marked = at
                    if watch and watch[1].fd in ready_fds:
                        now = time.monotonic()
                        data = os.read(watch[1].fd, 1 << 20)
                        if not data:
                            raise RuntimeError("sqlite-watch ended")
                        for at, line in watch[1].read(data, now):
                            if any(int(match.group(1)) == k for match in marker.finditer(line)):
                                line_at = at
                    if seen is None and replica.poll() and replica.name(key) == f"{prefix}{k}":
                        seen = replica.polls[-1]
                if marked is None or seen is None or (watch and line_at is None):
                    raise RuntimeError(f"commit {k}: not seen within 10 s (mark {marked}, replica {seen}, line {line_at})")
                intervals += replica.granularity()
                round_trips.append((marked - sent) * 1000)
                to_replica.append((seen - marked) * 1000)
                if watch:
                    to_line.append((line_at - marked) * 1000)
                # A random spacing: at a fixed one, the commits would keep
                # the same phase against the replicator's poll cycle.
                time.sleep(random.uniform(0.5, 1.5) * arguments.interval)
            return to_replica, to_line, round_trips, intervals, replica.changes

        load_latency = os.getloadavg()[0]
        to_replica, _, round_trips, granularity, changes = timed_commits("m")

        # 2. Commit to sqlite-watch's line.
        watch = subprocess.Popen(watch_command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        processes.append(watch)
        watch_lines = Lines(watch.stdout)
        deadline = time.monotonic() + 60
        first = False
        while not first:
            if time.monotonic() > deadline:
                raise RuntimeError("sqlite-watch printed no rows in 60 s")
            ready_fds, _, _ = select.select([watch_lines.fd], [], [], 1)
            if ready_fds:
                data = os.read(watch_lines.fd, 1 << 20)
                if not data:
                    raise RuntimeError("sqlite-watch ended")
                first = any(line.startswith(b'{"rows"') for _, line in watch_lines.read(data, time.monotonic()))
        watch_cpu_start = cpu_seconds(watch.pid)
        watch_started = time.monotonic()
        to_replica_w, to_line, _, granularity_w, _ = timed_commits("w", (watch, watch_lines))
        watch_cpu = (cpu_seconds(watch.pid) - watch_cpu_start) / (time.monotonic() - watch_started)
        watch.terminate()
        watch.wait()

        # 3. Idle.
        time.sleep(1)
        idle_transactions_start = int(psql.value(
            "SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database"))
        idle_start = (time.monotonic(), cpu_seconds(backend), cpu_seconds(replicator.pid),
                      cluster_cpu(postmaster)[0] if postmaster else None)
        time.sleep(arguments.idle)
        idle_end = (time.monotonic(), cpu_seconds(backend), cpu_seconds(replicator.pid),
                    cluster_cpu(postmaster)[0] if postmaster else None)
        idle_transactions = int(psql.value(
            "SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database")) - idle_transactions_start
        idle_seconds = idle_end[0] - idle_start[0]

        # 4. The load, with the replicator.
        if not arguments.skip_load:
            run_load("with the replicator", "B", (replicator, backend, replica))
        same_backend = find_backend(psql, replicator.pid, server_port)[0] == backend

        # The report.
        print(f"{arguments.rows + 1} rows; replica ready (copy done) {ready_seconds:.2f} s after sqlite-replica started")
        print(f"replicator's backend: pid {backend}, found by {found_by}")
        print(f"while a commit was awaited, the replica was polled every {statistics.mean(granularity):.0f} us on average "
              f"(p99 {percentile(granularity, 0.99):.0f} us; with sqlite-watch running {statistics.mean(granularity_w):.0f} us, "
              f"p99 {percentile(granularity_w, 0.99):.0f} us): a replica sample is late by up to one interval")
        print()
        print(f"1. psql commit to replica commit, {arguments.commits} one-row UPDATEs {arguments.interval * 1000:.0f} ms "
              f"apart on average, load average {load_latency:.2f}:")
        print(f"   {summary(to_replica)}")
        print(f"   (psql round trip of the UPDATE: p50 {percentile(round_trips, 0.5):.2f} ms; the replica file changed "
              f"{changes} times for {arguments.commits} commits)")
        print(f"2. psql commit to sqlite-watch's line ({watch_query!r}, --format json):")
        print(f"   {summary(to_line)}")
        print(f"   of which commit to replica: p50 {percentile(to_replica_w, 0.5):.2f} ms; replica to line: p50 "
              f"{percentile([l - r for l, r in zip(to_line, to_replica_w)], 0.5):.2f} ms; "
              f"sqlite-watch CPU meanwhile {watch_cpu * 100:.1f} % of one core")
        print(f"3. idle, {idle_seconds:.0f} s without commits: sqlite-replica {(idle_end[2] - idle_start[2]) / idle_seconds * 100:.1f} %, "
              f"its backend {(idle_end[1] - idle_start[1]) / idle_seconds * 100:.1f} %"
              + (f", whole cluster {(idle_end[3] - idle_start[3]) / idle_seconds * 100:.1f} %" if postmaster else "")
              + f" of one core; PostgreSQL ran {idle_transactions / idle_seconds:.0f} transactions a second")
        for result in loads:
            print(f"4. load {result['label']}, load average {result['load_average']:.2f} at its start:")
            tps = re.search(r"tps = ([\d.]+)", result["pgbench"])
            processed = re.search(r"actually processed: (\d+)", result["pgbench"])
            latency = re.search(r"latency average = ([\d.]+ ms)", result["pgbench"])
            schedule = re.search(r"rate limit schedule lag: avg ([\d.]+) \(max ([\d.]+)\) ms", result["pgbench"])
            print(f"   pgbench: {tps.group(1) if tps else '?'} tps ({processed.group(1) if processed else '?'} transactions "
                  f"in {result['seconds']:.1f} s), latency average {latency.group(1) if latency else '?'}"
                  + (f", schedule lag avg {schedule.group(1)} ms (max {schedule.group(2)} ms)" if schedule else ""))
            if "cluster" in result:
                print(f"   whole cluster: {result['cluster'] * 100:.1f} % of one core")
            if "backend" in result:
                print(f"   replicator's backend: {result['backend'] * 100:.1f} % of one core "
                      f"(during the load alone {result['backend_during'] * 100:.1f} %)")
                print(f"   sqlite-replica: {result['tool'] * 100:.1f} % of one core "
                      f"(during the load alone {result['tool_during'] * 100:.1f} %)")
                print(f"   marker every {arguments.lag_interval} s, commit to replica under load: {summary(result['markers'])}"
                      + (f"; {len(result['markers_lost'])} never seen alone" if result["markers_lost"] else ""))
                caught = result["caught_up"]
                print(f"   at the load's end the replica was {result['behind_bytes']} bytes of WAL behind, "
                      + (f"and caught up {caught:.0f} ms later" if caught is not None else "and did NOT catch up in 120 s"))
                restart = [lag[0] for lag in result["slot_lags"]]
                confirmed = [lag[1] for lag in result["slot_lags"]]
                if restart:
                    print(f"   the slot during the load ({len(restart)} readings): restart_lsn behind the WAL by "
                          f"{statistics.mean(restart) / 1e3:.0f} kB on average (max {max(restart) / 1e3:.0f} kB), "
                          f"confirmed_flush_lsn by {statistics.mean(confirmed) / 1e3:.1f} kB (max {max(confirmed) / 1e3:.1f} kB): "
                          "every peek and every advance decodes the WAL from restart_lsn")
            print(f"   (CPU from the load's start to {result['window'] - result['seconds']:.1f} s after its end, "
                  f"divided by its {result['seconds']:.1f} s)")
        if len(loads) == 2 and "cluster" in loads[0]:
            print(f"   the slot costs the cluster {(loads[1]['cluster'] - loads[0]['cluster']) * 100:.1f} % of one core "
                  f"at {arguments.rate} transactions a second")
        if not same_backend:
            print("   note: the replicator reconnected during the run (another backend serves it now)")
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        if any("warning" in line.lower() or "error" in line.lower() for line in replica_stderr):
            print("sqlite-replica said:\n  " + "\n  ".join(replica_stderr))
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if cluster is not None:
            if psql is not None:
                psql.close()
            subprocess.run([str(root / ".ci" / "postgres"), "stop", cluster], capture_output=True)
            shutil.rmtree(cluster, ignore_errors=True)
        elif psql is not None:
            try:
                if "slot" in created:
                    psql.query(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                               f"WHERE slot_name = '{arguments.slot}'")
                    psql.query(f"DROP PUBLICATION IF EXISTS {arguments.slot}")
                if "table" in created:
                    psql.query(f"DROP TABLE IF EXISTS {arguments.table}")
            finally:
                psql.close()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
