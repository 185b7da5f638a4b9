#!/usr/bin/env python3
"""Recall response size: how many bytes a model reads per recall, by what the call asks for.

  python3 benchmark/response_size/run.py --strata build/src/strata [--queries N] [--json out]

A fresh strata process on a fresh temporary database stores a fixed corpus built from
benchmark/recall_quality/dataset.json: memory i's body is {"text": ...} holding its own text
followed by the next memories' texts until it is at least BODY_CHARS characters (about 700
bytes, the size of an agent's longer notes). It embeds everything (the embed tool), then runs
the dataset's first N queries (default 40) with limit 10 in the default mode under each
variant below, and reports the bytes of each response line (the whole JSON-RPC line, as the
client reads it, without its newline): mean, median, max, and the mean share of that line
taken by content[0].text (the result's JSON text, repeated beside structuredContent).

Variants: default; fields ["key", "body", "score"]; fields ["key", "score"]; max_chars 200;
max_chars 500; fields ["key", "body", "score"] with max_chars 200. Every variant must return
the same keys in the same order as the default: a smaller answer about other memories would
not be a win. Python standard library only.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ left in benchmark/scale
sys.path.insert(0, os.path.join(ROOT, "benchmark", "scale"))
from mcp_session import Session  # noqa: E402

DATASET = os.path.join(ROOT, "benchmark", "recall_quality", "dataset.json")
BODY_CHARS = 600
LIMIT = 10

VARIANTS = [
    ("default", {}),
    ("fields key,body,score", {"fields": ["key", "body", "score"]}),
    ("fields key,score", {"fields": ["key", "score"]}),
    ("max_chars 200", {"max_chars": 200}),
    ("max_chars 500", {"max_chars": 500}),
    ("fields key,body,score + max_chars 200",
     {"fields": ["key", "body", "score"], "max_chars": 200}),
]


def corpus(memories):
    """The fixed corpus: each memory's text, then the next ones', to BODY_CHARS or more."""
    texts = [m["body"]["text"] for m in memories]
    out = []
    for i, m in enumerate(memories):
        parts, length, j = [], 0, i
        while length < BODY_CHARS:
            parts.append(texts[j % len(texts)])
            length += len(parts[-1]) + 1
            j += 1
        out.append({"category": m["category"], "key": m["key"], "body": {"text": " ".join(parts)},
                    "dedup": False})
    return out


def load(session, memories):
    for start in range(0, len(memories), 100):
        result = session.call("remember_batch", {"items": memories[start:start + 100]})
        actions = {r.get("action") for r in result.get("results", [])}
        if actions != {"created"}:
            raise RuntimeError(f"remember_batch did not create every memory: {result}")


def embed_all(session):
    for _ in range(1000):
        result = session.call("embed", {"batch_limit": 1000})
        if result.get("remaining") == 0 or not result.get("embedded"):
            return


def recall_line(session, arguments):
    """The response line's bytes and its parsed result."""
    session.proc.stdin.write(session.call_line("recall", arguments))
    session.proc.stdin.flush()
    line = session.proc.stdout.readline().rstrip(b"\n")
    result = json.loads(line)["result"]
    if result.get("isError"):
        raise RuntimeError(f"recall {arguments}: {result['content'][0]['text']}")
    return line, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strata", default=os.path.join(ROOT, "build", "src", "strata"))
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    with open(DATASET, encoding="utf-8") as f:
        dataset = json.load(f)
    memories = corpus(dataset["memories"])
    queries = [q["query"] for q in dataset["queries"][:args.queries]]
    body_bytes = [len(json.dumps(m["body"]["text"], ensure_ascii=False).encode()) - 2
                  for m in memories]

    with tempfile.TemporaryDirectory(prefix="strata-response-size-") as tmp:
        session = Session(args.strata, os.path.join(tmp, "memory.db"))
        try:
            session.initialize()
            load(session, memories)
            embed_all(session)
            rows, expected_keys, modes = [], None, set()
            for label, extra in VARIANTS:
                sizes, text_shares, items, keys = [], [], [], []
                for query in queries:
                    line, result = recall_line(session, {"query": query, "limit": LIMIT, **extra})
                    structured = result["structuredContent"]
                    modes.add(structured["mode"])
                    sizes.append(len(line))
                    text = json.dumps(result["content"][0]["text"], ensure_ascii=False)
                    text_shares.append(len(text.encode()) / len(line))
                    items.append(len(structured["items"]))
                    keys.append([item["key"] for item in structured["items"]])
                if expected_keys is None:
                    expected_keys = keys
                elif keys != expected_keys:
                    raise RuntimeError(f"{label}: other memories than the default's")
                rows.append({"variant": label, "arguments": extra,
                             "mean_bytes": round(statistics.mean(sizes)),
                             "median_bytes": round(statistics.median(sizes)),
                             "max_bytes": max(sizes),
                             "text_share": round(statistics.mean(text_shares), 3),
                             "mean_items": round(statistics.mean(items), 2)})
        finally:
            session.close()

    default = rows[0]["mean_bytes"]
    print(f"corpus: {len(memories)} memories, body text {statistics.mean(body_bytes):.0f} bytes "
          f"on average; {len(queries)} queries, limit {LIMIT}, mode {', '.join(sorted(modes))}")
    print()
    print("| variant | mean bytes | median | max | vs default | content[0].text share |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['variant']} | {r['mean_bytes']} | {r['median_bytes']} | {r['max_bytes']} | "
              f"{r['mean_bytes'] / default:.2f} | {r['text_share']:.2f} |")
    if args.json:
        report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "memories": len(memories), "queries": len(queries), "limit": LIMIT,
                  "modes": sorted(modes), "rows": rows}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
