#!/usr/bin/env python3
"""Recall quality: how often recall finds the memory a query is about.

  python3 benchmark/recall_quality/run.py --strata build/src/strata \
      [--embedder SPEC ...] [--modes fts5 dense hybrid] [--json out.json] [--dataset path] \
      [--seeds N] [--misses] [--check]

For each embedder spec (default: the server's default, i.e. no --embedder flag; the spec
"default" means the same), a fresh strata process on a fresh temporary database: every memory
of the dataset is written with remember_batch (dedup off), the embed tool is called until
nothing remains to embed (skipped, with a message, when the binary has no embed tool), then
every query is recalled in every mode with limit 10. Per embedder and mode: recall@1/5/10 (the
fraction of queries with a relevant memory in the top k) and MRR (1/rank of the first relevant
memory, 0 beyond the top 10), over all queries and split by the query's overlap label (low:
at most one content word in common with the memory; high: the key words in common). A mode the
server refuses is reported as unavailable. Python standard library only.

--seeds N (builtin embedders only) runs each spec N times, with the embedder option seed=0..N-1
(other hash functions), and reports the mean of each metric: a difference between two variants
smaller than the spread across seeds is hashing luck, not a better embedder.

--check exits 1 unless, for the first embedder, hybrid recall@5 >= 0.85, hybrid MRR >= 0.70,
and hybrid is at least as good as fts5 and as dense on both.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ left in benchmark/scale
sys.path.insert(0, os.path.join(ROOT, "benchmark", "scale"))
from mcp_session import Session  # noqa: E402

LIMIT = 10
KS = (1, 5, 10)
TARGET_RECALL_AT_5 = 0.85
TARGET_MRR = 0.70


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class LoggedSession(Session):
    """Session, but the server's stderr goes to a file so a failed start can be explained."""

    def __init__(self, binary, db, extra_args=(), stderr_path=None):
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [binary, "--db", db, *extra_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            bufsize=1 << 20)
        self.next_id = 0

    def stderr_head(self, lines=2):
        """The first non-empty lines the server wrote to stderr (where it explains an exit)."""
        if not self.stderr_path:
            return ""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        try:
            with open(self.stderr_path, "rb") as f:
                text = f.read(64 * 1024).decode(errors="replace")
        except OSError:
            return ""
        return " / ".join([l.strip() for l in text.splitlines() if l.strip()][:lines])

    def close(self):
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                return super().close()
            self.proc.wait(timeout=60)
            return self.proc.returncode
        except (BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()
            return self.proc.returncode
        finally:
            if self._stderr is not subprocess.DEVNULL:
                self._stderr.close()


def tool_error_text(error):
    return str(error).replace("\n", " ")[:300]


# ---- loading -------------------------------------------------------------------------------

def batch_schema(tools):
    """(name of the array argument, item properties, maxItems) of remember_batch."""
    schema = tools["remember_batch"].get("inputSchema", {})
    properties = schema.get("properties", {})
    for name in ("memories", "items"):
        if properties.get(name, {}).get("type") == "array":
            array = properties[name]
            return name, array.get("items", {}).get("properties", {}), array.get("maxItems")
    for name, prop in properties.items():
        if prop.get("type") == "array" and "category" in prop.get("items", {}).get("properties", {}):
            return name, prop["items"]["properties"], prop.get("maxItems")
    raise RuntimeError(f"remember_batch has no array-of-memories argument: {schema}")


def load_memories(session, tools, memories):
    array_name, item_properties, max_items = batch_schema(tools)
    if "dedup" not in item_properties:
        log("warning: remember_batch items take no \"dedup\"; near-duplicates may be merged")
    use_body_json = "body_json" in item_properties
    chunk = min(max_items or 100, 100)
    stored = 0
    for start in range(0, len(memories), chunk):
        items = []
        for m in memories[start:start + chunk]:
            item = {"category": m["category"], "key": m["key"]}
            if use_body_json:
                item["body_json"] = json.dumps(m["body"], ensure_ascii=False)
            else:
                item["body"] = m["body"]
            if "dedup" in item_properties:
                item["dedup"] = False
            items.append(item)
        result = session.call("remember_batch", {array_name: items})
        if result.get("failed") or result.get("ok") is False:
            bad = [r for r in result.get("results", []) if not r.get("ok", True)]
            raise RuntimeError(f"remember_batch failed for {len(bad)} memories: {bad[:3]}")
        merged = [r for r in result.get("results", [])
                  if r.get("deduped") or r.get("action") not in (None, "created")]
        if merged:
            raise RuntimeError(f"remember_batch did not store every memory as new: {merged[:3]}")
        stored += len(items)
    return stored


def run_embed(session, tools):
    """Calls embed until nothing remains. Returns a dict describing what happened."""
    if "embed" not in tools:
        return {"available": False, "message": "this binary has no embed tool"}
    properties = tools["embed"].get("inputSchema", {}).get("properties", {})
    arguments = {"batch_limit": 1000} if "batch_limit" in properties or not properties else {}
    total, calls, start = 0, 0, time.perf_counter()
    last = {}
    while calls < 10000:
        calls += 1
        try:
            last = session.call("embed", arguments)
        except RuntimeError as error:
            return {"available": False, "message": f"embed failed: {tool_error_text(error)}",
                    "embedded": total, "calls": calls}
        embedded = int(last.get("embedded", 0) or 0)
        total += embedded
        remaining = last.get("remaining")
        if remaining == 0 or embedded == 0:
            break
    return {"available": True, "embedded": total, "remaining": last.get("remaining"),
            "calls": calls, "seconds": round(time.perf_counter() - start, 3), "last": last}


# ---- measuring -----------------------------------------------------------------------------

def first_relevant_rank(items, relevant):
    for rank, item in enumerate(items, 1):
        if (item.get("category"), item.get("key")) in relevant:
            return rank
    return None


def metrics(ranks):
    n = len(ranks)
    if n == 0:
        return {"n": 0}
    out = {"n": n}
    for k in KS:
        out[f"recall@{k}"] = round(sum(1 for r in ranks if r is not None and r <= k) / n, 4)
    out["mrr"] = round(sum(1.0 / r for r in ranks if r is not None and r <= LIMIT) / n, 4)
    return out


def measure_mode(session, mode, queries):
    """Recalls every query in `mode`. None plus a message if the server refuses the mode."""
    per_query, errors, served_as, latencies = [], 0, set(), []
    for i, q in enumerate(queries):
        relevant = {(r["category"], r["key"]) for r in q["relevant"]}
        start = time.perf_counter()
        try:
            result = session.call("recall", {"query": q["query"], "mode": mode, "limit": LIMIT})
        except RuntimeError as error:
            if i == 0:
                return None, tool_error_text(error)
            errors += 1
            per_query.append({"query": q["query"], "overlap": q["overlap"], "rank": None,
                              "error": tool_error_text(error)})
            continue
        latencies.append(time.perf_counter() - start)
        if result.get("mode"):
            served_as.add(result["mode"])
        items = result.get("items", [])
        per_query.append({"query": q["query"], "overlap": q["overlap"],
                          "rank": first_relevant_rank(items, relevant),
                          "top": [f"{it.get('category')}/{it.get('key')}" for it in items[:3]]})
    summary = {"all": metrics([p["rank"] for p in per_query])}
    for label in ("low", "high"):
        summary[label] = metrics([p["rank"] for p in per_query if p["overlap"] == label])
    summary["errors"] = errors
    summary["served_as"] = sorted(served_as)
    if latencies:
        summary["mean_latency_ms"] = round(1000 * sum(latencies) / len(latencies), 3)
    summary["queries"] = per_query
    message = None
    if served_as and served_as != {mode}:
        message = f"asked for {mode}, the server answered in mode {', '.join(sorted(served_as))}"
    return summary, message


def run_embedder(binary, spec, dataset, modes):
    label = spec or "default"
    report = {"embedder": label, "modes": {}}
    with tempfile.TemporaryDirectory(prefix="strata-recall-quality-") as tmp:
        extra = ["--embedder", spec] if spec else []
        session = LoggedSession(binary, os.path.join(tmp, "q.db"), extra,
                                stderr_path=os.path.join(tmp, "stderr.log"))
        try:
            try:
                session.initialize()
                tools = {t["name"]: t for t in session.request("tools/list").get("tools", [])}
            except (RuntimeError, OSError, ValueError) as error:
                stderr = session.stderr_head()
                report["error"] = (f"strata did not start with {' '.join(extra) or 'no flags'} "
                                   f"(exit code {session.proc.poll()}): "
                                   f"{stderr or tool_error_text(error)}")
                log(report["error"])
                return report
            start = time.perf_counter()
            report["stored"] = load_memories(session, tools, dataset["memories"])
            report["load_seconds"] = round(time.perf_counter() - start, 3)
            log(f"[{label}] stored {report['stored']} memories in {report['load_seconds']} s")
            report["embed"] = run_embed(session, tools)
            if report["embed"]["available"]:
                log(f"[{label}] embedded {report['embed']['embedded']} memories in "
                    f"{report['embed']['calls']} calls, {report['embed']['seconds']} s "
                    f"(remaining: {report['embed'].get('remaining')})")
            else:
                log(f"[{label}] no embeddings: {report['embed']['message']}; "
                    f"dense and hybrid are expected to be unavailable")
            for mode in modes:
                summary, message = measure_mode(session, mode, dataset["queries"])
                if summary is None:
                    report["modes"][mode] = {"available": False, "message": message}
                    log(f"[{label}] mode {mode}: unavailable: {message}")
                    continue
                summary["available"] = True
                if message:
                    summary["message"] = message
                    log(f"[{label}] mode {mode}: {message}")
                report["modes"][mode] = summary
        finally:
            session.close()
    return report


# ---- reporting -----------------------------------------------------------------------------

def with_seed(spec, seed):
    """`spec` with the builtin embedder option seed=`seed` (seed 0 is the spec as given)."""
    if seed == 0:
        return spec
    if spec is None:
        return f"builtin:seed={seed}"
    return f"{spec}{',' if ':' in spec else ':'}seed={seed}"


def mean_report(reports):
    """One report whose metrics are the means of `reports` (one spec, several seeds)."""
    first = reports[0]
    if any("error" in r for r in reports):
        return next(r for r in reports if "error" in r)
    out = {"embedder": f"{first['embedder']} x{len(reports)} seeds", "modes": {},
           "seeds": [{mode: {k: v for k, v in summary.items() if k != "queries"}
                      for mode, summary in r["modes"].items()} for r in reports]}
    for mode, summary in first["modes"].items():
        if not summary.get("available") or not all(
                r["modes"].get(mode, {}).get("available") for r in reports):
            out["modes"][mode] = summary
            continue
        # The misses listed are the first seed's.
        averaged = {"available": True, "errors": sum(r["modes"][mode]["errors"] for r in reports),
                    "queries": summary["queries"]}
        for subset in ("all", "low", "high"):
            ms = [r["modes"][mode][subset] for r in reports]
            if not ms[0].get("n"):
                averaged[subset] = ms[0]
                continue
            averaged[subset] = {"n": ms[0]["n"]}
            for key in [f"recall@{k}" for k in KS] + ["mrr"]:
                averaged[subset][key] = round(sum(m[key] for m in ms) / len(ms), 4)
            r5 = [m["recall@5"] for m in ms]
            mean = sum(r5) / len(r5)
            averaged[subset]["recall@5_sd"] = round((sum((x - mean) ** 2 for x in r5) / len(r5))
                                                    ** 0.5, 4)
        out["modes"][mode] = averaged
    return out


NAME_WIDTH = 32


def print_table(reports):
    w = NAME_WIDTH
    header = f"{'embedder':<{w}} {'mode':<8} {'queries':<8} {'n':>4} " + \
        " ".join(f"{'R@' + str(k):>6}" for k in KS) + f" {'MRR':>6}"
    print(header)
    print("-" * len(header))
    for report in reports:
        name = report["embedder"]
        if len(name) > w:
            name = name[:w - 1] + "~"
        if "error" in report:
            print(f"{name:<{w}} unavailable: {report['error']}")
            continue
        for mode, summary in report["modes"].items():
            if not summary.get("available"):
                print(f"{name:<{w}} {mode:<8} unavailable: {summary['message']}")
                continue
            for subset in ("all", "low", "high"):
                m = summary[subset]
                if not m.get("n"):
                    continue
                cells = " ".join(f"{m[f'recall@{k}']:>6.3f}" for k in KS)
                sd = f"  (R@5 sd {m['recall@5_sd']:.3f})" if "recall@5_sd" in m else ""
                print(f"{name:<{w}} {mode:<8} {subset:<8} {m['n']:>4} {cells} {m['mrr']:>6.3f}"
                      f"{sd}")
            notes = []
            if summary.get("errors"):
                notes.append(f"{summary['errors']} queries failed")
            if summary.get("message"):
                notes.append(summary["message"])
            if notes:
                print(f"{'':<{w}} {'':<8} note: {'; '.join(notes)}")


def print_misses(reports, k=5):
    for report in reports:
        for mode, summary in report.get("modes", {}).items():
            if not summary.get("available"):
                continue
            misses = [q for q in summary["queries"] if q["rank"] is None or q["rank"] > k]
            which = " (seed 0)" if "seeds" in report else ""
            print(f"\n{report['embedder']}{which} / {mode}: {len(misses)} queries without a "
                  f"relevant memory in the top {k}")
            for q in misses:
                rank = q["rank"] if q["rank"] is not None else "-"
                print(f"  [{q['overlap']:4}] rank {rank:>2}  {q['query']}  "
                      f"(top: {', '.join(q.get('top', [])) or q.get('error', 'nothing')})")


def check_targets(report):
    """The project's targets for the first embedder; a list of what failed."""
    failures = []
    if "error" in report:
        return [f"{report['embedder']}: {report['error']}"]
    modes = report["modes"]
    hybrid = modes.get("hybrid")
    if not hybrid or not hybrid.get("available"):
        why = hybrid["message"] if hybrid else "not measured (add it to --modes)"
        return [f"hybrid is unavailable: {why}"]
    h = hybrid["all"]
    if h["recall@5"] < TARGET_RECALL_AT_5:
        failures.append(f"hybrid recall@5 {h['recall@5']:.3f} < {TARGET_RECALL_AT_5}")
    if h["mrr"] < TARGET_MRR:
        failures.append(f"hybrid MRR {h['mrr']:.3f} < {TARGET_MRR}")
    for other in ("fts5", "dense"):
        o = modes.get(other)
        if not o or not o.get("available"):
            failures.append(f"hybrid cannot be compared with {other}: "
                            f"{o['message'] if o else 'not measured (add it to --modes)'}")
            continue
        for metric in ("recall@5", "mrr"):
            if h[metric] < o["all"][metric]:
                failures.append(f"hybrid {metric} {h[metric]:.3f} < {other} "
                                f"{o['all'][metric]:.3f}")
    return failures


def command_output(args, cwd=None):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30, cwd=cwd,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def parse_runner_args(description, add_arguments):
    """A runner's command line: --strata BINARY, then the flags add_arguments(parser) adds.
    Returns (args, the binary's absolute path); the path is None, said on stderr, when it is
    not an executable."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--strata", default=os.path.join(ROOT, "build", "src", "strata"),
                        help="the strata binary (default: build/src/strata)")
    add_arguments(parser)
    args = parser.parse_args()
    binary = os.path.abspath(args.strata)
    if not os.access(binary, os.X_OK):
        print(f"not an executable: {binary}", file=sys.stderr)
        return args, None
    return args, binary


def add_arguments(parser):
    parser.add_argument("--embedder", nargs="+", default=None, metavar="SPEC",
                        help="embedder specs to compare, each passed as --embedder SPEC; "
                             "\"default\" passes no flag (the default when omitted)")
    parser.add_argument("--modes", nargs="+", default=["fts5", "dense", "hybrid"])
    parser.add_argument("--dataset", default=os.path.join(HERE, "dataset.json"))
    parser.add_argument("--json", metavar="PATH", help="write the full report here")
    parser.add_argument("--seeds", type=int, default=1, metavar="N",
                        help="run each (builtin) spec with seed=0..N-1 and report the means")
    parser.add_argument("--misses", action="store_true",
                        help="list the queries whose relevant memory is not in the top 5")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the first embedder's hybrid meets the targets")


def main():
    args, binary = parse_runner_args(
        "Recall quality of strata on a labeled dataset (recall@k, MRR).", add_arguments)
    if binary is None:
        return 2
    with open(args.dataset, encoding="utf-8") as f:
        dataset = json.load(f)
    specs = [None if s in ("", "default") else s for s in (args.embedder or ["default"])]
    version = command_output([binary, "--version"])
    low = sum(1 for q in dataset["queries"] if q["overlap"] == "low")
    log(f"{version or binary}: {len(dataset['memories'])} memories, "
        f"{len(dataset['queries'])} queries ({low} low overlap)")

    if args.seeds < 1:
        print("--seeds: must be at least 1", file=sys.stderr)
        return 2
    if args.seeds == 1:
        reports = [run_embedder(binary, spec, dataset, args.modes) for spec in specs]
    else:
        reports = [mean_report([run_embedder(binary, with_seed(spec, seed), dataset, args.modes)
                                for seed in range(args.seeds)])
                   for spec in specs]

    print()
    print_table(reports)
    if args.misses:
        print_misses(reports)

    failures = check_targets(reports[0]) if args.check else None
    if args.json:
        out = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "binary": binary,
            "version": version,
            "git_commit": command_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT),
            "dataset": {"path": os.path.relpath(os.path.abspath(args.dataset), ROOT),
                        "memories": len(dataset["memories"]),
                        "queries": len(dataset["queries"]),
                        "low_overlap_queries": low,
                        "high_overlap_queries": len(dataset["queries"]) - low},
            "limit": LIMIT,
            "targets": {"hybrid_recall@5": TARGET_RECALL_AT_5, "hybrid_mrr": TARGET_MRR},
            "results": reports,
        }
        if failures is not None:
            out["check"] = {"passed": not failures, "failures": failures}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")
        log(f"wrote {args.json}")

    if failures is not None:
        print()
        if failures:
            print(f"check FAILED for embedder {reports[0]['embedder']}:")
            for failure in failures:
                print(f"  - {failure}")
            return 1
        print(f"check passed for embedder {reports[0]['embedder']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
