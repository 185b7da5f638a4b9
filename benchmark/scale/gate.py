#!/usr/bin/env python3
"""The performance gate: runs the scale harness (or reads a report) and fails on any budget missed.

  python3 benchmark/scale/gate.py                    # 10K, perseus profile, median of 3 runs
  python3 benchmark/scale/gate.py --size 100000 --runs 1
  python3 benchmark/scale/gate.py --profile pseudo   # strata's own pseudo-word corpus
  python3 benchmark/scale/gate.py --report report.json

Budgets live in BUDGETS below, per corpus size; each can be overridden with an environment
variable STRATA_BUDGET_<NAME> (e.g. STRATA_BUDGET_FTS5_P99_MS=5). They sit about 3x from what
this machine measures, so noise does not fail the gate, and tighter where a regression class
must not come back (common-term recall, dedup candidates, bytes per memory). Exit status: 0 when
every metric is within budget, 1 when one is not, 2 when the harness could not run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (path in a size's report, "min" or "max", budget per size), set from report.json,
# the perseus profile's run of 10K, 100K and 1M (commit 4ee27b1, 2026-12-02 16:52-17:08 UTC,
# nothing else running, on the Intel Xeon host this VM ran on that afternoon, slower than
# the AMD EPYC one of the morning's ac75e62 run), about 3x from what it measured, and wider
# where the same binary measured more on this host minutes before (at 10K: writes 1,048/s,
# fts5 p99 8.9-14.7 ms, hybrid p99 6.0-21.9, as_of p99 1.2-2.1 ms in a slow quarter of an
# hour; CI's gate takes the median of three runs and must not fail on such a quarter):
#   10K:  writes 2,015/s (last/first 1.01), fts5 p99 2.4 ms, as_of p99 1.27, temporal p99 2.3,
#         cold start 18.7, dense p99 1.9, hybrid p99 3.2, 1,618 B/memory, RSS 56 MiB;
#   100K: writes 2,552/s (1.49), fts5 p99 3.9, as_of 5.3, temporal 4.6, cold 29.9, dense 5.4,
#         hybrid 8.3, embedding drain 2,550/s, RSS 208 MiB;
#   1M:   writes 2,475/s (1.20), fts5 p99 5.9, as_of 0.40, temporal 4.9, cold 32.5, dense 3.3,
#         hybrid 8.0, drain 1,276/s, RSS 1,013 MiB.
# Cold start at 10K was budgeted 40 ms, 2.1x from 18.7: on this VM starts measured 24-30 ms
# (2026-12-04), and CI's gate of 64a3db6 failed on a median of 40.5 ms (the same clone, run
# again at once: 27.9), so it is 60 ms, as at 100K: about 3x, as the others.
# Dedup candidates: median 0 at every size. That profile loads by single calls only, so batch
# rates are measured (and gated) by the pseudo profile alone, whose budgets these keep.
BUDGETS = {
    "WRITE_RATE_PER_S": (("write", "rate_per_s"), "min", {10000: 700, 100000: 850, 1000000: 800}),
    "LAST_OVER_FIRST": (("write", "last_over_first"), "min", {10000: 0.5, 100000: 0.4, 1000000: 0.4}),
    "BATCH_RATE_PER_S": (("batch", "rate_per_s"), "min", {10000: 1500, 100000: 1200, 1000000: 600}),
    "FTS5_P99_MS": (("recall", "fts5", "p99_ms"), "max", {10000: 12, 100000: 16, 1000000: 18}),
    "AS_OF_P99_MS": (("as_of", "p99_ms"), "max", {10000: 4, 100000: 16, 1000000: 3}),
    "TEMPORAL_RECALL_P99_MS": (("temporal_recall", "p99_ms"), "max", {10000: 12, 100000: 16, 1000000: 15}),
    "COLD_START_MS": (("cold_start_ms",), "max", {10000: 60, 100000: 60, 1000000: 90}),
    "DENSE_P99_MS": (("recall", "dense", "p99_ms"), "max", {10000: 6, 100000: 16, 1000000: 10}),
    "HYBRID_P99_MS": (("recall", "hybrid", "p99_ms"), "max", {10000: 20, 100000: 25, 1000000: 24}),
    "EMBED_RATE_PER_S": (("embed", "rate_per_s"), "min", {10000: 400, 100000: 450, 1000000: 400}),
    # The vectors (388 bytes each at 384 dimensions) live in the database file.
    "BYTES_PER_MEMORY": (("db", "bytes_per_memory"), "max", {10000: 3500, 100000: 3500, 1000000: 3500}),
    # The HNSW index is held in memory: ~0.6 KB per vector (388-byte elements, M = 24 links).
    "PEAK_RSS_MB": (("peak_rss_bytes",), "max", {10000: 150, 100000: 600, 1000000: 2500}),
    "DEDUP_CANDIDATES_MEDIAN": (("dedup", "candidates_median"), "max", {10000: 5, 100000: 5, 1000000: 5}),
}


def lookup(report, path):
    value = report
    for key in path:
        if not isinstance(value, dict) or key not in value or value[key] is None:
            return None
        value = value[key]
    return value


def budget_for(name, size):
    override = os.environ.get(f"STRATA_BUDGET_{name}")
    if override is not None:
        return float(override)
    per_size = BUDGETS[name][2]
    if size in per_size:
        return per_size[size]
    # Between listed sizes: the budget of the next larger one.
    larger = [s for s in sorted(per_size) if s >= size]
    return per_size[larger[0] if larger else max(per_size)]


def measured(report, size, name):
    value = lookup(report["sizes"][str(size)], BUDGETS[name][0])
    if name == "PEAK_RSS_MB" and value is not None:
        value = value / (1 << 20)
    return value


def median_report(reports, size):
    """One report whose every gated metric is the median over `reports`."""
    merged = json.loads(json.dumps(reports[0]))
    for name, (path, _, _) in BUDGETS.items():
        values = [lookup(r["sizes"][str(size)], path) for r in reports]
        values = [v for v in values if v is not None]
        if not values:
            continue
        target = merged["sizes"][str(size)]
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = statistics.median(values)
    return merged


def run_harness(size, runs, binary, profile):
    reports = []
    for i in range(runs):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
            path = out.name
        command = [sys.executable, os.path.join(HERE, "run.py"), "--sizes", str(size), "--out", path,
                   "--samples", "120", "--profile", profile]
        if binary:
            command += ["--binary", binary]
        print(f"gate: run {i + 1} of {runs} at {size:,} memories, profile {profile}", file=sys.stderr,
              flush=True)
        if subprocess.run(command).returncode != 0:
            sys.exit(2)
        with open(path) as f:
            reports.append(json.load(f))
        os.remove(path)
    return median_report(reports, size)


def margin(value, budget, kind):
    """How far the measured value is from its budget, in words: "2.5x headroom" when within
    it, "1.3x over" / "1.3x under" when not."""
    if value == budget:
        return "at budget"
    if budget == 0 or value == 0:
        return ""
    ratio = value / budget if kind == "min" else budget / value
    if ratio >= 1:
        return f"{ratio:.2f}x headroom"
    return f"{1 / ratio:.2f}x {'under' if kind == 'min' else 'over'}"


def check(report, size):
    """Prints the table (metric, measured, budget, result, margin) and returns the names of
    the metrics out of budget."""
    missed = []
    print(f"{'metric':26} {'measured':>12} {'budget':>12}  {'result':12} margin")
    for name, (_, kind, _) in BUDGETS.items():
        value = measured(report, size, name)
        budget = budget_for(name, size)
        if value is None:
            print(f"{name:26} {'-':>12} {kind + ' ' + format(budget, 'g'):>12}  not measured")
            continue
        ok = value >= budget if kind == "min" else value <= budget
        print(f"{name:26} {value:12.3f} {kind + ' ' + format(budget, 'g'):>12}  "
              f"{'ok' if ok else 'MISSED':12} {margin(value, budget, kind)}")
        if not ok:
            missed.append(name)
    return missed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", help="check this report instead of running the harness")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3, help="harness runs; the median is checked")
    parser.add_argument("--binary", help="the strata binary (default: build/src/strata)")
    parser.add_argument("--profile", choices=("perseus", "pseudo"), default="perseus",
                        help="the harness's corpus profile (default: perseus, the corpus of record)")
    args = parser.parse_args()
    if args.report:
        with open(args.report) as f:
            report = json.load(f)
        sizes = [int(s) for s in report["sizes"]]
    else:
        report = run_harness(args.size, args.runs, args.binary, args.profile)
        sizes = [args.size]
    missed = []
    for size in sizes:
        profile = report["sizes"][str(size)].get("profile") or report.get("profile") or "pseudo (unrecorded)"
        print(f"\n{size:,} memories, profile {profile} (commit {report.get('commit', '?')}, "
              f"{report.get('date', '?')})")
        missed += [f"{name} at {size}" for name in check(report, size)]
    if missed:
        print(f"\ngate: {len(missed)} budget(s) missed: {', '.join(missed)}")
        return 1
    print("\ngate: every metric within budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
