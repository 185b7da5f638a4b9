#!/usr/bin/env python3
"""Where a PostgreSQL store's time goes, for comparing builds on one loaded store (PERF.md,
"Many nodes").

  python3 benchmark/nodes/profile.py --dir DIR --load 20000 --strata build/src/strata
  python3 benchmark/nodes/profile.py --dir DIR --strata OTHER/strata [--modes fts5,dense]
  python3 benchmark/nodes/profile.py --dir DIR --stop

--load starts a cluster in DIR (tools/pg-cluster, with pg_stat_statements tracking planning
too) and loads that many memories of Perseus Vault's scale corpus as run.py does (2 nodes, 4
clients, single perseus_vault_remember calls), then vacuums (unless --no-vacuum); the cluster
stays for later runs.
Every run starts 2 nodes of --strata on it, moves each node's embedding cursor past what is
stored (one write each: a fresh node's idle poll reads every version until it has embedded
something), warms up (50 recalls), then for each mode times --queries recalls (run.py's
query, one client at a time alternating nodes). For the load and for each mode it prints, as
JSON lines: the rates or latency percentiles, the CPU time the cluster's processes and the
nodes used per write or recall (from /proc: other work on the machine is not counted, unlike
wall time), and pg_stat_statements' costliest statements (mean execution and planning ms).
"""
import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
# benchmark/nodes/run.py, by another name: it imports benchmark/scale/run.py as "run".
_spec = importlib.util.spec_from_file_location("nodes_run", os.path.join(HERE, "run.py"))
nodes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nodes)

PG_CLUSTER = os.path.join(ROOT, "tools", "pg-cluster")


def top_statements(uri, limit):
    rows = nodes.psql(uri, "SELECT round((total_exec_time / calls)::numeric, 4), "
                     "round((total_plan_time / calls)::numeric, 4), calls, "
                     "left(regexp_replace(query, '\\s+', ' ', 'g'), 100) FROM pg_stat_statements "
                     "WHERE calls > 0 AND query NOT LIKE '%%pg_stat_statements%%' "
                     "ORDER BY total_exec_time + total_plan_time DESC LIMIT %d" % limit)
    out = []
    for line in rows.splitlines():
        exec_ms, plan_ms, calls, query = line.split("|", 3)
        out.append({"exec_ms": float(exec_ms), "plan_ms": float(plan_ms), "calls": int(calls),
                    "query": query})
    return out


class Meter:
    """CPU of the cluster and of the nodes over a phase."""

    def __init__(self, cluster_dir, node_list):
        self.cluster_dir, self.node_pids = cluster_dir, [n.proc.pid for n in node_list]

    def __enter__(self):
        self.pg0 = nodes.cpu_seconds(nodes.postgres_pids(self.cluster_dir))
        self.nodes0 = nodes.cpu_seconds(self.node_pids)
        return self

    def __exit__(self, *exc):
        self.pg = nodes.cpu_seconds(nodes.postgres_pids(self.cluster_dir)) - self.pg0
        self.nodes = nodes.cpu_seconds(self.node_pids) - self.nodes0


