#!/usr/bin/env python3
"""Several strata nodes over MCP Streamable HTTP on one store (PERF.md, "Many nodes").

  python3 benchmark/nodes/run.py --strata build/src/strata --store postgresql|sqlite \
      [--size 100000] [--nodes 2] [--clients 4] [--queries 200] [--out report.json] \
      [--profile perseus|pseudo] [--pg-set shared_buffers=4GB ...]
      [--client native|raw|http.client]

On a fresh store (a throwaway PostgreSQL cluster started by tools/pg-cluster, or a SQLite file
in a temporary directory that every node opens; each --pg-set is set on the cluster, which
is restarted for it), starts --nodes `strata serve --http` nodes and
loads --size memories of Perseus Vault's scale corpus (benchmark/scale/corpus.py) by single
perseus_vault_remember calls (or, --profile pseudo, of strata's pseudo-word corpus by single
remember calls) from --clients clients at once, client c on node c mod nodes, each
its own keep-alive connection and session. Then:
- the write rate over the whole load (all clients), and each tenth's, with the CPU a write
  took in each party (the PostgreSQL server with its children, the nodes, the clients);
- the embedding backlog drained: until every node's index holds every stored vector;
- recall latency per mode (fts5, dense, hybrid; query "entity R group G", limit 10) from one
  client at a time, alternating nodes, after 50 untimed recalls of other queries; each node's
  first recall of the mode is reported apart (what a node prepares once). Twice: right after
  the load ("recall_after_load"), while PostgreSQL's autovacuum analyzes what the load wrote,
  and at rest ("recall", other queries), once autovacuum has nothing left to do (no worker
  running, no table past its thresholds; "settle_seconds" the wait, at most SETTLE_LIMIT);
- visibility: a memory of the corpus written on node 0 is polled for by dense recall (its
  text as the query) on the last node (every 10 ms) until it comes first; the time from the
  write's answer to that recall's;
- on PostgreSQL, the autovacuum runs (vacuum or analyze, table), checkpoints and statements
  of 25 ms or more, from when to when, that overlapped each recall mode's timed samples, from
  the server's log: work the server did beside the recalls.
Python standard library only, and the loading clients' program (benchmark/nodes/
load_client.cc, built with the rest). The clients' own cost is included, and on this 2-vCPU
machine it is CPU the nodes and the server do not get: by default (--client native) each
loading client is a load_client process posting its messages, written to a file before the
load, at ~0.06 ms of CPU a write; every other client speaks HTTP/1.1 on a bare socket from
Python (RawClient). With --client raw the loading clients are RawClients too, a process each
(~0.25 ms a write; every run from 2026-12-06 07:00 to session 34); with --client http.client
every client is Python's http.client and the loading ones threads of this process, as in every
run before (~0.4 ms a write, and the recalls' times include its parsing). Progress on stderr,
the JSON report on --out (default stdout).
"""
import argparse
import datetime
import http.client
import json
import multiprocessing
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "benchmark", "scale"))
import corpus  # noqa: E402
from run import commit, log, machine, percentiles  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
START_DEADLINE = 120.0


class Node:
    """One `strata serve --http 127.0.0.1:0` process on the store."""

    def __init__(self, binary, store, tmp, n, embedder):
        self.stderr_path = os.path.join(tmp, "node-%d.stderr" % n)
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--http", "127.0.0.1:0", "--store", store, "--embedder", embedder,
             "--index-dir", os.path.join(tmp, "index-%d" % n)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._err)
        deadline = time.monotonic() + START_DEADLINE
        self.port = None
        while self.port is None:
            with open(self.stderr_path, errors="replace") as f:
                match = re.search(r"127\.0\.0\.1:(\d+)/mcp", f.read())
            if match:
                self.port = int(match.group(1))
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("node %d did not start: %s" % (n, open(self.stderr_path).read()))
            else:
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


class ToolClient:
    """A client's tool calls on its session: a kind of client says how it posts a message
    (`post`, returning the answer's headers and body)."""

    next_id = 1

    def call(self, name, arguments):
        self.next_id += 1
        _, body = self.post(tool_call(self.next_id, name, arguments))
        return tool_result(name, body)


