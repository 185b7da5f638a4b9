#!/usr/bin/env python3
"""remember_batch's cost an item on PostgreSQL (PERF.md, "What is left" and "Session 31").

  python3 benchmark/transfer/remember_batch.py [--strata build/src/strata ...]
      [--sizes 250,500,1000,2000] [--profile perseus|pseudo]

Starts a throwaway PostgreSQL cluster (tools/pg-cluster) and, for each --strata binary in
turn (give several to alternate builds) and each size N, a fresh database and one stdio
`strata --store URI --embedder none` on it: one untimed batch of 20 memories, then one timed
remember_batch of N memories of the scale corpus (benchmark/scale/corpus.py, Perseus Vault's
by default), each new. Prints the wall time of the call and ms an item; stops the cluster.
Python standard library only.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "benchmark", "scale"))
import corpus  # noqa: E402
import mcp_client  # noqa: E402

PG_CLUSTER = os.path.join(ROOT, "tools", "pg-cluster")
WARM_UP = 20


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strata", action="append",
                    help="a strata binary; repeat to alternate builds")
    ap.add_argument("--sizes", default="250,500,1000,2000")
    ap.add_argument("--profile", default="perseus", choices=sorted(corpus.PROFILES))
    args = ap.parse_args()
    binaries = args.strata or [os.path.join(ROOT, "build", "src", "strata")]
    sizes = [int(n) for n in args.sizes.split(",")]
    memory = corpus.PROFILES[args.profile]
    mcp_client.READ_TIMEOUT = 600
    with tempfile.TemporaryDirectory(prefix="strata-batch-") as tmp:
        cluster = os.path.join(tmp, "cluster")
        uri = subprocess.run([PG_CLUSTER, "start", cluster], check=True, capture_output=True,
                             text=True).stdout.strip()
        os.environ["STRATA_TEST_PG_URI"] = uri  # For mcp_client.fresh_pg_database.
        try:
            next_memory = 0
            for b, binary in enumerate(binaries):
                for n in sizes:
                    name = "batch_%d_%d" % (b, n)
                    client = mcp_client.McpClient(
                        binary, ["--store", mcp_client.fresh_pg_database(name),
                                 "--embedder", "none"],
                        stderr_path=os.path.join(tmp, name + ".stderr"))
                    client.initialize()
                    for count, timed in ((WARM_UP, False), (n, True)):
                        items = [memory(next_memory + i) for i in range(count)]
                        next_memory += count
                        began = time.perf_counter()
                        _, failed, raw = client.call_tool("remember_batch", {"items": items})
                        seconds = time.perf_counter() - began
                        if failed:
                            raise SystemExit("remember_batch failed: %r" % raw)
                    print("%s: %d items %.2f s, %.2f ms an item"
                          % (binary, n, seconds, seconds * 1000 / n), flush=True)
                    client.close()
        finally:
            subprocess.run([PG_CLUSTER, "stop", cluster], capture_output=True)


if __name__ == "__main__":
    main()
