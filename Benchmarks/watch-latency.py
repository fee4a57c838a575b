#!/usr/bin/env python3
"""Latency from an external commit to sqlite-watch's JSON line, and the
watcher's CPU while nothing changes.

This script (another process) commits to a database (WAL, or rollback
journal with `--journal-mode delete`) that `sqlite-watch --format json`
watches; for each commit that changes one row,
the time from the return of `COMMIT` to the line of `sqlite-watch` that
carries it is one sample. Then nothing is committed for `--idle` seconds,
and the watcher's CPU time over that span (user + system, from
/proc/PID/stat) is reported as a share of one core.

With `--baseline`, the time SQLite alone takes to run the query once
(Benchmarks/Tools/sqlite-scan.c: prepare, step, read every column; built
with `cc`) is measured on the same file, five times before the watch and
five times after, and the median latency is reported as a ratio of it.

    swift build -c release --product sqlite-watch
    python3 Benchmarks/watch-latency.py --tool .build/release/sqlite-watch --rows 1000
"""
import argparse
import os
import pathlib
import re
import select
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def memory_kb(pid):
    """Resident set size and its peak, in KB, from /proc/PID/status."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


def table_bytes(connection, table):
    """The table's size in SQLite's own encoding: its b-tree's pages (dbstat
    when compiled in, else the whole file)."""
    try:
        return connection.execute("SELECT sum(pgsize) FROM dbstat WHERE name = ?", (table,)).fetchone()[0]
    except sqlite3.OperationalError:
        count = connection.execute("PRAGMA page_count").fetchone()[0]
        return count * connection.execute("PRAGMA page_size").fetchone()[0]


def scan_milliseconds(scanner, path, query, runs):
    """The times of `runs` runs of the query by SQLite alone (sqlite-scan)."""
    output = subprocess.run([scanner, path, query, str(runs)], check=True, capture_output=True, text=True).stdout
    return [float(line.split()[0]) for line in output.splitlines()]


def build_scanner(directory):
    source = pathlib.Path(__file__).resolve().parent / "Tools" / "sqlite-scan.c"
    scanner = os.path.join(directory, "sqlite-scan")
    subprocess.run(["cc", "-O2", "-o", scanner, str(source), "-lsqlite3"], check=True)
    return scanner


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", default=".build/release/sqlite-watch")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--name-length", type=int, default=0,
                        help="pad the names to this length (wider rows: 45 makes a 1 000 000-row table of about 65 MB)")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between commits")
    parser.add_argument("--idle", type=float, default=60, help="seconds without commits for the CPU reading")
    parser.add_argument("--journal-mode", default="wal", choices=["wal", "delete"])
    parser.add_argument("--query", default="SELECT * FROM item",
                        help="the watched query (its rows must include the name column)")
    parser.add_argument("--baseline", action="store_true",
                        help="also time SQLite alone running the query (sqlite-scan), and report the ratio")
    arguments = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="watch-latency-")
    path = os.path.join(directory, "db.sqlite")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute(f"PRAGMA journal_mode = {arguments.journal_mode}")
    writer.execute("PRAGMA synchronous = normal")
    writer.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
    writer.execute("BEGIN")
    writer.executemany("INSERT INTO item VALUES (?, ?, ?)", ((i, f"i{i}".ljust(arguments.name_length, "x"), i) for i in range(1, arguments.rows + 1)))
    writer.execute("COMMIT")
    scans = []
    if arguments.baseline:
        scanner = build_scanner(directory)
        scans += scan_milliseconds(scanner, path, arguments.query, 5)

    started = time.monotonic()
    process = subprocess.Popen(
        [arguments.tool, path, arguments.query, "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    stdout = process.stdout.fileno()
    buffer = bytearray()

    def read_lines(timeout):
        nonlocal buffer
        lines = []
        ready, _, _ = select.select([stdout], [], [], timeout)
        if ready:
            now = time.monotonic()
            data = os.read(stdout, 1 << 24)
            if not data:
                sys.exit("sqlite-watch ended")
            buffer += data
            # Split only when a line ends: the first line (the rows) can be
            # tens of megabytes, read 64 KB at a time.
            if b"\n" in data:
                *complete, rest = bytes(buffer).split(b"\n")
                buffer = bytearray(rest)
                lines = [(now, line) for line in complete]
        return lines

    first = None
    while first is None:
        for now, line in read_lines(60):
            if line.startswith(b'{"rows"'):
                first = now - started
    rss_first, _ = memory_kb(process.pid)
    marker = re.compile(rb'"name":"m(\d+)"')
    samples = []
    for k in range(arguments.commits):
        writer.execute("UPDATE item SET name = ? WHERE id = ?", (f"m{k}", k % arguments.rows + 1))
        committed = time.monotonic()
        deadline = committed + 10
        seen = False
        while not seen and time.monotonic() < deadline:
            for now, line in read_lines(deadline - time.monotonic()):
                if any(int(match.group(1)) == k for match in marker.finditer(line)):
                    samples.append((now - committed) * 1000)
                    seen = True
        time.sleep(arguments.interval)

    rss_after, rss_peak = memory_kb(process.pid)
    size = table_bytes(writer, "item")
    cpu_before = cpu_seconds(process.pid)
    time.sleep(arguments.idle)
    cpu_after = cpu_seconds(process.pid)
    process.terminate()
    process.wait()
    if arguments.baseline:
        scans += scan_milliseconds(scanner, path, arguments.query, 5)

    samples.sort()
    p90 = samples[min(len(samples) - 1, int(len(samples) * 0.9))]
    print(f"{arguments.rows} rows, {arguments.query!r}, {arguments.journal_mode} journal, "
          f"{arguments.commits} commits of one row, load average {os.getloadavg()[0]:.2f}")
    print(f"first rows: {first * 1000:.0f} ms")
    print(f"commit to line: median {statistics.median(samples):.1f} ms, p90 {p90:.1f} ms, max {samples[-1]:.1f} ms "
          f"({len(samples)} of {arguments.commits} seen)")
    print(f"table in SQLite's encoding: {size / 1e6:.1f} MB; watcher RSS after the first rows {rss_first / 1e3:.0f} MB, "
          f"after the commits {rss_after / 1e3:.0f} MB ({rss_after * 1e3 / size:.2f}x the table), peak {rss_peak / 1e3:.0f} MB")
    if scans:
        scan = statistics.median(scans)
        print(f"SQLite alone runs the query in {scan:.1f} ms (median of {len(scans)}, {min(scans):.1f} to "
              f"{max(scans):.1f}): median commit to line {statistics.median(samples) / scan:.2f}x that")
    print(f"idle CPU over {arguments.idle:.0f} s: {(cpu_after - cpu_before) / arguments.idle * 100:.2f} % of one core")


if __name__ == "__main__":
    main()