def time_query(client, query, mode, repeat, meter):
    """Prints the median time of `repeat` recalls of `query` (after 2), the CPU time a recall
    `meter` (a Meter) counts, and what the first found."""
    arguments = {"query": query, "mode": mode, "limit": 10}
    for _ in range(2):
        found = client.call("perseus_vault_recall", arguments)
    samples = []
    with meter as cpu:
        for _ in range(repeat):
            began = time.perf_counter()
            client.call("perseus_vault_recall", arguments)
            samples.append(time.perf_counter() - began)
    keys = [item.get("key") for item in (found or {}).get("items", [])][:3]
    print(json.dumps({"phase": "query", "mode": mode, "query": query,
                      "median_ms": round(statistics.median(samples) * 1000, 2),
                      "min_ms": round(min(samples) * 1000, 2),
                      "pg_cpu_ms": round(cpu.pg * 1000 / repeat, 2),
                      "nodes_cpu_ms": round(cpu.nodes * 1000 / repeat, 2),
                      "first_keys": keys}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="where the kept cluster's files are")
    ap.add_argument("--strata", default=os.path.join(ROOT, "build", "src", "strata"))
    ap.add_argument("--load", type=int, help="start a cluster and load this many memories")
    ap.add_argument("--size", type=int, help="the loaded store's size (queries draw from it)")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--modes", default="fts5")
    ap.add_argument("--statements", type=int, default=8)
    ap.add_argument("--query", action="append", default=[],
                    help="time this query instead of run.py's (repeatable): the median of "
                         "--repeat recalls on one node, after 2")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--no-vacuum", action="store_true",
                    help="after --load, recall at once as run.py does (no VACUUM ANALYZE)")
    ap.add_argument("--explain-over", type=float, metavar="MS",
                    help="with --load: log the plan of every statement slower than MS "
                         "(auto_explain, with actual rows and buffers) to the cluster's "
                         "server.log, in the directory DIR/cluster/cluster names")
    ap.add_argument("--stop", action="store_true", help="stop the kept cluster and remove it")
    args = ap.parse_args()
    cluster_dir = os.path.join(args.dir, "cluster")
    uri_file = os.path.join(args.dir, "uri")
    if args.stop:
        subprocess.run([PG_CLUSTER, "stop", cluster_dir], check=True)
        os.remove(uri_file)
        return
    os.makedirs(args.dir, exist_ok=True)
    if args.load:
        uri = subprocess.run([PG_CLUSTER, "start", cluster_dir], check=True, capture_output=True,
                             text=True).stdout.strip()
        libraries = "pg_stat_statements" + (", auto_explain" if args.explain_over else "")
        nodes.psql(uri, "ALTER SYSTEM SET shared_preload_libraries = %s" % libraries)
        subprocess.run([PG_CLUSTER, "restart", cluster_dir], check=True)
        nodes.psql(uri, "CREATE EXTENSION pg_stat_statements")
        nodes.psql(uri, "ALTER SYSTEM SET pg_stat_statements.track_planning = on")
        if args.explain_over:
            for setting in ("log_min_duration = '%gms'" % args.explain_over, "log_analyze = on",
                            "log_buffers = on"):
                nodes.psql(uri, "ALTER SYSTEM SET auto_explain." + setting)
        nodes.psql(uri, "SELECT pg_reload_conf()")
        with open(uri_file, "w") as f:
            f.write("%s\n%d\n" % (uri, args.load))
    uri, loaded = nodes.kept_store(args.dir)
    size = args.size or loaded
    node_list = []
    try:
        node_list = [nodes.Node(args.strata, uri, args.dir, n, "builtin") for n in range(2)]
        if args.load:
            nodes.psql(uri, "SELECT pg_stat_statements_reset()")
            with Meter(cluster_dir, node_list) as cpu:
                seconds, _ = nodes.load(node_list, args.load, 4)
            print(json.dumps({"phase": "load", "size": args.load,
                              "writes_per_s": round(args.load / seconds, 1),
                              "pg_cpu_ms_per_write": round(cpu.pg * 1000 / args.load, 3),
                              "nodes_cpu_ms_per_write": round(cpu.nodes * 1000 / args.load, 3),
                              "statements": top_statements(uri, args.statements)}), flush=True)
            nodes.drain(node_list)
            if not args.no_vacuum:
                nodes.psql(uri, "VACUUM ANALYZE")
        for n, node in enumerate(node_list):
            nodes.Client(node).call("remember", {"category": "fact", "key": "profile-%d" % n,
                                                 "body": {"text": "cursor %d" % n}})
            time.sleep(1.0)
        for mode in args.modes.split(","):
            clients = [nodes.Client(node) for node in node_list]
            if args.query:
                for query in args.query:
                    time_query(clients[0], query, mode, args.repeat,
                               Meter(cluster_dir, node_list))
                continue
            warm = random.Random(99)
            for q in range(50):
                clients[q % 2].call("perseus_vault_recall", {
                    "query": nodes.recall_query(warm, size), "mode": mode, "limit": 10})
            nodes.psql(uri, "SELECT pg_stat_statements_reset()")
            rng = random.Random(7)
            samples = []
            with Meter(cluster_dir, node_list) as cpu:
                for q in range(args.queries):
                    query = nodes.recall_query(rng, size)
                    began = time.perf_counter()
                    clients[q % 2].call("perseus_vault_recall",
                                        {"query": query, "mode": mode, "limit": 10})
                    samples.append(time.perf_counter() - began)
            report = {"phase": "recall", "mode": mode, "size": size, **nodes.percentiles(samples),
                      "pg_cpu_ms_per_recall": round(cpu.pg * 1000 / args.queries, 3),
                      "nodes_cpu_ms_per_recall": round(cpu.nodes * 1000 / args.queries, 3),
                      "load_average": os.getloadavg()[0],
                      "statements": top_statements(uri, args.statements)}
            print(json.dumps(report), flush=True)
    finally:
        for node in node_list:
            node.stop()


if __name__ == "__main__":
    main()
