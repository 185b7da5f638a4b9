#!/usr/bin/env python3
"""Identifier & phrase recall: does recall find the note that holds what the agent typed?

  python3 benchmark/recall_quality/identifiers/run.py [--strata build/src/strata]
      [--embedder SPEC] [--modes fts5 dense hybrid auto] [--queries queries.json]
      [--json out.json] [--misses]

Builds the changelog corpus (make_corpus.py; about 10,000 entries, one per changelog stanza),
starts one fresh strata on a temporary database (with --embedder SPEC when given, else the
server's default), writes every entry as its own memory with remember_batch and dedup off,
calls embed until no memory is left without a vector, then recalls every query of
queries.json in every mode with limit 10 (mode "auto" is sent without a mode argument, as an
agent would). Per mode, over all queries and per kind (and form): found@10, the fraction of
queries with a relevant entry in the top 10, and MRR (1 / rank of the first relevant entry,
0 beyond 10). It also recalls ten queries about topics no changelog speaks of and reports how
many items each mode returns for them on average: an unrelated query should return nothing.

The labels were made on one machine's corpus (its entry count and digest are in
queries.json). When this machine's corpus differs, the runner says so, runs only the queries
whose labeled entries are all here, scores each against the entries that contain it here
(make_queries.matcher), and reports how many it skipped. Python standard library only; the
loading and embedding steps are those of benchmark/recall_quality/run.py.
"""
import datetime
import importlib.util
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import make_corpus  # noqa: E402
import make_queries  # noqa: E402


