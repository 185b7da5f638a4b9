#!/usr/bin/env python3
"""The near-duplicate benchmark: what the write path's dedup does with labeled
pairs, and what it costs on Perseus Vault's small-vocabulary corpus.

  python3 benchmark/dedup/run.py [--binary build/src/strata] [--sizes 10000 [100000]]
                                 [--load batch|single] [--out dedup.json]

Part 1, the labeled pairs (benchmark/dedup/pairs.json, made by make_pairs.py): one strata
process (embedder none), each pair in a category of its own so pairs do not interact; the
canonical `remember` writes a, then b under its own key, and b's answer is read: `action`,
`merged_into`, `similarity` and `similar: [{category, key, similarity}]` (older binaries do not
answer `similar`). Reported:
- facts lost: keep_similar or distinct pairs whose b was merged (must be 0);
- merge precision and recall on the `merge` label (merged = b's action is "deduped");
- similar-detection recall: the share of keep_similar pairs whose b was merged or names a in
  `similar`;
- per label and per kind counts.

Part 2, candidates verified per write on the `perseus` corpus (benchmark/scale/corpus.py) at
each of --sizes: a fresh store (embedder none) loaded by remember_batch of 1,000 (the default,
for speed; each item goes through the same dedup check as a single call) or by single remember
calls (--load single); then the canonical `stats` dedup section: candidates per write (median,
p99, max, the histogram) and the memories merged away (N minus active memories; every memory
of that corpus is distinct, so it must be 0).

Python standard library only; progress goes to stderr, a readable table to stdout and the
JSON report (with machine, commit and date, as the scale report) to --out.
"""
import argparse
import datetime
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "..", "scale")
sys.path.insert(0, SCALE)
import corpus  # noqa: E402
from mcp_session import Session  # noqa: E402

# The scale harness (benchmark/scale/run.py) by its path: this file is also named run.py.
_spec = importlib.util.spec_from_file_location("scale_run", os.path.join(SCALE, "run.py"))
scale_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scale_run)
ROOT, commit, dedup_stats, log, machine = (scale_run.ROOT, scale_run.commit, scale_run.dedup_stats,
                                           scale_run.log, scale_run.machine)

LABELS = ("merge", "keep_similar", "distinct")


def share(part, whole):
    return round(part / whole, 4) if whole else None


def run_pairs(binary, workdir, pairs):
    db = os.path.join(workdir, "pairs.db")
    session = Session(binary, db, ["--embedder", "none"])
    session.initialize()
    results = []
    for pair in pairs:
        category = f"{pair['category']}-p{pair['id']:04d}"
        first = session.call("remember", {"category": category, "key": pair["a"]["key"], "body": pair["a"]["body"]})
        answer = session.call("remember", {"category": category, "key": pair["b"]["key"], "body": pair["b"]["body"]})
        similar = answer.get("similar")
        names_a = similar is not None and any(s.get("category") == category and s.get("key") == pair["a"]["key"]
                                              for s in similar)
        merged = answer.get("action") == "deduped"
        into = answer.get("merged_into") or {}
        results.append({
            "id": pair["id"], "label": pair["label"], "kind": pair["kind"], "base": pair["base"],
            "a_action": first.get("action"), "action": answer.get("action"), "merged": merged,
            "merged_into_a": merged and into.get("key") == pair["a"]["key"],
            "similarity": answer.get("similarity"),
            "similar": similar, "similar_names_a": names_a,
            "similar_similarity": next((s.get("similarity") for s in similar or []
                                        if s.get("key") == pair["a"]["key"]), None),
        })
    session.close()
    return results


