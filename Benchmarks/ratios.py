#!/usr/bin/env python3
"""Reads the text output of `swift package benchmark` on stdin and prints the
median time per benchmark (ns per element where the name has n=...) and the
ratios that the issues set as targets, all from the same run."""
import re
import sys

lines = sys.stdin.read().splitlines()
medians = {}
name = None
for line in lines:
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
    # RecordWriteBenchmarks: ReactiveSQLite / GRDB, 100 000 records' writes in one transaction.
    ("RecordWrite.Insert.ReactiveSQLite", "RecordWrite.Insert.GRDB", "<= 1.0"),
    ("RecordWrite.Update.ReactiveSQLite", "RecordWrite.Update.GRDB", "<= 1.0"),
    ("RecordWrite.Upsert.ReactiveSQLite", "RecordWrite.Upsert.GRDB", "<= 1.0"),
    ("RecordWrite.UpdateChanges.ReactiveSQLite", "RecordWrite.UpdateChanges.GRDB", "<= 1.0"),
    ("RecordWrite.UpdateNoChanges.ReactiveSQLite", "RecordWrite.UpdateNoChanges.GRDB", "(no target)"),
]
print()
print("| ratio | n | value | target |")
print("| --- | ---: | ---: | --- |")
for numerator, denominator, target in targets:
    for n in (10_000, 100_000, 1_000_000):
        a, b = f"{numerator} n={n}", f"{denominator} n={n}"
        if a in medians and b in medians:
            print(f"| {numerator} / {denominator} | {n} | {medians[a] / medians[b]:.2f} | {target} |")

# ObservationBenchmarks: names without n= (`Observation.<Benchmark>[.<Variant>][.N=<count>].<Library>`),
# times in microseconds per iteration, p50 and p90.
observation = {}
name = None
for line in lines:
    if re.match(r"^Observation\.[\w.=]+$", line.strip()):
        name = line.strip()
    elif name and "Time (wall clock)" in line:
        cells = [c.strip() for c in line.split("│") if c.strip()]
        unit = re.search(r"\((\w+)\)", cells[0]).group(1)
        scale = {"ns": 1e-3, "us": 1, "μs": 1, "ms": 1e3, "s": 1e6}[unit]
        observation[name] = (float(cells[3]) * scale, float(cells[5]) * scale)
        name = None

