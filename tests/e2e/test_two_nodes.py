"""Two strata nodes serving one PostgreSQL database over HTTP (README "Many nodes, one
PostgreSQL"): a write on one is recalled on the other in every mode, concurrent writers on both
lose nothing, tokens and workspaces hold on both, and a database restart mid-load loses no
acknowledged write and leaves both nodes serving.

Run by tests/pg/with_cluster, which starts a throwaway cluster and passes its URI in
STRATA_TEST_PG_URI and how to restart it in STRATA_TEST_PG_CLUSTER:
  tests/pg/with_cluster tools/pg-cluster python3 tests/e2e/test_two_nodes.py <strata-binary>
"""

import os
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import fresh_pg_database, restart_pg_cluster, wait_indexed  # noqa: E402
from test_http import HttpServer, Session, remember  # noqa: E402

# Bounds against hangs only, never asserted as timings.
CATCH_UP_DEADLINE = 60.0
JOIN_DEADLINE = 180.0

ADMIN_TOKEN = "admin-token-0123456789abcdef"
TEAM_A_TOKEN = "team-a-token-0123456789abcdef"


def note(key, text, workspace=None):
    return remember(key, {"text": text}, workspace=workspace)


class TwoNodes(unittest.TestCase):

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="strata-nodes-")
        self.tmp = self._tmp.name
        self.uri = fresh_pg_database(self.id().rsplit(".", 1)[-1])
        self.token_file = os.path.join(self.tmp, "tokens")
        with open(self.token_file, "w") as f:
            f.write("%s *\n%s team-a\n" % (ADMIN_TOKEN, TEAM_A_TOKEN))
        self._servers = []
        self.a = self.start("a")
        self.b = self.start("b")

    def tearDown(self):
        for server in self._servers:
            server.kill()
        self._tmp.cleanup()

    def start(self, name):
        server = HttpServer(mcp_client.BINARY, self.uri, self.tmp,
                            "--index-dir", os.path.join(self.tmp, "index-" + name),
                            "--auth-token-file", self.token_file)
        self._servers.append(server)
        return server

    def session(self, server, token=ADMIN_TOKEN):
        return Session(server, token=token)

    def indexed(self, session):
        return wait_indexed(lambda: session.call_ok("stats", {})["embeddings"],
                            CATCH_UP_DEADLINE, floor=True)

    def test_write_on_one_is_recalled_on_the_other_in_every_mode(self):
        a, b = self.session(self.a), self.session(self.b)
        a.call_ok("remember", note("db", "the billing service stores invoices in PostgreSQL"))
        a.call_ok("remember", note("cache", "sessions are cached in Redis for an hour"))
        a.call_ok("remember", note("deploy", "deploys go out on Tuesdays after the review"))
        self.indexed(b)
        for mode in ("fts5", "dense", "hybrid"):
            found = b.call_ok("recall", {"query": "where are invoices stored", "mode": mode})
            self.assertEqual(found["items"][0]["key"], "db", mode)
        self.assertEqual(b.call_ok("get", {"category": "notes", "key": "cache"})["found"], True)
        # A correction on b is what a reads next, and the history is one history.
        b.call_ok("remember", note("db", "the billing service moved invoices to CockroachDB"))
        self.assertIn("CockroachDB",
                      a.call_ok("get", {"category": "notes", "key": "db"})["body"]["text"])
        history = a.call_ok("history", {"category": "notes", "key": "db"})
        self.assertEqual(history["total"], 2)
        self.indexed(a)
        found = a.call_ok("recall", {"query": "CockroachDB invoices", "mode": "hybrid"})
        self.assertEqual(found["items"][0]["key"], "db")

    def test_concurrent_writers_on_both_nodes_lose_nothing(self):
        per_writer = 40
        errors = []
        shared_writes = []  # Acknowledged writes of the one key every writer updates.
        lock = threading.Lock()

        def writer(server, n):
            try:
                s = self.session(server)
                for i in range(per_writer):
                    s.call_ok("remember", note("w%d-%d" % (n, i),
                                                   "writer %d wrote note %d" % (n, i)))
                    if i % 4 == 0:
                        s.call_ok("remember", note("shared", "writer %d says %d" % (n, i)))
                        with lock:
                            shared_writes.append((n, i))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append("writer %d: %r" % (n, e))

        threads = [threading.Thread(target=writer, args=(server, n))
                   for n, server in enumerate([self.a, self.b, self.a, self.b])]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=JOIN_DEADLINE)
        self.assertFalse(any(t.is_alive() for t in threads))
        self.assertEqual(errors, [])
        for server in (self.a, self.b):
            s = self.session(server)
            self.assertEqual(s.call_ok("stats", {})["active_memories"], 4 * per_writer + 1)
            history = s.call_ok("history", {"category": "notes", "key": "shared"})
            self.assertEqual(history["total"], len(shared_writes))
            for n in range(4):
                found = s.call_ok("recall", {"query": "writer %d wrote note %d" % (n, per_writer - 1),
                                             "mode": "fts5", "limit": 1})
                self.assertEqual(found["items"][0]["key"], "w%d-%d" % (n, per_writer - 1))

    def test_tokens_and_workspaces_hold_on_both_nodes(self):
        admin_a = self.session(self.a)
        admin_a.call_ok("remember", note("plan", "team b ships the mobile app in May",
                                             workspace="team-b"))
        admin_a.call_ok("remember", note("plan", "team a ships the web app in June",
                                             workspace="team-a"))
        team_b_node = self.session(self.b, token=TEAM_A_TOKEN)
        found = team_b_node.call_ok("recall", {"query": "ships app", "workspace": "team-a"})
        self.assertEqual([i["body"]["text"] for i in found["items"]],
                         ["team a ships the web app in June"])
        refused = team_b_node.call_error("get", {"category": "notes", "key": "plan",
                                                 "workspace": "team-b"})
        self.assertNotIn("mobile", refused)
        status, headers, _ = self.b.request("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        self.assertEqual(status, 401)
        self.assertIn("Bearer", headers.get("www-authenticate", ""))

    def test_database_restart_loses_no_acknowledged_write(self):
        acknowledged = []
        failures = []
        stop = threading.Event()
        lock = threading.Lock()

        def writer(server, n):
            i = 0
            while not stop.is_set():
                key = "r%d-%d" % (n, i)
                i += 1
                try:
                    s = self.session(server)
                    s.call_ok("remember", note(key, "restart note %d from writer %d" % (i, n)))
                    with lock:
                        acknowledged.append(key)
                except (AssertionError, OSError) as e:  # A call failed during the restart.
                    with lock:
                        failures.append(str(e))
                    time.sleep(0.05)

        # Two writers a node, so that writes sharing a transaction (group commit) are in
        # flight when the database goes.
        threads = [threading.Thread(target=writer, args=(server, n))
                   for n, server in enumerate([self.a, self.b, self.a, self.b])]
        for t in threads:
            t.start()
        self.wait_for(lambda: len(acknowledged) >= 20, "writes before the restart")
        restart_pg_cluster()
        before = len(acknowledged)
        self.wait_for(lambda: len(acknowledged) >= before + 20, "writes after the restart")
        stop.set()
        for t in threads:
            t.join(timeout=JOIN_DEADLINE)
        self.assertFalse(any(t.is_alive() for t in threads))
        for server in (self.a, self.b):
            s = self.session(server)
            # A write whose answer was lost may have committed: at least those acknowledged.
            self.assertGreaterEqual(s.call_ok("stats", {})["active_memories"], len(acknowledged))
            for key in acknowledged:
                self.assertTrue(s.call_ok("get", {"category": "notes", "key": key})["found"], key)

    def wait_for(self, condition, what):
        deadline = time.monotonic() + JOIN_DEADLINE
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("waited too long for " + what)
            time.sleep(0.05)


if __name__ == "__main__":
    mcp_client.run_tests()