def summarize_pairs(results):
    has_similar = any(r["similar"] is not None for r in results)
    by_label = {}
    for label in LABELS:
        rows = [r for r in results if r["label"] == label]
        by_label[label] = {"pairs": len(rows), "merged": sum(r["merged"] for r in rows),
                           "written": sum(not r["merged"] for r in rows),
                           "similar_names_a": sum(r["similar_names_a"] for r in rows)}
    by_kind = {}
    for r in results:
        k = by_kind.setdefault(r["kind"], {"label": r["label"], "pairs": 0, "merged": 0, "similar_names_a": 0,
                                           "similarities": []})
        k["pairs"] += 1
        k["merged"] += r["merged"]
        k["similar_names_a"] += r["similar_names_a"]
        s = r["similarity"] if r["similarity"] is not None else r["similar_similarity"]
        if s is not None:
            k["similarities"].append(s)
    for k in by_kind.values():
        sims = sorted(k.pop("similarities"))
        k["similarity_median"] = round(sims[len(sims) // 2], 3) if sims else None
    merged = [r for r in results if r["merged"]]
    true_merges = sum(r["label"] == "merge" for r in merged)
    lost = [r for r in merged if r["label"] != "merge"]
    keep = [r for r in results if r["label"] == "keep_similar"]
    return {
        "pairs": len(results),
        "answers_similar": has_similar,
        "facts_lost": len(lost),
        "facts_lost_by_kind": {k: sum(r["kind"] == k for r in lost) for k in sorted({r["kind"] for r in lost})},
        "merge_precision": share(true_merges, len(merged)),
        "merge_recall": share(true_merges, by_label["merge"]["pairs"]),
        "similar_detection_recall": share(sum(r["merged"] or r["similar_names_a"] for r in keep), len(keep)),
        "by_label": by_label,
        "by_kind": by_kind,
        "unexpected_a_actions": sum(r["a_action"] != "created" for r in results),
    }


def candidates(binary, workdir, n, mode):
    db = os.path.join(workdir, f"perseus-{n}.db")
    session = Session(binary, db, ["--embedder", "none"])
    session.initialize()
    start = time.perf_counter()
    if mode == "batch":
        for lo in range(0, n, 1000):
            items = [corpus.perseus_memory(i) for i in range(lo, min(n, lo + 1000))]
            result = session.raw_call(session.call_line("remember_batch", {"items": items}))["structuredContent"]
            if result["failed"]:
                raise RuntimeError(f"remember_batch: {result['failed']} items failed")
            if (lo + 1000) % max(1000, n // 10) == 0:
                log(f"  {lo + 1000:,} written, {(lo + 1000) / (time.perf_counter() - start):,.0f}/s")
    else:
        for i in range(n):
            session.raw_call(session.call_line("remember", corpus.perseus_memory(i)))
            if (i + 1) % max(1, n // 10) == 0:
                log(f"  {i + 1:,} written, {(i + 1) / (time.perf_counter() - start):,.0f}/s")
    seconds = time.perf_counter() - start
    stats = session.call("stats", {})
    session.close()
    for suffix in ("", "-wal", "-shm", ".hnsw", ".hnsw.meta"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    out = {"memories": n, "load": mode, "load_seconds": round(seconds, 1),
           "write_rate_per_s": round(n / seconds, 1), "active_memories": stats.get("active_memories")}
    out.update(dedup_stats(stats, n) or {})
    return out


def print_tables(report):
    p = report["pairs"]
    fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
    print(f"strata near-duplicate benchmark: {report['binary']}, commit {report['commit']}, {report['date']}")
    print(f"machine: {report['machine'].get('cpu', '?')}, {report['machine'].get('cores')} cores\n")
    print(f"labeled pairs: {p['pairs']} ({'answers name similar memories' if p['answers_similar'] else 'no similar in answers'})")
    print(f"  facts lost (keep_similar or distinct merged): {p['facts_lost']}"
          + (f"  {p['facts_lost_by_kind']}" if p["facts_lost"] else ""))
    print(f"  merge precision {fmt(p['merge_precision'])}, merge recall {fmt(p['merge_recall'])}, "
          f"similar-detection recall {fmt(p['similar_detection_recall'])}\n")
    print(f"  {'label':14} {'kind':24} {'pairs':>5} {'merged':>6} {'similar':>7} {'sim p50':>7}")
    for label in LABELS:
        for kind, k in sorted(report["pairs"]["by_kind"].items()):
            if k["label"] == label:
                print(f"  {label:14} {kind:24} {k['pairs']:5} {k['merged']:6} {k['similar_names_a']:7} "
                      f"{fmt(k['similarity_median']):>7}")
        b = p["by_label"][label]
        print(f"  {label:14} {'(all)':24} {b['pairs']:5} {b['merged']:6} {b['similar_names_a']:7}")
    if report["candidates"]:
        print("\ncandidates verified per write, perseus corpus:")
        print(f"  {'memories':>9} {'load':>6} {'writes/s':>9} {'median':>6} {'p99':>5} {'max':>5} {'mean':>7} {'merged away':>11}")
        for c in report["candidates"]:
            print(f"  {c['memories']:9,} {c['load']:>6} {c['write_rate_per_s']:9,.0f} {fmt(c.get('candidates_median')):>6} "
                  f"{fmt(c.get('candidates_p99')):>5} {fmt(c.get('candidates_max')):>5} {fmt(c.get('candidates_mean')):>7} "
                  f"{fmt(c.get('merged_away')):>11}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "strata"))
    parser.add_argument("--pairs", default=os.path.join(HERE, "pairs.json"))
    parser.add_argument("--sizes", type=int, nargs="*", default=[10000],
                        help="perseus corpus sizes for the candidates figure (none: skip it)")
    parser.add_argument("--load", choices=("batch", "single"), default="batch")
    parser.add_argument("--out", help="write the JSON report here")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no strata binary at {args.binary}")
    with open(args.pairs) as f:
        pairs = json.load(f)
    workdir = tempfile.mkdtemp(prefix="strata-dedup-")
    report = {
        "machine": machine(),
        "binary": subprocess.run([args.binary, "--version"], capture_output=True, text=True).stdout.strip(),
        "binary_path": os.path.abspath(args.binary),
        "binary_mtime": datetime.datetime.fromtimestamp(os.path.getmtime(args.binary), datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    try:
        log(f"{len(pairs)} labeled pairs")
        results = run_pairs(args.binary, workdir, pairs)
        report["pairs"] = summarize_pairs(results)
        report["pair_results"] = results
        report["candidates"] = []
        for n in args.sizes:
            log(f"perseus corpus, {n:,} memories by {args.load}")
            report["candidates"].append(candidates(args.binary, workdir, n, args.load))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_tables(report)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
            f.write("\n")
        log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
