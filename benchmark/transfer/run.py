#!/usr/bin/env python3
"""Export and import throughput: memories per second.

  python3 benchmark/transfer/run.py [--binary build/src/strata] [--n 100000] [--workdir DIR]

Loads N memories of the scale harness's pseudo-word corpus (benchmark/scale/corpus.py) into a
fresh store by remember_batch calls of 1,000 (one server, --embedder none, so no embedding
competes), then times `strata export --out FILE` of that store, `strata import FILE` into a
fresh store, and `strata import FILE` again into the same store (every memory unchanged). Each
is wall clock of the whole command (opening the store included). The answer is checked: the
import reports N created then N unchanged, and the second store's export is byte-identical
to the first. Then the official server-memory format: a graph of N entities (two
observations each) and N relations, relations first, imported into a fresh store (N created)
and again (N unchanged). Python standard library only; a JSON summary goes to stdout, progress
to stderr.
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


def timed(argv):
    start = time.perf_counter()
    p = subprocess.run(argv, capture_output=True)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode()[-2000:]}")
    return seconds, p.stderr.decode()


def timed_import(binary, db, path, expected, what, n, unit):
    """Seconds `strata import PATH` took; its summary must say `expected`."""
    seconds, summary = timed([binary, "--db", db, "import", path])
    if expected not in summary:
        raise RuntimeError(f"{what}: the summary does not say {expected!r}: {summary[-500:]}")
    log(f"{what}: {seconds:.2f} s, {n / seconds:,.0f} {unit}/s")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "strata"))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="strata-transfer-")
    source = os.path.join(workdir, "source.db")
    target = os.path.join(workdir, "target.db")
    export = os.path.join(workdir, "export.jsonl")
    again = os.path.join(workdir, "again.jsonl")
    for path in (source, target):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    n = args.n
    log(f"loading {n:,} memories into {source}")
    load(args.binary, source, n)

    export_s, _ = timed([args.binary, "--db", source, "export", "--out", export])
    log(f"export: {export_s:.2f} s, {n / export_s:,.0f} memories/s, "
        f"{os.path.getsize(export) / 1e6:.1f} MB")
    import_s = timed_import(args.binary, target, export, f"created {n},",
                            "import into an empty store", n, "memories")
    reimport_s = timed_import(args.binary, target, export, f"unchanged {n},",
                              "re-import (all unchanged)", n, "memories")
    timed([args.binary, "--db", target, "export", "--out", again])
    with open(export, "rb") as a, open(again, "rb") as b:
        if a.read() != b.read():
            raise RuntimeError("the imported store's export differs from the original")
    log("round trip: byte-identical")

    graph = os.path.join(workdir, "memory.jsonl")
    graph_db = os.path.join(workdir, "graph.db")
    write_graph(graph, n)
    graph_s = timed_import(args.binary, graph_db, graph, f"created {n},",
                           "server-memory import", n, "entities")
    graph_again_s = timed_import(args.binary, graph_db, graph, f"unchanged {n},",
                                 "server-memory re-import (all unchanged)", n, "entities")
    json.dump({"memories": n,
               "export_bytes": os.path.getsize(export),
               "export": {"seconds": round(export_s, 2), "memories_per_s": round(n / export_s)},
               "import_empty": {"seconds": round(import_s, 2),
                                "memories_per_s": round(n / import_s)},
               "reimport_unchanged": {"seconds": round(reimport_s, 2),
                                      "memories_per_s": round(n / reimport_s)},
               "round_trip_identical": True,
               "server_memory_import": {"seconds": round(graph_s, 2),
                                        "entities_per_s": round(n / graph_s)},
               "server_memory_reimport_unchanged": {
                   "seconds": round(graph_again_s, 2),
                   "entities_per_s": round(n / graph_again_s)}}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