def _load_recall_quality():
    """benchmark/recall_quality/run.py as a module (its name clashes with this file's)."""
    path = os.path.join(HERE, "..", "run.py")
    spec = importlib.util.spec_from_file_location("recall_quality_run", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rq = _load_recall_quality()
log = rq.log

LIMIT = 10
MODES = ("fts5", "dense", "hybrid", "auto")
# Topics absent from changelogs: a good answer to each is no item at all.
UNRELATED = [
    "quantum chromodynamics lattice",
    "medieval tapestry weaving",
    "sourdough bread starter hydration",
    "migratory patterns of arctic terns",
    "baroque harpsichord tuning temperament",
    "volcanic eruption ash cloud forecast",
    "renaissance fresco pigments",
    "marathon training heart rate zones",
    "coral reef bleaching ocean warming",
    "chess opening sicilian defense",
]


# ---- the labels on this machine ------------------------------------------------------------

def local_labels(labeled, corpus, facts):
    """The queries to run here, each with its relevant keys in this machine's corpus."""
    same = facts["digest"] == labeled["corpus"]["digest"]
    if same:
        return [dict(q, relevant=list(q["relevant"])) for q in labeled["queries"]], \
            {"same_corpus": True, "skipped": 0, "relabeled": 0}
    keys = {e["key"] for e in corpus}
    index = make_queries.Index(corpus)
    run, skipped, relabeled = [], 0, 0
    for q in labeled["queries"]:
        if not all(k in keys for k in q["relevant"]):
            skipped += 1
            continue
        here = index.relevant(q)
        if here != sorted(q["relevant"]):
            relabeled += 1
        run.append(dict(q, relevant=here))
    return run, {"same_corpus": False, "skipped": skipped, "relabeled": relabeled}


def group_of(query):
    return query["kind"] + (f"/{query['form']}" if query.get("form") else "")


def wait_for_vectors(session, tools, timeout=600):
    """After embed: polls stats until the background embedder has no memory pending (it may
    still hold a batch it took before embed answered). The last stats' embeddings, or None."""
    if "stats" not in tools:
        return None
    deadline = time.monotonic() + timeout
    while True:
        embeddings = session.call("stats", {}).get("embeddings") or {}
        if not embeddings.get("pending") or time.monotonic() > deadline:
            return {k: embeddings.get(k) for k in ("embedder", "vectors", "indexed", "pending",
                                                   "index_state", "last_error")}
        time.sleep(0.5)


# ---- measuring -----------------------------------------------------------------------------

def recall(session, query, mode):
    arguments = {"query": query, "limit": LIMIT}
    if mode != "auto":
        arguments["mode"] = mode
    return session.call("recall", arguments)


def measure(session, mode, queries):
    """Per query: rank of the first relevant item (None beyond 10) and the top keys."""
    per_query, served, errors = [], set(), []
    start = time.perf_counter()
    for q in queries:
        relevant = {(make_corpus.CATEGORY, k) for k in q["relevant"]}
        try:
            result = recall(session, q["query"], mode)
        except RuntimeError as error:
            if not per_query and not errors:
                return None, rq.tool_error_text(error)
            errors.append(q["id"])
            per_query.append({"id": q["id"], "rank": None, "error": rq.tool_error_text(error)})
            continue
        served.add(result.get("mode"))
        items = result.get("items", [])
        per_query.append({"id": q["id"], "rank": rq.first_relevant_rank(items, relevant),
                          "returned": len(items),
                          "top": [it.get("key") for it in items[:3]]})
    seconds = time.perf_counter() - start
    return {"queries": per_query, "served_as": sorted(m for m in served if m),
            "errors": errors, "mean_ms": round(1000 * seconds / max(1, len(queries)), 2)}, None


def scores(ranks):
    n = len(ranks)
    if not n:
        return {"n": 0}
    return {"n": n,
            "found@10": round(sum(1 for r in ranks if r is not None) / n, 4),
            "mrr": round(sum(1.0 / r for r in ranks if r is not None) / n, 4)}


def summarize(measured, queries):
    group = {q["id"]: group_of(q) for q in queries}
    kind = {q["id"]: q["kind"] for q in queries}
    ranks = {p["id"]: p["rank"] for p in measured["queries"]}
    out = {"all": scores(list(ranks.values())), "kinds": {}, "groups": {}}
    for name in dict.fromkeys(kind[q["id"]] for q in queries):
        out["kinds"][name] = scores([r for i, r in ranks.items() if kind[i] == name])
    for name in dict.fromkeys(group[q["id"]] for q in queries):
        out["groups"][name] = scores([r for i, r in ranks.items() if group[i] == name])
    return out


def measure_unrelated(session, mode):
    counts = []
    for query in UNRELATED:
        try:
            counts.append(len(recall(session, query, mode).get("items", [])))
        except RuntimeError as error:
            return {"error": rq.tool_error_text(error)}
    return {"mean_items": round(sum(counts) / len(counts), 2),
            "queries_with_items": sum(1 for c in counts if c), "items": counts}


# ---- reporting -----------------------------------------------------------------------------

def print_table(report, queries):
    modes = [m for m in report["modes"] if report["modes"][m].get("available")]
    for m, r in report["modes"].items():
        if not r.get("available"):
            print(f"mode {m}: unavailable: {r['message']}")
    if not modes:
        return
    rows = []  # each kind, then its forms when it has two or more
    for q in queries:
        if q["kind"] not in rows:
            rows.append(q["kind"])
            forms = list(dict.fromkeys(group_of(p) for p in queries if p["kind"] == q["kind"]))
            rows += forms if len(forms) > 1 else []
    rows.append("all")
    head = f"{'kind':<18}{'n':>4}" + "".join(f"  {m + ' F@10':>11} {'MRR':>5}" for m in modes)
    print(head)
    print("-" * len(head))
    for name in rows:
        cells, n = [], 0
        for m in modes:
            s = report["modes"][m]["summary"]
            s = s["all"] if name == "all" else s["kinds"].get(name) or s["groups"][name]
            n = s["n"]
            cells.append(f"  {s['found@10']:>11.3f} {s['mrr']:>5.3f}")
        label = "  " + name if "/" in name else name
        print(f"{label:<18}{n:>4}" + "".join(cells))
    print()
    print(f"{'unrelated queries':<22}" + "".join(f"  {m:>17}" for m in modes))
    u = [report["modes"][m]["unrelated"] for m in modes]
    print(f"{'  mean items returned':<22}" +
          "".join(f"  {x.get('mean_items', float('nan')):>17.2f}" for x in u))
    print(f"{'  queries with any':<22}" +
          "".join(f"  {str(x.get('queries_with_items', '-')) + '/' + str(len(UNRELATED)):>17}"
                  for x in u))
    served = {m: report["modes"][m]["served_as"] for m in modes}
    print("\nserved as: " + ", ".join(f"{m} -> {'/'.join(s) or '?'}" for m, s in served.items()))


def print_misses(report, queries):
    by_id = {q["id"]: q for q in queries}
    for mode, r in report["modes"].items():
        if not r.get("available"):
            continue
        misses = [p for p in r["queries"] if p["rank"] is None]
        print(f"\n{mode}: {len(misses)} queries without a relevant entry in the top {LIMIT}")
        for p in misses:
            q = by_id[p["id"]]
            print(f"  {p['id']:<12} {group_of(q):<17} {q['query']!r}  "
                  f"(returned {p.get('returned', 0)}{'; ' + p['error'] if 'error' in p else ''})")


def add_arguments(parser):
    parser.add_argument("--embedder", metavar="SPEC", help="passed as --embedder SPEC")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--queries", default=make_queries.QUERIES)
    parser.add_argument("--json", metavar="FILE", help="write the full report here")
    parser.add_argument("--misses", action="store_true",
                        help="list, per mode, the queries not found in the top 10")


def main():
    args, binary = rq.parse_runner_args(__doc__.split("\n")[0], add_arguments)
    if binary is None:
        return 2
    with open(args.queries, encoding="utf-8") as f:
        labeled = json.load(f)
    corpus, facts = make_corpus.build_corpus(progress=True)
    queries, corpus_note = local_labels(labeled, corpus, facts)
    if corpus_note["same_corpus"]:
        log(f"corpus matches the labels ({facts['entries']} entries, digest "
            f"{facts['digest'][:16]})")
    else:
        log(f"THIS MACHINE'S CORPUS DIFFERS from the one labeled ({facts['entries']} entries, "
            f"digest {facts['digest'][:16]}; labels: {labeled['corpus']['entries']} entries, "
            f"{labeled['corpus']['digest'][:16]}): running {len(queries)} of "
            f"{len(labeled['queries'])} queries ({corpus_note['skipped']} skipped, their "
            f"entries are missing; {corpus_note['relabeled']} relabeled from this corpus)")
    version = rq.command_output([binary, "--version"])
    report = {"embedder": args.embedder or "default", "modes": {}}

    with tempfile.TemporaryDirectory(prefix="strata-identifiers-") as tmp:
        extra = ["--embedder", args.embedder] if args.embedder else []
        session = rq.LoggedSession(binary, os.path.join(tmp, "ids.db"), extra,
                                   stderr_path=os.path.join(tmp, "stderr.log"))
        try:
            try:
                session.initialize()
                tools = {t["name"]: t for t in session.request("tools/list").get("tools", [])}
            except (RuntimeError, OSError, ValueError) as error:
                print(f"strata did not start: {session.stderr_head() or error}", file=sys.stderr)
                return 1
            memories = [{"category": make_corpus.CATEGORY, "key": e["key"],
                         "body": {"text": e["text"]}} for e in corpus]
            start = time.perf_counter()
            report["stored"] = rq.load_memories(session, tools, memories)
            report["load_seconds"] = round(time.perf_counter() - start, 2)
            log(f"stored {report['stored']} memories in {report['load_seconds']} s")
            report["embed"] = rq.run_embed(session, tools)
            if report["embed"]["available"]:
                log(f"embedded {report['embed']['embedded']} memories in "
                    f"{report['embed']['seconds']} s (remaining "
                    f"{report['embed'].get('remaining')})")
            else:
                log(f"no embeddings: {report['embed']['message']}")
            report["vectors"] = wait_for_vectors(session, tools)
            if report["vectors"]:
                log(f"vectors: {report['vectors'].get('vectors')}, pending "
                    f"{report['vectors'].get('pending')}")
            for mode in args.modes:
                measured, message = measure(session, mode, queries)
                if measured is None:
                    report["modes"][mode] = {"available": False, "message": message}
                    log(f"mode {mode}: unavailable: {message}")
                    continue
                measured["available"] = True
                measured["summary"] = summarize(measured, queries)
                measured["unrelated"] = measure_unrelated(session, mode)
                report["modes"][mode] = measured
                a = measured["summary"]["all"]
                log(f"mode {mode}: found@10 {a['found@10']:.3f}, MRR {a['mrr']:.3f}, "
                    f"{measured['mean_ms']} ms a query")
        finally:
            session.close()

    print()
    print(f"{version or binary}, embedder {report['embedder']}: {len(queries)} queries over "
          f"{facts['entries']} changelog entries")
    print_table(report, queries)
    if args.misses:
        print_misses(report, queries)
    if args.json:
        out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "binary": binary, "version": version,
               "git_commit": rq.command_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT),
               "corpus": facts, "labels": labeled["corpus"], "corpus_check": corpus_note,
               "limit": LIMIT, "unrelated_queries": UNRELATED, "report": report}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
