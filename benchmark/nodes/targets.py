#!/usr/bin/env python3
"""The many-nodes targets checked against runs of benchmark/nodes/run.py.

  python3 benchmark/nodes/targets.py RUN.json RUN.json RUN.json

The targets are for 100K memories of Perseus Vault's corpus on PostgreSQL, 2 nodes and 4
clients (PERF.md, "Many nodes"); a report of another setup is refused. Each metric is judged
by its median over the runs, as benchmark/scale/gate.py judges its budgets (three runs, the
median of each metric): a recall p99 of 200 samples is the second slowest, and one of this
VM's slow minutes sets it in a run of its own. Every run's value is printed beside the
median, so a miss in one run shows. Exit status: 0 when every median is within its target,
1 when one is not, 2 for unusable reports.
"""
import json
import statistics
import sys

SETUP = {"store": "postgresql", "size": 100000, "nodes": 2, "clients": 4, "profile": "perseus"}

# Name, where in the report, "min" or "max", the target.
TARGETS = [
    ("writes a second (all clients)", ("writes", "rate_per_s"), "min", 1000),
    ("fts5 p99 after the load, ms", ("recall_after_load", "fts5", "p99_ms"), "max", 10),
    ("dense p99 after the load, ms", ("recall_after_load", "dense", "p99_ms"), "max", 10),
    ("hybrid p99 after the load, ms", ("recall_after_load", "hybrid", "p99_ms"), "max", 15),
    ("fts5 p99 at rest, ms", ("recall", "fts5", "p99_ms"), "max", 10),
    ("dense p99 at rest, ms", ("recall", "dense", "p99_ms"), "max", 10),
    ("hybrid p99 at rest, ms", ("recall", "hybrid", "p99_ms"), "max", 15),
    ("visible on the other node p99, ms", ("visibility", "p99_ms"), "max", 1000),
]


def value(report, path):
    for key in path:
        if not isinstance(report, dict) or key not in report:
            return None
        report = report[key]
    return report if isinstance(report, (int, float)) else None


def main(paths):
    if len(paths) < 3:
        print(__doc__.strip())
        print("\ngive at least three runs (%d given)" % len(paths))
        return 2
    reports = []
    for path in paths:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: not a report: %s" % (path, e))
            return 2
        other = {k: report.get(k) for k, v in SETUP.items() if report.get(k) != v}
        if other:
            print("%s: the targets are for %s, not %s" % (path, SETUP, other))
            return 2
        reports.append(report)
    print("%d runs: %s" % (len(reports), ", ".join(
        "%s %s" % (r.get("commit", "?"), r.get("date", "?")) for r in reports)))
    missed = []
    for name, path, kind, target in TARGETS:
        values = [value(r, path) for r in reports]
        if None in values:
            print("%-36s not in every report (%s)" % (name, ", ".join(map(str, values))))
            missed.append(name)
            continue
        median = statistics.median(values)
        met = median >= target if kind == "min" else median <= target
        if not met:
            missed.append(name)
        runs = ", ".join("%g" % v for v in values)
        print("%-36s median %-9g %s %-6g %-6s runs: %s" % (
            name, median, kind, target, "met" if met else "MISSED", runs))
    if missed:
        print("missed: %s" % "; ".join(missed))
        return 1
    print("every target met by the median of the runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
