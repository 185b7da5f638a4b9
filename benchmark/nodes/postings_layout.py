#!/usr/bin/env python3
"""Layouts of the keyword postings on PostgreSQL, side by side on Perseus Vault's corpus
(PERF.md, "Many nodes", session 29): what writing a version's postings costs the server,
what they take on disk, and what reading them by term costs. strata kept "rows" until
migration 7, and keeps "document" since (text/pg_keyword_index.h).

  python3 benchmark/nodes/postings_layout.py [--versions 30000] [--profile perseus|pseudo]

  rows:     text_postings as strata kept it (migration 6): a row per term and field of a
            version, (term, field, version_id, positions INTEGER[]) under its primary key;
  document: a row per version, its terms (field digit + term) and positions as arrays, the
            terms under a GIN index (fastupdate on, PostgreSQL's default: new entries go to
            a pending list that reads scan and a vacuum, or an insert past 4 MB, merges);
  document-direct: the same with fastupdate off (entries go into the index at once).

A throwaway cluster (tools/pg-cluster) is loaded by psql, one autocommitted INSERT a version,
each layout in turn; the cluster's CPU time (its processes' and the backends' it reaped) and
the wall time are printed per version, then the sizes, then the time of a few reads (the
median of 9) after ANALYZE (as a store between autovacuums reads them) and after VACUUM.
Terms are approximated (lower-cased runs of letters and digits, no stemming): the layouts'
costs, not strata's exact postings, are compared.
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "benchmark", "scale"))
import corpus  # noqa: E402

# benchmark/nodes/run.py, by another name (it imports benchmark/scale/run.py as "run").
_spec = importlib.util.spec_from_file_location("nodes_run", os.path.join(HERE, "run.py"))
nodes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nodes)

PG_CLUSTER = os.path.join(ROOT, "tools", "pg-cluster")
PSQL = "/usr/lib/postgresql/15/bin/psql"

SCHEMA = {
    "rows": ['CREATE TABLE p (term TEXT COLLATE "C" NOT NULL, field SMALLINT NOT NULL, '
             "version_id BIGINT NOT NULL, positions INTEGER[] NOT NULL, "
             "PRIMARY KEY (term, field, version_id))"],
    "document": ['CREATE TABLE p (version_id BIGINT PRIMARY KEY, terms TEXT[] COLLATE "C" '
                 "NOT NULL, positions TEXT[] NOT NULL)",
                 "CREATE INDEX p_terms ON p USING gin (terms)"],
}
SCHEMA["document-direct"] = [SCHEMA["document"][0],
                             SCHEMA["document"][1] + " WITH (fastupdate = off)"]


def fields_of(i, profile):
    m = corpus.PROFILES[profile](i)
    body = m["body"]
    text = " ".join(str(v) for v in body.values()) if isinstance(body, dict) else str(body)
    return [text, m["key"], m["category"]]


def postings(values):
    """(field, term) -> positions."""
    out = {}
    for f, value in enumerate(values):
        for p, term in enumerate(re.findall(r"[a-z0-9]+", value.lower())):
            out.setdefault((f, term), []).append(p)
    return out


def array(items):
    return "'{" + ",".join('"%s"' % x for x in items) + "}'"


def insert(layout, version_id, found):
    """The INSERT of one version's postings in `layout`."""
    keys = list(found)
    positions = ["{%s}" % ",".join(map(str, found[k])) for k in keys]
    if layout == "rows":
        return ("INSERT INTO p (term, field, version_id, positions) SELECT t, f, %d, "
                "CAST(q AS integer[]) FROM unnest(CAST(%s AS text[]), CAST(%s AS smallint[]), "
                "CAST(%s AS text[])) AS u (t, f, q);\n"
                % (version_id, array(k[1] for k in keys), array(k[0] for k in keys),
                   array(positions)))
    return ("INSERT INTO p (version_id, terms, positions) VALUES (%d, CAST(%s AS text[]), "
            "CAST(%s AS text[]));\n"
            % (version_id, array("%d%s" % k for k in keys), array(positions)))


