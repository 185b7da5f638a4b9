#!/usr/bin/env python3
"""Export and import throughput: memories per second.

  python3 benchmark/transfer/run.py [--binary build/src/strata] [--n 100000] [--workdir DIR]
                                    [--load generate|remember]

Makes a strata export of N memories of the scale harness's pseudo-word corpus
(benchmark/scale/corpus.py). `--load generate` (the default) writes the file directly, with
what a store holds besides single versions: every 5th memory has a second version, every
50th was forgotten, every 100th has an alias, and every 200th supersedes the memory before
it (`remember` with `supersedes`: the predecessor gets a closing version). `--load remember`
loads N single-version memories into a store by remember_batch calls of 1,000 (one server,
--embedder none) and exports that store: slower (minutes at 100K), the old way.

Then, each the wall clock (and the CPU time) of the whole command, opening the store
included:
  1. `strata import FILE` into an empty store A (with --load generate; checked: N created,
     and A exports FILE's memory lines byte for byte);
  2. `strata export --out EXPORT` of A (and, for the constant-RSS check, its peak RSS);
  3. `strata import EXPORT` into an empty store B: the import figure;
  4. `strata import EXPORT` again into B (every memory unchanged);
  5. B's export must be byte-identical to EXPORT.
Then the official server-memory format: a graph of N entities (two observations each) and N
relations, relations first, imported into a fresh store (N created) and again (N unchanged).
Python standard library only; a JSON summary goes to stdout, progress to stderr.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
import corpus  # noqa: E402
from mcp_session import Session  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
T0 = 1_760_000_000_000  # Memory i is first written at T0 + i seconds.


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load(binary, db, n, batch=1000):
    session = Session(binary, db, ("--embedder", "none"))
    session.initialize()
    for lo in range(0, n, batch):
        line = session.call_line("remember_batch",
                                 {"items": [corpus.memory(i) for i in range(lo, min(n, lo + batch))]})
        result = session.raw_call(line)["structuredContent"]
        if result["failed"]:
            raise RuntimeError(f"remember_batch: {result['failed']} items failed")
        if (lo // batch) % 20 == 0:
            log(f"  loaded {lo + batch:,}")
    session.proc.stdin.close()
    session.proc.wait()


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def identity(i):
    return {"category": corpus.CATEGORIES[i % len(corpus.CATEGORIES)], "key": f"scale-{i}",
            "workspace": "team" if i % 10 == 9 else ""}


def version(number, recorded_at, body, i):
    return {"version": number, "recorded_at": recorded_at, "superseded_at": None,
            "valid_from": recorded_at, "valid_to": None, "type": "insight",
            "tags": ["bench"] if i % 3 == 0 else [], "source": None,
            "importance": 0.5 if i % 7 == 0 else None, "body_json": compact(body)}


def supersedes(i):
    """Whether memory i supersedes memory i - 1."""
    return i % 200 == 11


def record(i, n):
    """Memory i as `strata export` writes it, and its counts."""
    t = T0 + i * 1000
    r = {"id": i + 1, **identity(i), "created_at": t, "last_event_at": t, "versions": [],
         "retractions": [], "aliases": [], "supersedes": [], "superseded_by": []}
    versions = r["versions"]
    versions.append(version(1, t, corpus.body(i), i))
    if i % 5 == 0:
        versions[-1]["superseded_at"] = t + 100
        versions.append(version(2, t + 100, corpus.body(i, seed=43), i))
    if i % 50 == 7:
        at = versions[-1]["recorded_at"] + 10
        versions[-1]["superseded_at"] = at
        r["retractions"].append({"at": at, "reason": "obsolete"})
    if i % 100 == 3:
        alias = identity(i)
        alias["key"] += "-copy"
        r["aliases"].append({**alias, "similarity": 0.97, "created_at": t + 50})
    if supersedes(i):
        # The successor is written at t; valid from then, which ends the predecessor.
        r["supersedes"].append({**identity(i - 1), "at": t, "valid_from": t})
    if i + 1 < n and supersedes(i + 1):
        at = t + 1000  # The successor's first write.
        closing = dict(versions[-1], version=len(versions) + 1, recorded_at=at, valid_to=at)
        versions[-1]["superseded_at"] = at
        versions.append(closing)
        r["superseded_by"].append({**identity(i + 1), "at": at, "valid_from": at})
    r["last_event_at"] = max([versions[-1]["recorded_at"]] + [x["at"] for x in r["retractions"]])
    return r


def generate(path, n):
    """A strata export of n memories (see the module doc); its memory lines as bytes."""
    lines = [compact(record(i, n)) + "\n" for i in range(n)]
    counts = {"memories": n, "versions": 0, "retractions": 0, "aliases": 0, "supersessions": 0}
    for line in lines:
        r = json.loads(line)
        counts["versions"] += len(r["versions"])
        counts["retractions"] += len(r["retractions"])
        counts["aliases"] += len(r["aliases"])
        counts["supersessions"] += len(r["supersedes"])
    header = {"format": "strata-export", "format_version": 1, "strata_version": "generated",
              "schema_version": 0, "scope": {"workspace": None, "category": None, "as_of": None},
              "counts": counts}
    body = "".join(lines).encode("utf-8")
    with open(path, "wb") as f:
        f.write((compact(header) + "\n").encode("utf-8"))
        f.write(body)
    return body, counts


def write_graph(path, n):
    """server-memory JSONL: relations before the entities they name, as the importer allows."""
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"type": "relation", "from": f"entity-{i}",
                                "to": f"entity-{(i * 7919 + 1) % n}",
                                "relationType": "knows"}) + "\n")
        for i in range(n):
            text = corpus.body(i)
            f.write(json.dumps({"type": "entity", "name": f"entity-{i}", "entityType": "person",
                                "observations": [text["text"], text["detail"]]}) + "\n")


def peak_rss_kib(pid):
    """VmHWM of a running process in KiB, or None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def timed(argv):
    """Wall seconds, CPU seconds (user + system), peak RSS (MiB) and stderr of a command.

    The peak RSS is the child's own VmHWM, polled every 20 ms: ru_maxrss would report this
    script's RSS, which a child inherits at fork and keeps across exec."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        peak = 0
        while True:
            rss = peak_rss_kib(p.pid)
            if rss is None:
                break
            peak = max(peak, rss)
            time.sleep(0.02)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {stderr[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, peak / 1024, stderr


def timed_import(binary, db, path, expected, what, n, unit):
    """Figures of `strata import PATH`; its summary must say `expected`."""
    seconds, cpu, _, summary = timed([binary, "--db", db, "import", path])
    if expected not in summary:
        raise RuntimeError(f"{what}: the summary does not say {expected!r}: {summary[-500:]}")
    log(f"{what}: {seconds:.2f} s ({cpu:.2f} s CPU), {n / seconds:,.0f} {unit}/s")
    return {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            f"{unit}_per_s": round(n / seconds)}


def fresh(*paths):
    for path in paths:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "strata"))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--load", choices=("generate", "remember"), default="generate")
    parser.add_argument("--skip-graph", action="store_true",
                        help="leave out the server-memory import")
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="strata-transfer-")
    os.makedirs(workdir, exist_ok=True)
    source = os.path.join(workdir, "source.db")
    target = os.path.join(workdir, "target.db")
    generated = os.path.join(workdir, "generated.jsonl")
    export = os.path.join(workdir, "export.jsonl")
    again = os.path.join(workdir, "again.jsonl")
    fresh(source, target)
    n = args.n
    summary = {"memories": n, "load": args.load}
    if args.load == "generate":
        log(f"writing a strata export of {n:,} memories to {generated}")
        memory_lines, counts = generate(generated, n)
        summary["counts"] = counts
        summary["import_generated"] = timed_import(args.binary, source, generated,
                                                   f"created {n},", "import into store A", n,
                                                   "memories")
    else:
        log(f"loading {n:,} memories into {source}")
        load(args.binary, source, n)

    export_s, export_cpu, export_rss, _ = timed(
        [args.binary, "--db", source, "export", "--out", export])
    log(f"export: {export_s:.2f} s ({export_cpu:.2f} s CPU), {n / export_s:,.0f} memories/s, "
        f"{os.path.getsize(export) / 1e6:.1f} MB, peak RSS {export_rss:.0f} MiB")
    summary["export_bytes"] = os.path.getsize(export)
    summary["export"] = {"seconds": round(export_s, 2), "cpu_seconds": round(export_cpu, 2),
                         "memories_per_s": round(n / export_s),
                         "peak_rss_mib": round(export_rss)}
    if args.load == "generate":
        with open(export, "rb") as f:
            f.readline()
            if f.read() != memory_lines:
                raise RuntimeError("store A does not export the generated file's memory lines")
        log("store A exports the generated memory lines byte for byte")
    summary["import_empty"] = timed_import(args.binary, target, export, f"created {n},",
                                           "import into an empty store B", n, "memories")
    summary["reimport_unchanged"] = timed_import(args.binary, target, export, f"unchanged {n},",
                                                 "re-import (all unchanged)", n, "memories")
    timed([args.binary, "--db", target, "export", "--out", again])
    with open(export, "rb") as a, open(again, "rb") as b:
        if a.read() != b.read():
            raise RuntimeError("the imported store's export differs from the original")
    log("round trip: byte-identical")
    summary["round_trip_identical"] = True

    if not args.skip_graph:
        graph = os.path.join(workdir, "memory.jsonl")
        graph_db = os.path.join(workdir, "graph.db")
        fresh(graph_db)
        write_graph(graph, n)
        summary["server_memory_import"] = timed_import(
            args.binary, graph_db, graph, f"created {n},", "server-memory import", n, "entities")
        summary["server_memory_reimport_unchanged"] = timed_import(
            args.binary, graph_db, graph, f"unchanged {n},",
            "server-memory re-import (all unchanged)", n, "entities")
    json.dump(summary, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
