#!/usr/bin/env python3
"""WAL frames a single write appends, by table: where a write's I/O goes.

  python3 benchmark/scale/wal_frames.py [--size 10000] [--writes 200] [--binary build/src/strata]

Loads --size memories of the perseus corpus by single perseus_vault_remember calls (no
embedder: the worker's vector writes are not a remember's), then traces the server's pwrite
calls with strace while it takes --writes more, reads every WAL frame header in the written
bytes (4-byte page number first), and maps each page to its table or index with SQLite's
dbstat. Prints frames and pwrite calls per write and frames per write by table. Needs strace
and a sqlite3 module with dbstat (Debian's and pyenv's both have it); not run by CI.
"""
import argparse
import collections
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
from mcp_session import Session  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FRAME_HEADER = 24
WAL_HEADER = 32


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "strata"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="strata-frames-")
    db, trace = os.path.join(work, "frames.db"), os.path.join(work, "strace.txt")
    session = Session(args.binary, db, ("--embedder", "none"))
    session.initialize()
    for i in range(args.size):
        session.call("perseus_vault_remember", corpus.perseus_remember_args(i))
    tracer = subprocess.Popen(["strace", "-f", "-p", str(session.proc.pid), "-e", "trace=pwrite64",
                               "-s", "200000", "-xx", "-o", trace], stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # strace attaches
    for i in range(args.size, args.size + args.writes):
        session.call("perseus_vault_remember", corpus.perseus_remember_args(i))
    time.sleep(0.3)
    tracer.terminate()
    tracer.wait()
    session.proc.stdin.close()
    session.proc.wait()

    owner = dict(sqlite3.connect(db).execute("SELECT pageno, name FROM dbstat"))
    page_size = sqlite3.connect(db).execute("PRAGMA page_size").fetchone()[0]
    frame = FRAME_HEADER + page_size
    calls, frames, by_table = 0, 0, collections.Counter()
    pattern = re.compile(r'pwrite64\((\d+), "((?:\\x[0-9a-f]{2})*)", (\d+), (\d+)\)')
    with open(trace) as f:
        for line in f:
            if "pwrite64(" not in line:
                continue
            calls += 1
            m = pattern.search(line)
            if not m:
                continue
            data, offset = bytes.fromhex(m.group(2).replace("\\x", "")), int(m.group(4))
            # WAL writes start at a frame boundary (or at the WAL header, before frame 1);
            # database-file writes (checkpoints) are whole pages at multiples of the page size.
            if offset >= WAL_HEADER and (offset - WAL_HEADER) % frame == 0:
                start = 0
            elif offset == 0 and len(data) > WAL_HEADER and len(data) % page_size != 0:
                start = WAL_HEADER
            else:
                continue
            for k in range(start, len(data) - FRAME_HEADER + 1, frame):
                page = int.from_bytes(data[k:k + 4], "big")
                frames += 1
                by_table[owner.get(page, "(freed or new page)")] += 1
    n = args.writes
    print(f"{n} single writes after {args.size:,}: {frames / n:.2f} WAL frames and {calls / n:.2f} "
          f"pwrite calls a write (checkpoints included)")
    for name, count in by_table.most_common():
        print(f"  {name:32} {count / n:6.2f}")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