if observation:
    print()
    print("| observation benchmark | GRDB p50 (us) | ours p50 (us) | ours / GRDB | GRDB p90 | ours p90 | ours / GRDB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in sorted(k[: -len(".GRDB")] for k in observation if k.endswith(".GRDB")):
        grdb, ours = observation.get(key + ".GRDB"), observation.get(key + ".ReactiveSQLite")
        if grdb and ours:
            print(f"| {key} | {grdb[0]:.1f} | {ours[0]:.1f} | {ours[0] / grdb[0]:.2f} "
                  f"| {grdb[1]:.1f} | {ours[1]:.1f} | {ours[1] / grdb[1]:.2f} |")

    def p50(key):
        return observation[key][0] if key in observation else None

    def ratio(numerator, denominator):
        a, b = p50(numerator), p50(denominator)
        return f"{a / b:.2f}" if a and b else "missing"

    print()
    print("| observation target | value | target |")
    print("| --- | ---: | --- |")
    for kind in ("Queue", "Pool"):
        latency = f"Observation.Latency.{kind}"
        for column, index in (("p50", 0), ("p90", 1)):
            a, b = observation.get(latency + ".ReactiveSQLite"), observation.get(latency + ".GRDB")
            value = f"{a[index] / b[index]:.2f}" if a and b else "missing"
            print(f"| latency, {kind.lower()}, {column}: ours / GRDB | {value} | <= 1 |")
    for kind in ("UpdateUnwatched", "UpdateWatched"):
        base = "N=0" if kind == "UpdateUnwatched" else "N=1"
        print(f"| {kind}: ours N=10000 / ours {base} | "
              f"{ratio(f'Observation.{kind}.N=10000.ReactiveSQLite', f'Observation.{kind}.{base}.ReactiveSQLite')} | <= 1.5 |")
        print(f"| {kind}: GRDB / ours at N=1000 | "
              f"{ratio(f'Observation.{kind}.N=1000.GRDB', f'Observation.{kind}.N=1000.ReactiveSQLite')} | >= 20 |")
    print(f"| UpdateWatchedOneCPU (diagnostic, one CPU): GRDB / ours at N=1000 | "
          f"{ratio('Observation.UpdateWatchedOneCPU.N=1000.GRDB', 'Observation.UpdateWatchedOneCPU.N=1000.ReactiveSQLite')} | (>= 20) |")
    for variant in ("Rows", "OtherTable"):
        print(f"| Insert10000.{variant}: ours N=1000 / ours N=0 | "
              f"{ratio(f'Observation.Insert10000.{variant}.N=1000.ReactiveSQLite', f'Observation.Insert10000.{variant}.N=0.ReactiveSQLite')} | <= 1.5 |")
    print(f"| Start1000: ours / GRDB | "
          f"{ratio('Observation.Start1000.ReactiveSQLite', 'Observation.Start1000.GRDB')} | <= 1 |")
    shared, plain = observation.get("Observation.Shared.Subscribers=100.ReactiveSQLite"), observation.get(
        "Observation.Shared.Plain.ReactiveSQLite")
    for column, index in (("p50", 0), ("p90", 1)):
        value = f"{shared[index] / plain[index]:.2f}" if shared and plain else "missing"
        print(f"| Shared (issue 32), {column}: ours, 100 subscribers / one plain observation | {value} | <= 1.2 |")

# ReadBenchmarks: `Read.<Benchmark>.<Phase>.<Kind>.n=<rows>.<Library>` and
# `Read.SingleRowWrite.DefaultPool.<Library>`, times in microseconds, p0 and p50.
read = {}
name = None
for line in lines:
    if re.match(r"^Read\.[\w.=]+$", line.strip()):
        name = line.strip()
    elif name and "Time (wall clock)" in line:
        cells = [c.strip() for c in line.split("│") if c.strip()]
        unit = re.search(r"\((\w+)\)", cells[0]).group(1)
        scale = {"ns": 1e-3, "us": 1, "μs": 1, "ms": 1e3, "s": 1e6}[unit]
        read[name] = (float(cells[1]) * scale, float(cells[3]) * scale)
        name = None

if read:
    print()
    print("| read target | GRDB p50 (us) | ours p50 (us) | ours / GRDB, p50 | p0 | target |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")

    def row(label, ours, grdb, target):
        a, b = read.get(ours), read.get(grdb)
        if a and b:
            print(f"| {label} | {b[1]:.0f} | {a[1]:.0f} | {a[1] / b[1]:.2f} | {a[0] / b[0]:.2f} | {target} |")

    for benchmark, phase, baseline, target in [
        ("AllByIndex", "Initial", "AllByIndex", "<= 1.0"),
        ("AllByIndex", "CommitToValue", "AllByIndex", "<= 1.0"),
        ("AllDecodable", "Initial", "AllDecodable", "<= 1.0"),
        ("AllDecodable", "CommitToValue", "AllDecodable", "<= 1.0"),
        ("SetDifferencesByIndex", "Initial", "AllByIndex", "<= 1.0 (against GRDB's trackingAll)"),
        ("SetDifferencesDecodable", "Initial", "AllDecodable", "(no target)"),
    ]:
        for kind in ("Queue", "Pool"):
            for n in (10_000, 100_000):
                row(f"{benchmark}.{phase}, {kind.lower()}, n={n}",
                    f"Read.{benchmark}.{phase}.{kind}.n={n}.ReactiveSQLite",
                    f"Read.{baseline}.{phase}.{kind}.n={n}.GRDB", target)
    row("SingleRowWrite, default pools", "Read.SingleRowWrite.DefaultPool.ReactiveSQLite",
        "Read.SingleRowWrite.DefaultPool.GRDB", "<= 1.0")
    row("SingleRowWrite, ours with synchronous = FULL (before issue 16)",
        "Read.SingleRowWrite.DefaultPool.ReactiveSQLiteSynchronousFull",
        "Read.SingleRowWrite.DefaultPool.GRDB", "(diagnostic)")
