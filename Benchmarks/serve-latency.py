#!/usr/bin/env python3
"""Latency from a commit to the Server-Sent Events clients of `sqlite-watch --serve`.

Another process (this script) commits to a WAL database that `sqlite-watch`
serves; N clients follow `/events`. For each commit, the time from the
return of `COMMIT` to the arrival of the difference that carries it, on
each client, is one sample. Prints the median, p90 and max per number of
clients.

    swift build -c release --traits Server --product sqlite-watch
    python3 Benchmarks/serve-latency.py --tool .build/release/sqlite-watch

One reading thread serves every client socket (selectors), and stamps data
when it arrives: the clients do not compete for Python's lock.
"""
import argparse
import os
import re
import selectors
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def start_server(tool, path):
    process = subprocess.Popen(
        [tool, path, "SELECT * FROM player", "--serve", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        sys.exit(f"sqlite-watch did not print its URL: {line!r}")
    return process, int(match.group(1))


def open_client(port):
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    client.setblocking(False)
    return client


def measure(tool, clients, commits, interval, rows):
    directory = tempfile.mkdtemp(prefix="serve-latency-")
    path = os.path.join(directory, "db.sqlite")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = wal")
    writer.execute("PRAGMA synchronous = normal")
    writer.execute("CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
    writer.execute("BEGIN")
    writer.executemany("INSERT INTO player VALUES (?, ?, ?)", [(i, f"p{i}", i) for i in range(1, rows + 1)])
    writer.execute("COMMIT")

    process, port = start_server(tool, path)
    arrivals = {}   # (client, k) -> monotonic time
    ready = set()
    lock = threading.Lock()
    sockets = [open_client(port) for _ in range(clients)]
    selector = selectors.DefaultSelector()
    buffers = {}
    for index, client in enumerate(sockets):
        selector.register(client, selectors.EVENT_READ, index)
        buffers[index] = b""
    stop = threading.Event()
    marker = re.compile(rb'"name":"m(\d+)"')

    def read():
        while not stop.is_set():
            for key, _ in selector.select(timeout=0.1):
                now = time.monotonic()
                try:
                    data = key.fileobj.recv(1 << 20)
                except BlockingIOError:
                    continue
                index = key.data
                text = buffers[index] + data
                with lock:
                    if b"event: rows" in text:
                        ready.add(index)
                    for match in marker.finditer(text):
                        arrivals.setdefault((index, int(match.group(1))), now)
                # Keep a tail that may hold the start of a marker.
                buffers[index] = text[-64:]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while len(ready) < clients and time.monotonic() < deadline:
        time.sleep(0.01)
    if len(ready) < clients:
        sys.exit(f"only {len(ready)} of {clients} clients got their rows")

    committed = {}
    for k in range(commits):
        writer.execute("UPDATE player SET name = ? WHERE id = ?", (f"m{k}", k % rows + 1))
        committed[k] = time.monotonic()
        time.sleep(interval)
    time.sleep(1)
    stop.set()
    reader.join()
    process.terminate()
    process.wait()
    for client in sockets:
        client.close()

    samples = []
    missing = 0
    for (index, k), arrived in arrivals.items():
        if k in committed:
            samples.append((arrived - committed[k]) * 1000)
    missing = clients * commits - len(samples)
    return samples, missing


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", default=".build/release/sqlite-watch")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between commits")
    parser.add_argument("--rows", type=int, default=1000)
    arguments = parser.parse_args()
    print(f"{arguments.commits} commits, one every {arguments.interval * 1000:.0f} ms, "
          f"{arguments.rows}-row SELECT *, WAL, load average {os.getloadavg()[0]:.2f}")
    print("| clients | samples | median (ms) | p90 (ms) | max (ms) | missing |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for clients in arguments.clients:
        samples, missing = measure(arguments.tool, clients, arguments.commits, arguments.interval, arguments.rows)
        samples.sort()
        p90 = samples[min(len(samples) - 1, int(len(samples) * 0.9))]
        print(f"| {clients} | {len(samples)} | {statistics.median(samples):.1f} | {p90:.1f} | {samples[-1]:.1f} | {missing} |")


if __name__ == "__main__":
    main()
