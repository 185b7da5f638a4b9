#!/usr/bin/env python3
"""Whether slow recalls coincide with another thread's bursts of CPU (PERF.md, "Session 35").

  python3 benchmark/nodes/bursts.py --dir DIR [--strata build/src/strata] [--mode hybrid]
      [--queries 1500] [--thread kdamond]

On a store kept by profile.py (--dir DIR, loaded with --load), starts 2 nodes, warms up, then
times --queries recalls of run.py's query (one client at a time, alternating nodes) while
`perf record -a` samples every CPU (499 Hz, CLOCK_MONOTONIC, so that its times and the
recalls' line up). A burst is a run of samples of threads whose name starts with --thread no
more than 30 ms apart. Prints, as JSON: how many bursts, how far apart and how long; the share
of all recalls and of slow ones (over twice the median) that overlapped a burst; and the
latency of the recalls that did and of those that did not. Needs perf and root.
"""
import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
_spec = importlib.util.spec_from_file_location("nodes_run", os.path.join(HERE, "run.py"))
nodes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nodes)

SAMPLE_S = 1 / 499  # perf's period: a sample stands for this much of a thread's time.


def bursts_of(perf_data, thread):
    """[start, end] (CLOCK_MONOTONIC seconds) of each burst of `thread`'s samples."""
    lines = subprocess.run(["perf", "script", "-i", perf_data, "-F", "comm,time"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    times = sorted(float(line.split()[-1].rstrip(":")) for line in lines
                   if line.strip().startswith(thread))
    bursts = []
    for t in times:
        if bursts and t - bursts[-1][1] <= 0.03:
            bursts[-1][1] = t
        else:
            bursts.append([t, t])
    return [(start - SAMPLE_S, end + SAMPLE_S) for start, end in bursts]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="profile.py's kept store")
    ap.add_argument("--strata", default=os.path.join(ROOT, "build", "src", "strata"))
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--queries", type=int, default=1500)
    ap.add_argument("--thread", default="kdamond")
    args = ap.parse_args()
    uri, size = nodes.kept_store(args.dir)
    with tempfile.TemporaryDirectory(prefix="strata-bursts-") as tmp:
        node_list = []
        try:
            node_list = [nodes.Node(args.strata, uri, args.dir, n, "builtin") for n in range(2)]
            clients = [nodes.Client(node) for node in node_list]
            rng = random.Random(11)

            def recall(client):
                began = time.monotonic()
                client.call("perseus_vault_recall", {"query": nodes.recall_query(rng, size),
                                                     "mode": args.mode, "limit": 10})
                return began, time.monotonic()

            for q in range(300):  # The nodes' first recalls, and their index loaded.
                recall(clients[q % 2])
            perf_data = os.path.join(tmp, "perf.data")
            perf = subprocess.Popen(["perf", "record", "-a", "-q", "-k", "CLOCK_MONOTONIC",
                                     "-F", "499", "-o", perf_data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            samples = [recall(clients[q % 2]) for q in range(args.queries)]
            perf.terminate()
            perf.wait()
        finally:
            for node in node_list:
                node.stop()
        bursts = bursts_of(perf_data, args.thread)
    seconds = [end - began for began, end in samples]
    median = statistics.median(seconds)
    overlaps = [any(b0 < end and b1 > began for b0, b1 in bursts) for began, end in samples]
    slow = [o for o, s in zip(overlaps, seconds) if s > 2 * median]
    gaps = [b[0] - a[0] for a, b in zip(bursts, bursts[1:])]
    durations = [b1 - b0 for b0, b1 in bursts]

    def p50_p99(values):
        return [nodes.percentiles(values)[p] for p in ("p50_ms", "p99_ms")] if values else None

    print(json.dumps({
        "mode": args.mode, "queries": args.queries, "thread": args.thread,
        "bursts": len(bursts), "burst_every_s": round(statistics.median(gaps), 3) if gaps else None,
        "burst_ms_p50_max": [nodes.percentiles(durations)["p50_ms"], round(max(durations) * 1000, 3)]
        if durations else None,
        "recall_p50_p99_ms": p50_p99(seconds),
        "overlapping_share_of_all": round(sum(overlaps) / len(seconds), 3),
        "overlapping_share_of_slow": round(sum(slow) / len(slow), 3) if slow else None,
        "slow": len(slow),
        "overlapping_p50_p99_ms": p50_p99([s for o, s in zip(overlaps, seconds) if o]),
        "others_p50_p99_ms": p50_p99([s for o, s in zip(overlaps, seconds) if not o])}))


if __name__ == "__main__":
    main()