def reads(layout, rare, common):
    if layout == "rows":
        return {
            "rare term, its versions": "SELECT version_id FROM p WHERE term = '%s'" % rare,
            "common term, count": "SELECT count(*) FROM p WHERE term = '%s'" % common,
            "common term, newest 10": "SELECT version_id FROM p WHERE term = '%s' "
                                      "ORDER BY version_id DESC LIMIT 10" % common,
            "20 versions' postings": "SELECT * FROM p WHERE term = '%s' AND field = 0 AND "
                                     "version_id = ANY(ARRAY(SELECT generate_series(1000, "
                                     "20000, 1000)))" % common,
        }
    return {
        "rare term, its versions": "SELECT version_id FROM p WHERE terms @> ARRAY['0%s']"
                                   % rare,
        "common term, count": "SELECT count(*) FROM p WHERE terms @> ARRAY['0%s']" % common,
        "common term, newest 10": "SELECT version_id FROM p WHERE terms @> ARRAY['0%s'] "
                                  "ORDER BY version_id DESC LIMIT 10" % common,
        "20 versions' postings": "SELECT * FROM p WHERE version_id = ANY(ARRAY(SELECT "
                                 "generate_series(1000, 20000, 1000)))",
    }


def psql(uri, *args):
    return subprocess.run(["runuser", "-u", "postgres", "--", PSQL, uri, "-X", "-q", *args],
                          check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--versions", type=int, default=30000)
    ap.add_argument("--profile", default="perseus", choices=sorted(corpus.PROFILES))
    args = ap.parse_args()
    found = [postings(fields_of(i, args.profile)) for i in range(args.versions)]
    counts = {}
    for f in found:
        for k in f:
            counts[k] = counts.get(k, 0) + 1
    text_terms = [(n, k[1]) for k, n in counts.items() if k[0] == 0]
    rare, common = min(text_terms)[1], max(text_terms)[1]
    print(json.dumps({"versions": args.versions, "profile": args.profile,
                      "postings_per_version": round(sum(map(len, found)) / len(found), 1),
                      "rare": rare, "common": common}))
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        state = os.path.join(tmp, "cluster")
        uri = subprocess.run([PG_CLUSTER, "start", state], check=True, capture_output=True,
                             text=True).stdout.strip()
        try:
            for layout in SCHEMA:
                creates = sum((["-c", sql] for sql in SCHEMA[layout]), [])
                psql(uri, "-c", "DROP TABLE IF EXISTS p", *creates)
                script = os.path.join(tmp, layout + ".sql")
                with open(script, "w") as f:
                    for i, one in enumerate(found):
                        f.write(insert(layout, i + 1, one))
                os.chmod(script, 0o644)
                # The postmaster's CPU counts its ended children's: psql's backend.
                cpu, wall = nodes.cpu_seconds(nodes.postgres_pids(state)), time.perf_counter()
                psql(uri, "-f", script)
                wall = time.perf_counter() - wall
                cpu = nodes.cpu_seconds(nodes.postgres_pids(state)) - cpu
                sizes = psql(uri, "-A", "-t", "-c",
                             "SELECT string_agg(relname || ' ' || pg_relation_size(oid), ',') "
                             "FROM pg_class WHERE relname LIKE 'p\\_%' OR relname = 'p'")
                timings = {}
                for step, done in (("ANALYZE", "analyzed"), ("VACUUM", "vacuumed")):
                    psql(uri, "-c", step + " p")
                    for name, sql in reads(layout, rare, common).items():
                        out = psql(uri, "-c", "\\timing on", *(["-c", sql] * 9))
                        ms = [float(t) for t in re.findall(r"Time: ([0-9.]+) ms", out)]
                        timings.setdefault(name, {})[done] = round(
                            statistics.median(ms), 2)
                print(json.dumps({
                    "layout": layout,
                    "server_cpu_ms_per_version": round(1000 * cpu / args.versions, 3),
                    "wall_ms_per_version": round(1000 * wall / args.versions, 3),
                    "bytes": {name: int(n) for name, n in
                              (pair.split(" ") for pair in sizes.strip().split(","))},
                    "read_ms_median": timings}))  # after ANALYZE, after VACUUM
        finally:
            subprocess.run([PG_CLUSTER, "stop", state], check=False, capture_output=True)


if __name__ == "__main__":
    main()