class HttpLibClient(ToolClient):
    """A keep-alive connection and session on one node, by Python's http.client (the clients of
    every run before 2026-12-06: `--client http.client`)."""

    def __init__(self, node):
        self.conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=120)
        self.headers = dict(HEADERS)
        response, _ = self.post(INITIALIZE)
        self.headers["Mcp-Session-Id"] = response.getheader("Mcp-Session-Id")
        self.headers["MCP-Protocol-Version"] = PROTOCOL
        self.post(INITIALIZED)

    def post(self, message):
        self.conn.request("POST", "/mcp", json.dumps(message), self.headers)
        response = self.conn.getresponse()
        body = response.read()
        if response.status not in (200, 202):
            raise RuntimeError("HTTP %d: %s" % (response.status, body[:300]))
        return response, body


class RawClient(ToolClient):
    """A keep-alive connection and session on one node, HTTP/1.1 on a bare socket: a request is
    a fixed head, its Content-Length and the JSON body; an answer is read by its
    Content-Length. The same messages as HttpLibClient's at a fraction of its CPU
    (http.client parses every answer's headers in Python), so that on this 2-vCPU machine
    the load generator takes less from the nodes and the server it measures."""

    def __init__(self, node):
        self.port = node.port
        self.sock = None
        self.head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % self.port + b"".join(
            b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in HEADERS.items()))
        headers, _ = self.post(INITIALIZE)
        self.head += b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n" % (
            headers[b"mcp-session-id"], PROTOCOL.encode())
        self.post(INITIALIZED)

    def post(self, message):
        """Sends `message`; returns the answer's headers (lower-case names) and body. A
        connection the server closes (after Connection: close, or idle) is opened again."""
        body = json.dumps(message).encode()
        request = b"%sContent-Length: %d\r\n\r\n%s" % (self.head, len(body), body)
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=120)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.buffer = b""
        self.sock.sendall(request)
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            self.receive()
        lines = self.buffer[:end].split(b"\r\n")
        self.buffer = self.buffer[end + 4:]
        status = int(lines[0].split(b" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if b"content-length" not in headers:
            raise RuntimeError("HTTP %d without Content-Length: %s" % (status, headers))
        length = int(headers[b"content-length"])
        while len(self.buffer) < length:
            self.receive()
        answer, self.buffer = self.buffer[:length], self.buffer[length:]
        if headers.get(b"connection", b"").lower() == b"close":
            self.sock.close()
            self.sock = None
        if status not in (200, 202):
            raise RuntimeError("HTTP %d: %s" % (status, answer[:300]))
        return headers, answer

    def receive(self):
        data = self.sock.recv(65536)
        if not data:
            raise RuntimeError("the node closed the connection mid-answer")
        self.buffer += data


PROTOCOL = "2025-06-18"
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                         "clientInfo": {"name": "nodes", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# --client: the kind of every client of a run; with native, the loading clients are
# load_client processes and the others RawClients.
CLIENTS = {"raw": RawClient, "http.client": HttpLibClient, "native": RawClient}
Client = RawClient
LOAD_CLIENT = os.path.join(ROOT, "build", "benchmark", "load_client")


def tool_call(id, name, arguments):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def tool_result(name, body):
    """A tool call's structured result; raises on a tool error."""
    result = json.loads(body)["result"]
    if result.get("isError"):
        raise RuntimeError("%s: %s" % (name, result["content"][0]["text"]))
    return result.get("structuredContent")


def remember_call(profile, i):
    """The tool call writing memory i of corpus `profile`: Perseus Vault's own for its corpus,
    as its harness sends it; strata's canonical remember for the pseudo-word corpus."""
    if profile == "perseus":
        return "perseus_vault_remember", corpus.perseus_remember_args(i)
    return "remember", corpus.PROFILES[profile](i)


def write_load_files(tmp, size, clients, profile="perseus"):
    """The messages of each loading client of `load` for --client native, a file a client
    (written before the load, not timed): initialize, initialized, then its tool calls."""
    paths = []
    for c in range(clients):
        paths.append(os.path.join(tmp, "load-%d.jsonl" % c))
        with open(paths[-1], "w") as f:
            for message in (INITIALIZE, INITIALIZED):
                f.write(json.dumps(message) + "\n")
            for i in range(c, size, clients):
                f.write(json.dumps(tool_call(i + 1, *remember_call(profile, i))) + "\n")
    return paths


def load(nodes, size, clients, profile="perseus", files=None):
    """Writes memories 0..size-1 of corpus `profile` from `clients` clients at once: processes of
    their own with raw clients (threads of one process take turns at its GIL), threads with
    http.client (as every run before 2026-12-06), load_client processes posting `files`
    (write_load_files) with native ones; returns (seconds, [seconds per tenth])."""
    processes = Client is RawClient
    ctx = multiprocessing.get_context("fork")
    done = ctx.RawArray("q", clients)  # Writes so far, a slot a client.
    failed = ctx.Queue()
    natives = []

    def work(c):
        try:
            client = Client(nodes[c % len(nodes)])
            for i in range(c, size, clients):
                client.call(*remember_call(profile, i))
                done[c] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            failed.put("client %d: %r" % (c, e))

    def follow(c):
        """Reads load_client c's count of calls answered as it prints it."""
        for line in natives[c].stdout:
            done[c] = int(line)

    began = time.perf_counter()  # Before the load_client processes start writing.
    if files:
        natives = [subprocess.Popen(
            [LOAD_CLIENT, str(nodes[c % len(nodes)].port), PROTOCOL, files[c]],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in range(clients)]
        workers = [threading.Thread(target=follow, args=(c,)) for c in range(clients)]
    else:
        workers = [(ctx.Process if processes else threading.Thread)(target=work, args=(c,))
                   for c in range(clients)]
    for w in workers:
        w.start()
    tenths, next_tenth, last = [], 1, began
    while any(w.is_alive() for w in workers):
        time.sleep(0.05)
        total = sum(done)
        while next_tenth <= 10 and total >= size * next_tenth // 10:
            now = time.perf_counter()
            tenths.append(now - last)
            last = now
            log("  %s written, %.0f/s" % (f"{total:,}", total / (now - began)))
            next_tenth += 1
    for w in workers:
        w.join()
    for c, p in enumerate(natives):
        if p.wait() != 0:
            failed.put("client %d: %s" % (c, p.stderr.read().strip()))
    errors = []
    while not failed.empty():
        errors.append(failed.get())
    if errors or sum(done) != size:
        raise SystemExit("load failed (%d of %d written): %s" % (sum(done), size, errors[:3]))
    return time.perf_counter() - began, tenths


def own_cpu_seconds():
    """User + system CPU of this process and of its children waited for (the load's client
    processes)."""
    return sum(os.times()[:4])


def cpu_seconds(pids):
    """User + system CPU of `pids`, with their waited-for children's, from /proc."""
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def postgres_pids(cluster):
    """The postmaster of tools/pg-cluster's cluster at `cluster`, and its children."""
    with open(os.path.join(cluster, "cluster")) as f:
        data = os.path.join(f.read().strip(), "data")
    with open(os.path.join(data, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                              text=True).stdout.split()
    return [postmaster] + [int(c) for c in children]


LOG_LINE = re.compile(r"^(\S+ \S+) UTC \[(\d+)\] LOG:  (.*)$")
AUTOVACUUM = re.compile(r'^automatic (vacuum|analyze) of table "([^"]+)"')
ELAPSED = re.compile(r"elapsed: ([0-9.]+) s")
CHECKPOINT_START = re.compile(r"^checkpoint starting: (.*)$")
CHECKPOINT_END = re.compile(r"^checkpoint complete: wrote (\d+) buffers")
SLOW_STATEMENT = re.compile(r"^duration: ([0-9.]+) ms  (?:statement|execute [^:]*): (.*)$")
SLOW_MS = 25  # log_min_duration_statement: a recall's statements take a few ms.


def background_runs(cluster):
    """What the server did beside the clients, from its log: autovacuum's runs
    (log_autovacuum_min_duration 0; the line is written at the end, with the run's elapsed time
    on a line after it) and checkpoints (log_checkpoints, on by default: a line at the start and
    one at the end), and statements that took SLOW_MS or more (log_min_duration_statement,
    the line written at the end). Each: kind, what (a table, the checkpoint's reason and
    buffers written, or the backend's process id and the statement),
    start and end (unix seconds)."""
    with open(os.path.join(cluster, "cluster")) as f:
        log_path = os.path.join(f.read().strip(), "server.log")
    with open(log_path, errors="replace") as f:
        lines = f.read().splitlines()
    runs, checkpoint = [], None
    for i, line in enumerate(lines):
        m = LOG_LINE.match(line)
        if not m:
            continue
        at = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        message = m.group(3)
        if a := AUTOVACUUM.match(message):
            elapsed = next((float(e.group(1)) for e in map(ELAPSED.search, lines[i + 1:i + 6])
                            if e), 0.0)
            runs.append({"kind": a.group(1), "what": a.group(2).split(".")[-1],
                         "start_unix": round(at - elapsed, 3), "end_unix": round(at, 3)})
        elif q := SLOW_STATEMENT.match(message):
            runs.append({"kind": "statement",
                         "what": "[%s] %s" % (m.group(2), " ".join(q.group(2).split())),
                         "start_unix": round(at - float(q.group(1)) / 1000, 3),
                         "end_unix": round(at, 3)})
        elif c := CHECKPOINT_START.match(message):
            checkpoint = {"kind": "checkpoint", "what": c.group(1), "start_unix": round(at, 3)}
        elif (c := CHECKPOINT_END.match(message)) and checkpoint:
            checkpoint.update(what="%s, %s buffers" % (checkpoint["what"], c.group(1)),
                              end_unix=round(at, 3))
            runs.append(checkpoint)
            checkpoint = None
    if checkpoint:  # Still running.
        runs.append(dict(checkpoint, end_unix=round(time.time(), 3)))
    return runs


def psql(store, sql):
    """What `sql` prints on `store`, unaligned, without headers or command tags."""
    return subprocess.run(["psql", store, "-XAtqc", sql], check=True, capture_output=True,
                          text=True).stdout


def recall_query(r, size):
    """Recall's query on Perseus Vault's corpus (its scale benchmark's): an entity of the
    store's `size` and a group, drawn from `r`."""
    return "entity %d group %d" % (r.randrange(size), r.randrange(977))


def kept_store(directory):
    """The URI and size of a store profile.py keeps in `directory` (--load)."""
    with open(os.path.join(directory, "uri")) as f:
        uri, loaded = f.read().split()
    return uri, int(loaded)


def log_background(during, runs):
    """Logs background_runs' `runs` of a window (`during`), alike runs together (a slow
    statement's text without its backend)."""
    alike = {}
    for run in runs:
        what = re.sub(r"^\[\d+\] ", "", run["what"])
        n, seconds = alike.get((run["kind"], what), (0, 0.0))
        alike[run["kind"], what] = (n + 1, seconds + run["end_unix"] - run["start_unix"])
    for (kind, what), (n, seconds) in alike.items():
        if len(what) > 110:
            what = what[:60] + " ... " + what[-45:]
        log("  during %s: %s%s %s, %.3f s" % (during, kind, " x%d" % n if n > 1 else "", what,
                                               seconds))


def drain(nodes):
    """Seconds until every node's index holds every stored vector and none is pending."""
    began = time.perf_counter()
    clients = [Client(node) for node in nodes]
    while True:
        states = [c.call("stats", {})["embeddings"] for c in clients]
        if all(e["pending"] == 0 and e["index_state"] == "ready" and e["indexed"] >= e["vectors"]
               for e in states):
            return time.perf_counter() - began, states
        time.sleep(0.2)


def settle(store):
    """(seconds, None) once autovacuum has nothing left to do after the load: no worker
    running and no table past the thresholds it starts a run at (dead rows or inserts since
    its last vacuum, changes since its last analyze), twice in a row half a second apart;
    (None, what was still busy) when SETTLE_LIMIT passed first. Thresholds as autovacuum
    takes them: the table's own (reloptions), else the server's. A table is looked at when
    autovacuum's launcher wakes (every autovacuum_naptime), so this can take that long."""
    began = time.perf_counter()
    # A table's own setting (reloptions: "name=value") or else the server's.
    setting = ("COALESCE((SELECT CAST(split_part(o, '=', 2) AS float8) FROM "
               "unnest(c.reloptions) AS o WHERE o LIKE 'autovacuum_%s=%%%%'), "
               "CAST(current_setting('autovacuum_%s') AS float8))")
    past = " OR ".join(
        "s.%s > %s + %s * greatest(c.reltuples, 0)" % (
            column, setting % ((kind + "_threshold",) * 2),
            setting % ((kind + "_scale_factor",) * 2))
        for column, kind in [("n_dead_tup", "vacuum"), ("n_ins_since_vacuum", "vacuum_insert"),
                             ("n_mod_since_analyze", "analyze")])
    sql = ("SELECT 'autovacuum worker ' || pid FROM pg_stat_activity WHERE backend_type = "
           "'autovacuum worker' UNION ALL SELECT format('%%s (%%s rows: %%s dead, %%s inserted "
           "since vacuum, %%s changed since analyze)', s.relname, c.reltuples, s.n_dead_tup, "
           "s.n_ins_since_vacuum, s.n_mod_since_analyze) FROM pg_stat_user_tables s JOIN "
           "pg_class c ON c.oid = s.relid WHERE %s" % past)
    quiet = 0
    while quiet < 2:
        busy = psql(store, sql).splitlines()
        if time.perf_counter() - began > SETTLE_LIMIT:
            return None, busy
        quiet = 0 if busy else quiet + 1
        time.sleep(0.5)
    return time.perf_counter() - began, None


SETTLE_LIMIT = 180.0


def recall_latency(nodes, size, queries, seed=7, warmup=50):
    """Per mode: the first recall on each node, timed apart (it pays for what a node prepares
    once: its statements on PostgreSQL, its caches), then `warmup` untimed recalls of other
    queries, then `queries` timed ones."""
    rng = random.Random(seed)
    warm = random.Random(seed + 92)
    clients = [Client(node) for node in nodes]
    out = {}

    def recall(client, r, mode):
        """One recall of a query drawn from `r`; its seconds."""
        args = {"query": recall_query(r, size), "mode": mode, "limit": 10}
        began = time.perf_counter()
        client.call("perseus_vault_recall", args)
        return time.perf_counter() - began

    for mode in ("fts5", "dense", "hybrid"):
        first = [round(recall(client, warm, mode) * 1000, 2) for client in clients]
        for q in range(warmup):
            recall(clients[q % len(clients)], warm, mode)
        began = time.time()
        samples = [recall(clients[q % len(clients)], rng, mode) for q in range(queries)]
        # The samples in the order taken, to tell a slow stretch from scattered outliers.
        out[mode] = dict(percentiles(samples), first_ms=first,
                         samples_ms=[round(x * 1000, 2) for x in samples],
                         window_unix=[round(began, 3), round(time.time(), 3)])
        log("  %-6s p50 %.2f ms  p99 %.2f ms  (first on each node: %s ms)"
            % (mode, out[mode]["p50_ms"], out[mode]["p99_ms"], " / ".join(map(str, first))))
    return out


def visibility(nodes, size, samples, profile="perseus"):
    """Seconds from a write's answer on node 0 to dense recall on the last node returning it
    first. The memories are the corpus's own (memory size + 1,000,000 + s): in a store of one
    topic, a memory on another is not reliably reached by the HNSW graph (PERF.md, "Many
    nodes"), which would measure the index, not the catching up."""
    writer, reader = Client(nodes[0]), Client(nodes[-1])
    out = []
    for s in range(samples):
        memory = corpus.PROFILES[profile](size + 1_000_000 + s)
        writer.call("remember", memory)
        began = time.perf_counter()
        while True:
            found = reader.call("recall", {"query": memory["body"]["text"], "mode": "dense",
                                           "limit": 1})
            if found["items"] and found["items"][0]["key"] == memory["key"]:
                break
            if time.perf_counter() - began > 30:
                raise SystemExit("%s never became visible on the other node" % memory["key"])
            time.sleep(0.01)
        out.append(time.perf_counter() - began)
    return percentiles(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strata", default=os.path.join(ROOT, "build", "src", "strata"))
    ap.add_argument("--store", choices=["postgresql", "sqlite"], default="postgresql")
    ap.add_argument("--size", type=int, default=100000)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--visibility-samples", type=int, default=50)
    ap.add_argument("--embedder", default="builtin")
    ap.add_argument("--profile", choices=sorted(corpus.PROFILES), default="perseus",
                    help="the corpus (benchmark/scale/corpus.py): perseus, of record, or "
                         "strata's pseudo-word one (4,096 words against 47)")
    ap.add_argument("--pg-set", action="append", default=[], metavar="NAME=VALUE",
                    help="a PostgreSQL setting for the run's cluster (ALTER SYSTEM; repeatable)")
    ap.add_argument("--client", choices=sorted(CLIENTS), default="native",
                    help="native (the default): the loading clients are build/benchmark/"
                         "load_client processes (their messages written beforehand), the "
                         "others raw; raw: HTTP on a bare socket from Python, a process a "
                         "loading client; http.client: Python's, threads of this process, as "
                         "every run before 2026-12-06")
    ap.add_argument("--out")
    args = ap.parse_args()
    global Client
    Client = CLIENTS[args.client]
    if args.client == "native" and not os.access(LOAD_CLIENT, os.X_OK):
        ap.error("--client native needs %s: meson compile -C build" % LOAD_CLIENT)
    for setting in args.pg_set:
        if not re.fullmatch(r"\w+=.+", setting):
            ap.error("--pg-set: NAME=VALUE, got %r" % setting)
    report = {"benchmark": "nodes", "machine": machine(), "commit": commit(args.strata),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "store": args.store, "profile": args.profile, "size": args.size,
              "nodes": args.nodes,
              "clients": args.clients, "client": args.client, "embedder": args.embedder,
              "pg_settings": args.pg_set}
    with tempfile.TemporaryDirectory(prefix="strata-nodes-") as tmp:
        cluster = os.path.join(tmp, "cluster")
        if args.store == "postgresql":
            store = subprocess.run([os.path.join(ROOT, "tools", "pg-cluster"), "start", cluster],
                                   check=True, capture_output=True, text=True).stdout.strip()
            # Logged, so that the report can say what the server did beside the recalls.
            for setting in ["log_autovacuum_min_duration = 0",
                            "log_min_duration_statement = %d" % SLOW_MS] + [
                                "%s = '%s'" % tuple(s.split("=", 1)) for s in args.pg_set]:
                psql(store, "ALTER SYSTEM SET " + setting)
            # A restart, not a reload: some settings (shared_buffers) take effect only then.
            subprocess.run([os.path.join(ROOT, "tools", "pg-cluster"), "restart", cluster],
                           check=True)
        else:
            store = os.path.join(tmp, "memory.db")
        nodes = []
        try:
            # The first node creates (migrates) the store before the others open it.
            nodes.append(Node(args.strata, store, tmp, 0, args.embedder))
            nodes += [Node(args.strata, store, tmp, n, args.embedder)
                      for n in range(1, args.nodes)]
            log("loading %s memories, %d clients over %d nodes (%s)"
                % (f"{args.size:,}", args.clients, args.nodes, args.store))
            parties = {"nodes": lambda: cpu_seconds([n.proc.pid for n in nodes]),
                       "clients": own_cpu_seconds}
            if args.store == "postgresql":
                parties["postgres"] = lambda: cpu_seconds(postgres_pids(cluster))
            files = (write_load_files(tmp, args.size, args.clients, args.profile)
                     if args.client == "native" else None)
            before = {name: cpu() for name, cpu in parties.items()}
            seconds, tenths = load(nodes, args.size, args.clients, args.profile, files)
            cpu_ms = {name: round((cpu() - before[name]) * 1000 / args.size, 3)
                      for name, cpu in parties.items()}
            report["writes"] = {
                "seconds": round(seconds, 2), "rate_per_s": round(args.size / seconds, 1),
                "tenth_rates_per_s": [round(args.size / 10 / t, 1) for t in tenths],
                "cpu_ms_per_write": cpu_ms}
            log("  writes: %.0f/s; CPU ms a write: %s" % (
                args.size / seconds, ", ".join("%s %.2f" % kv for kv in cpu_ms.items())))
            drain_s, states = drain(nodes)
            report["drain_seconds_after_load"] = round(drain_s, 2)
            report["vectors"] = states[0]["vectors"]
            log("  backlog drained %.1f s after the load" % drain_s)
            log("  recall right after the load:")
            report["recall_after_load"] = recall_latency(nodes, args.size, args.queries)
            if args.store == "postgresql":
                report["settle_seconds"], busy = settle(store)
                if busy:
                    report["settle_busy"] = busy
                    log("  autovacuum not at rest within %.0f s: %s"
                        % (SETTLE_LIMIT, "; ".join(busy)))
                else:
                    log("  autovacuum at rest after %.1f s" % report["settle_seconds"])
            log("  recall at rest:")
            report["recall"] = recall_latency(nodes, args.size, args.queries, seed=8)
            if args.nodes > 1:
                report["visibility"] = visibility(nodes, args.size, args.visibility_samples,
                                                  args.profile)
                log("  visible on the other node: p50 %.0f ms  p99 %.0f ms"
                    % (report["visibility"]["p50_ms"], report["visibility"]["p99_ms"]))
            if args.store == "postgresql":
                runs = background_runs(cluster)
                for phase in ("recall_after_load", "recall"):
                    for mode, r in report[phase].items():
                        began, ended = r["window_unix"]
                        r["background"] = [run for run in runs
                                           if run["start_unix"] < ended and run["end_unix"] > began]
                        log_background("%s %s" % (phase, mode), r["background"])
        finally:
            for node in nodes:
                node.stop()
            if args.store == "postgresql":
                subprocess.run([os.path.join(ROOT, "tools", "pg-cluster"), "stop", cluster])
    text = json.dumps(report, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
