#!/usr/bin/env python3
"""Reads the text output of `swift package benchmark` on stdin and prints the
median time per benchmark (ns per element where the name has n=...) and the
ratios that the issues set as targets, all from the same run."""
import re
import sys

medians = {}
name = None
for line in sys.stdin:
    line = line.rstrip()
    if re.match(r"^[A-Za-z][\w.]* .*n=\d+|^[A-Za-z][\w.]+ K=\d+", line):
        name = line.strip()
    elif name and "Time (wall clock)" in line:
        cells = [c.strip() for c in line.split("│") if c.strip()]
        # cells: metric, p0, p25, p50, p75, p90, p99, p100, samples
        unit = re.search(r"\((\w+)\)", cells[0]).group(1)
        scale = {"ns": 1, "us": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}[unit]
        medians[name] = float(cells[3]) * scale
        name = None

def per_element(key):
    count = int(re.search(r"n=(\d+)", key).group(1))
    return medians[key] / count

print("| benchmark | median ns per element |")
print("| --- | ---: |")
for key in sorted(medians):
    if "n=" in key:
        print(f"| {key} | {per_element(key):.2f} |")

targets = [
    ("SortedDifference.Int", "Baseline.MergeInt", "<= 2"),
    ("SetDifferenceScanner", "Baseline.MergeStruct", "<= 1.5"),
    ("SortedDifference.Identifiable", "Baseline.MergeStruct", "(no target)"),
    ("Baseline.DictionaryDiff", "SetDifferenceScanner", ">= 50 at n=1000000"),
    ("Baseline.StdlibInferringMoves", "OrderedDifference", ">= 10 at n=100000, >= 100 at n=1000000"),
    ("Baseline.StdlibDifference", "OrderedDifference", "(no target)"),
    # SQLiteBenchmarks: ReactiveSQLite / GRDB, same work (time per row or per lookup).
    ("SQLite.Insert.ReactiveSQLite", "SQLite.Insert.GRDB", "<= 1.2"),
    ("SQLite.FetchRows.ReactiveSQLite", "SQLite.FetchRows.GRDB", "<= 1.2"),
    ("SQLite.FetchDecodable.ReactiveSQLite", "SQLite.FetchDecodable.GRDB", "<= 1.0"),
    ("SQLite.FetchOneByKey.ReactiveSQLite", "SQLite.FetchOneByKey.GRDB", "<= 1.2"),
    ("SQLite.FetchOneBySQL.ReactiveSQLite", "SQLite.FetchOneBySQL.GRDB", "(no target)"),
]
print()
print("| ratio | n | value | target |")
print("| --- | ---: | ---: | --- |")
for numerator, denominator, target in targets:
    for n in (10_000, 100_000, 1_000_000):
        a, b = f"{numerator} n={n}", f"{denominator} n={n}"
        if a in medians and b in medians:
            print(f"| {numerator} / {denominator} | {n} | {medians[a] / medians[b]:.2f} | {target} |")
