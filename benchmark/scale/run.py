#!/usr/bin/env python3
"""The scale harness: drives the real strata binary over MCP stdio at each corpus size.

  python3 benchmark/scale/run.py --sizes 10000 100000 1000000 [--profile perseus|pseudo] [--out report.json]

Two corpus profiles (corpus.py), recorded in the report (top level and per size):

- `perseus` (the default, the corpus of record): Perseus Vault's scale corpus, loaded and
  queried the way Perseus Vault's harness does it, by its tool names. At each size N, one
  persistent strata process on a fresh database loads all N memories by single
  perseus_vault_remember calls (body as body_json): the whole load's rate and its first and last
  10%'s; then the embedding backlog left at the end of the load is drained (its rate), recall
  latency by perseus_vault_recall for each mode (query "entity R group G", R in [0, N) and G in
  [0, 977) drawn independently, limit 10), perseus_vault_as_of point lookups with an as_of far
  in the future, temporal recall (the fts5 query with as_of_unix_ms), file sizes, peak RSS, and
  cold start on the loaded database (spawn, initialize, first perseus_vault_recall
  "entity 1 group 1", fts5, limit 5; median of 5).
- `pseudo`: strata's own pseudo-word corpus by the canonical tools: the first
  tenth by single remember calls, the middle eight tenths by remember_batch, the embedding
  backlog drained (its rate), the last tenth by single calls (the single-call rate over the two
  tenths, and each tenth's); then the same measurements by recall / as_of (as_of now), cold
  start with recall "entity 1 group 1", limit 10.

Python standard library only; progress goes to stderr, the JSON report to --out (default: stdout).
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
from mcp_session import Session, file_size, timed  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentiles(samples_s):
    ms = sorted(s * 1000 for s in samples_s)
    pick = lambda q: ms[min(len(ms) - 1, int(round(q * (len(ms) - 1))))]
    return {"p50_ms": round(pick(0.50), 3), "p95_ms": round(pick(0.95), 3),
            "p99_ms": round(pick(0.99), 3), "samples": len(ms)}


def machine():
    info = {"cores": os.cpu_count(), "platform": platform.platform()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        with open("/proc/meminfo") as f:
            info["memory_bytes"] = int(next(l for l in f if l.startswith("MemTotal")).split()[1]) * 1024
        with open("/etc/os-release") as f:
            info["os"] = next(l.split("=", 1)[1].strip().strip('"') for l in f if l.startswith("PRETTY_NAME"))
    except (OSError, StopIteration):
        pass
    try:
        df = subprocess.run(["df", "-h", "--output=source,fstype,size", ROOT], capture_output=True,
                            text=True, check=True).stdout.splitlines()[-1].split()
        info["disk"] = {"device": df[0], "fstype": df[1], "size": df[2]}
    except (OSError, subprocess.CalledProcessError, IndexError):
        pass
    return info


def commit(binary=None):
    """The checkout's commit ("-dirty" with changes): of the one `binary` was built in, when
    given (an A/B's other binary is built in a worktree of its own), else this one's."""
    where = os.path.dirname(os.path.abspath(binary)) if binary else ROOT
    try:
        head = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Profile:
    """A corpus profile: its memories and the tools (and argument names) it is written and
    read with."""

    def __init__(self, name):
        self.name = name
        self.memory = corpus.PROFILES[name]  # canonical remember arguments of memory i
        perseus = name == "perseus"
        self.remember_tool = "perseus_vault_remember" if perseus else "remember"
        self.remember_args = corpus.perseus_remember_args if perseus else corpus.memory
        self.recall_tool = "perseus_vault_recall" if perseus else "recall"
        self.as_of_tool = "perseus_vault_as_of" if perseus else "as_of"
        self.as_of_arg = "as_of_unix_ms" if perseus else "as_of"
        # Perseus Vault's harness asks as_of far in the future; the pseudo profile asks now.
        self.as_of_ahead_ms = 10 * 365 * 86_400_000 if perseus else 0
        self.cold_start_recall = ({"query": "entity 1 group 1", "mode": "fts5", "limit": 5} if perseus
                                  else {"query": "entity 1 group 1", "limit": 10})


def load_single(session, lo, hi, profile):
    """Single remember calls (the profile's tool) for memories lo..hi-1; returns the seconds
    they took. Requests are serialized ahead, a chunk at a time, so the clock runs only while a
    request is on its way and answered."""
    elapsed = 0.0
    chunk = max(1, min(10000, (hi - lo) // 10))
    for start_i in range(lo, hi, chunk):
        lines = [session.call_line(profile.remember_tool, profile.remember_args(i))
                 for i in range(start_i, min(hi, start_i + chunk))]
        for line in lines:
            start = time.perf_counter()
            session.raw_call(line)
            elapsed += time.perf_counter() - start
        done = min(hi, start_i + chunk)
        log(f"  {profile.remember_tool} {done:,}  {(done - lo) / elapsed:,.0f}/s")
    return elapsed


def write_rates(memories, seconds, tenth, first_s, last_s):
    """The report's write block (and its log line): single-call writes of `memories` in
    `seconds`, of which the first tenth of the load took first_s and the last tenth last_s."""
    block = {"memories": memories, "seconds": round(seconds, 2),
             "rate_per_s": round(memories / seconds, 1),
             "first_10pct_rate_per_s": round(tenth / first_s, 1),
             "last_10pct_rate_per_s": round(tenth / last_s, 1),
             "last_over_first": round(first_s / last_s, 3)}
    log(f"  writes: {block['rate_per_s']:,.0f}/s (first 10% {block['first_10pct_rate_per_s']:,.0f}/s, "
        f"last 10% {block['last_10pct_rate_per_s']:,.0f}/s)")
    return block


MIN_TIMED_BACKLOG = 1000


def drain(session, result, key):
    """Waits for the embedding worker to embed and index the backlog; records it under `key`.
    A backlog under MIN_TIMED_BACKLOG (the worker kept up with the writes, as it may with
    single calls) drains within the polling interval: its rate is not measured (None)."""
    cpu = session.cpu_seconds()
    waited = wait_embedded(session)
    if waited:
        seconds, pending = waited
        timed = seconds > 0 and pending >= MIN_TIMED_BACKLOG
        rate = round(pending / seconds, 1) if timed else None
        result[key] = {"backlog": pending, "drain_seconds": round(seconds, 2), "rate_per_s": rate}
        # Per CPU second of the server (the embedding worker, and stats answering the polls):
        # what one core drains, whatever else the machine runs.
        cpu_after = session.cpu_seconds()
        if timed and cpu is not None and cpu_after is not None and cpu_after > cpu:
            result[key]["cpu_seconds"] = round(cpu_after - cpu, 2)
            result[key]["rate_per_cpu_s"] = round(pending / (cpu_after - cpu), 1)
        log(f"  embedding backlog of {pending:,}: drained in {seconds:.1f} s"
            + (f" ({rate:,.0f}/s, {result[key].get('rate_per_cpu_s')}/CPU s)" if rate
               else " (too small to time)"))


def load_batch(session, lo, hi, profile, batch_size=1000):
    """remember_batch calls of batch_size memories for lo..hi-1, serialized ahead of the clock."""
    elapsed = 0.0
    report_every = max(batch_size, (hi - lo) // 10)
    for start_i in range(lo, hi, batch_size):
        line = session.call_line("remember_batch",
                                 {"items": [profile.memory(i) for i in range(start_i, min(hi, start_i + batch_size))]})
        start = time.perf_counter()
        result = session.raw_call(line)["structuredContent"]
        elapsed += time.perf_counter() - start
        if result["failed"]:
            raise RuntimeError(f"remember_batch: {result['failed']} items failed")
        done = min(hi, start_i + batch_size)
        if (done - lo) % report_every < batch_size or done == hi:
            log(f"  remember_batch {done:,}  {(done - lo) / elapsed:,.0f}/s")
    return {"memories": hi - lo, "batch_size": batch_size, "seconds": round(elapsed, 2),
            "rate_per_s": round((hi - lo) / elapsed, 1)}


def load_perseus(session, n, result, profile):
    """Loads memories 0..n-1 by single calls, as Perseus Vault's harness does: the whole load's
    rate and its first and last tenth's; then drains the embedding backlog the load left."""
    tenth = max(1, n // 10)
    cpu = session.cpu_seconds()
    first = load_single(session, 0, tenth, profile)
    middle = load_single(session, tenth, n - tenth, profile)
    last = load_single(session, n - tenth, n, profile)
    result["write"] = write_rates(n, first + middle + last, tenth, first, last)
    # The whole process's CPU (the embedding worker's beside the writes') per memory written.
    result["write"]["server_cpu_ms_per_write"] = cpu_ms_per_call(session, cpu, n)
    drain(session, result, "embed")


def load(session, n, result, profile):
    """Loads memories 0..n-1 into one store: the first tenth by single remember calls, the
    middle eight tenths by remember_batch, then (once the embedding worker has drained the
    backlog the batches left, which measures its rate) the last tenth by single calls again.
    The single-call rate is measured where the store is nearly empty and nearly full, each
    with the worker caught up, and a million memories load in minutes, not the quarter hour
    a million single calls take."""
    tenth = max(1, n // 10)
    first = load_single(session, 0, tenth, profile)
    result["batch"] = load_batch(session, tenth, n - tenth, profile)
    log(f"  remember_batch: {result['batch']['rate_per_s']:,.0f}/s")
    drain(session, result, "embed")
    last = load_single(session, n - tenth, n, profile)
    result["write"] = write_rates(2 * tenth, first + last, tenth, first, last)
    waited = wait_embedded(session)
    if waited:
        result["embed_after_load"] = {"pending_at_load_end": waited[1],
                                      "drain_seconds": round(waited[0], 2)}
        log(f"  embedding: {waited[1]:,} pending when the load ended, drained in {waited[0]:.1f} s")


def cpu_ms_per_call(session, cpu_before, calls):
    """The server's CPU milliseconds per call since cpu_before (None when unreadable)."""
    cpu_after = session.cpu_seconds()
    if cpu_before is None or cpu_after is None or not calls:
        return None
    return round((cpu_after - cpu_before) * 1000 / calls, 3)


def recall_latency(session, n, mode, samples, rng, profile, **extra):
    times = []
    cpu = session.cpu_seconds()
    for _ in range(samples):
        r = rng.randrange(n)
        args = {"query": f"entity {r} group {rng.randrange(corpus.GROUPS)}", "limit": 10, **extra}
        if mode:
            args["mode"] = mode
        seconds, result = timed(session.call, profile.recall_tool, args)
        times.append(seconds)
    return {**percentiles(times), "server_cpu_ms_per_call": cpu_ms_per_call(session, cpu, samples)}


def as_of_latency(session, n, samples, rng, as_of_ms, profile):
    times = []
    cpu = session.cpu_seconds()
    for _ in range(samples):
        i = rng.randrange(n)
        m = profile.memory(i)
        seconds, result = timed(session.call, profile.as_of_tool,
                                {"category": m["category"], "key": m["key"], profile.as_of_arg: as_of_ms})
        if not result["found"]:
            raise RuntimeError(f"as_of did not find {m['key']}")
        times.append(seconds)
    return {**percentiles(times), "server_cpu_ms_per_call": cpu_ms_per_call(session, cpu, samples)}


def cold_start(binary, db, profile, strata_args, runs=5):
    """Median of `runs` trials: spawn strata on the loaded database, initialize, first recall."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session = Session(binary, db, strata_args)
        session.initialize()
        session.call(profile.recall_tool, profile.cold_start_recall)
        times.append(time.perf_counter() - start)
        session.close()
    return round(statistics.median(times) * 1000, 2)


def index_recall(binary, db, queries=50):
    """The vector index's recall@10 against an exact scan (strata check-index: self-queries
    spread over the stored vectors)."""
    out = subprocess.run([binary, "check-index", "--queries", str(queries), "--db", db],
                         capture_output=True, text=True, check=True).stdout
    m = re.match(r"recall@10 ([0-9.e-]+) over \d+ queries \(([0-9.e-]+) of the results", out)
    if not m:
        raise RuntimeError(f"check-index said: {out!r}")
    return {"recall": float(m.group(1)), "epsilon_recall": float(m.group(2)), "queries": queries}


def wait_embedded(session, timeout_s=7200):
    """Polls stats until every version has a vector and the index holds them all.
    Returns (seconds waited, pending when the wait began); None without an embedder."""
    start = time.perf_counter()
    first = None
    while True:
        asked = time.perf_counter()
        e = session.call("stats", {}).get("embeddings")
        # stats counts every vector (50-100 ms at 100K, more at 1M): poll at most 1/20 of the
        # time, so the server's main thread does not take a core from the worker it is timing,
        # but at least every 2% of the wait so far, so the wait is timed to within 2%.
        now = time.perf_counter()
        pause = max(0.2, min(20 * (now - asked), 0.02 * (now - start)))
        if not e:
            return None
        if first is None:
            first = e["pending"]
        if e["pending"] == 0 and e["index_state"] == "ready" and e["indexed"] >= e["vectors"]:
            return time.perf_counter() - start, first
        if e.get("last_error"):
            log(f"  embedder error: {e['last_error']}")
        if time.perf_counter() - start > timeout_s:
            raise RuntimeError(f"embedding did not finish in {timeout_s} s: {e}")
        time.sleep(pause)


def histogram_quantile(histogram, q):
    """The smallest value v of {value: count} with at least a share q of the counts at or below v."""
    total = sum(histogram.values())
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= q * total:
            return value
    return None


def dedup_stats(stats, n=None):
    """The stats dedup section's candidates verified per write (median, p99, max, mean, the
    histogram) and, given the memories written, how many of them were merged away."""
    dedup = stats.get("dedup")
    if not dedup or not dedup.get("checks"):
        return None
    histogram = {int(k): v for k, v in dedup.get("candidates_histogram", {}).items()}
    out = {"checks": dedup["checks"], "candidates_median": histogram_quantile(histogram, 0.5),
           "candidates_p99": histogram_quantile(histogram, 0.99),
           "candidates_mean": round(dedup["candidates_verified"] / dedup["checks"], 3),
           "candidates_max": max(histogram) if histogram else 0,
           "candidates_histogram": {str(k): histogram[k] for k in sorted(histogram)},
           "merges": dedup.get("merges")}
    if n is not None and "active_memories" in stats:
        out["merged_away"] = n - stats["active_memories"]
    return out


def measure_size(binary, n, workdir, samples, seed, profile, strata_args=()):
    log(f"size {n:,}, profile {profile.name}")
    rng = random.Random(seed)
    db = os.path.join(workdir, f"scale-{n}.db")
    session = Session(binary, db, strata_args)
    session.initialize()
    result = {"memories": n, "profile": profile.name}
    (load_perseus if profile.name == "perseus" else load)(session, n, result, profile)
    if "embed" in result:
        result["embed"]["peak_rss_bytes"] = session.peak_rss_bytes()
    stats = session.call("stats", {})
    result["active_memories"] = stats.get("active_memories")
    result["dedup"] = dedup_stats(stats, n)
    if result["dedup"]:
        log(f"  dedup: candidates per write median {result['dedup']['candidates_median']}, "
            f"p99 {result['dedup']['candidates_p99']}, max {result['dedup']['candidates_max']}; "
            f"{result['dedup'].get('merged_away')} of {n:,} merged away")
    modes = stats.get("recall_modes", ["fts5"])
    result["recall"] = {}
    for mode in ("fts5", "dense", "hybrid"):
        if mode in modes:
            result["recall"][mode] = recall_latency(session, n, mode, samples, rng, profile)
            log(f"  recall {mode}: {result['recall'][mode]}")
        else:
            result["recall"][mode] = None
    as_of_ms = int(time.time() * 1000) + profile.as_of_ahead_ms
    result["as_of"] = as_of_latency(session, n, samples, rng, as_of_ms, profile)
    log(f"  as_of: {result['as_of']}")
    result["temporal_recall"] = recall_latency(session, n, "fts5", samples, rng, profile,
                                               **{profile.as_of_arg: as_of_ms})
    log(f"  temporal recall: {result['temporal_recall']}")
    result["peak_rss_bytes"] = session.peak_rss_bytes()
    session.close()
    result["db"] = {"main_bytes": file_size(db), "wal_bytes": file_size(db + "-wal"),
                    "index_bytes": file_size(db + ".hnsw")}
    if stats.get("embeddings"):
        result["embeddings"] = {k: stats["embeddings"][k] for k in ("embedder", "dimension", "vectors")}
    result["db"]["bytes_per_memory"] = round(result["db"]["main_bytes"] / n, 1)
    result["cold_start_ms"] = cold_start(binary, db, profile, strata_args)
    log(f"  cold start {result['cold_start_ms']} ms; db {result['db']}")
    if stats.get("embeddings"):
        result["index_recall_at_10"] = index_recall(binary, db)
        log(f"  vector index recall@10: {result['index_recall_at_10']}")

    for path in (db,):
        for suffix in ("", "-wal", "-shm", ".hnsw", ".hnsw.meta"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--profile", choices=sorted(corpus.PROFILES), default="perseus",
                        help="the corpus and how it is loaded (default: perseus, the corpus of record)")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "strata"))
    parser.add_argument("--samples", type=int, default=200, help="latency samples per metric")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", help="where the databases go (default: a temporary directory)")
    parser.add_argument("--out", help="write the JSON report here (default: stdout)")
    parser.add_argument("--embedder", help="strata's --embedder SPEC (default: strata's, builtin), "
                        "e.g. bert:dir=DIR for a model benchmark/bert/write_model.py wrote")
    args = parser.parse_args()
    strata_args = ("--embedder", args.embedder) if args.embedder else ()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no strata binary at {args.binary}; build it first (tools/test or meson compile -C build)")
    workdir = args.workdir or tempfile.mkdtemp(prefix="strata-scale-")
    version = subprocess.run([args.binary, "--version"], capture_output=True, text=True).stdout.strip()
    report = {
        "machine": machine(),
        "binary": version,
        "commit": commit(args.binary),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "durability": "normal",
        "profile": args.profile,
        "embedder": args.embedder or "builtin",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "sizes": {},
    }
    try:
        for n in args.sizes:
            report["sizes"][str(n)] = measure_size(args.binary, n, workdir, args.samples, args.seed,
                                                   Profile(args.profile), strata_args)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["sha256"] = hashlib.sha256(json.dumps(report["sizes"], sort_keys=True).encode()).hexdigest()
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        log(f"wrote {args.out}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
