#!/usr/bin/env python3
"""The vector index's recall@10 on natural text: WordNet's glosses (Debian's wordnet-base,
~117K English definitions) as memories, loaded by remember_batch into a fresh store, embedded
by the built-in embedder, then `strata check-index` (stored vectors as queries, the index's
top 10 against an exact scan's). The scale corpus's texts are near-random, the hard case for
a graph index; this measures the case agents have.

  python3 benchmark/scale/natural_recall.py [--limit N] [--queries 100]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_session import Session  # noqa: E402
from run import ROOT, index_recall, log, wait_embedded  # noqa: E402

WORDNET = "/usr/share/wordnet"


def glosses(limit):
    """(key, text) of each synset: its first lemma and its gloss."""
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, f"data.{pos}"), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue  # The licence header.
                fields, gloss = line.split(" | ", 1)
                parts = fields.split()
                lemma = parts[4].replace("_", " ")
                out.append((f"wn-{pos}-{parts[0]}", f"{lemma}: {gloss.strip()}"))
                if len(out) >= limit:
                    return out
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "strata"))
    parser.add_argument("--limit", type=int, default=10 ** 9, help="at most this many glosses")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    if not os.path.isdir(WORDNET):
        sys.exit(f"no {WORDNET}: run tools/bootstrap (Debian package wordnet-base)")
    items = glosses(args.limit)
    workdir = tempfile.mkdtemp(prefix="strata-natural-")
    try:
        db = os.path.join(workdir, "natural.db")
        session = Session(args.binary, db)
        session.initialize()
        start = time.perf_counter()
        for lo in range(0, len(items), 1000):
            batch = [{"category": "gloss", "key": key, "body": {"text": text}}
                     for key, text in items[lo:lo + 1000]]
            session.raw_call(session.call_line("remember_batch", {"items": batch}))
        log(f"{len(items):,} glosses written in {time.perf_counter() - start:.1f} s")
        waited = wait_embedded(session)
        log(f"embedded and indexed {waited[0]:.1f} s later" if waited else "no embedder")
        memories = session.call("stats", {})["total_memories"]
        session.close()
        recall = index_recall(args.binary, db, args.queries)
        print(json.dumps({"glosses": len(items), "memories": memories, **recall}))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
