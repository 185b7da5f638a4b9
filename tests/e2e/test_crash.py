"""Crashes (docs/design.md §9): strata is killed with SIGKILL at random points of a write load,
restarted on the same database, and must have lost no acknowledged write, left a database that
passes `PRAGMA integrity_check`, and repaired its derived state.

Each round starts a server on the database, checks what the previous round left (every write
whose response the server had sent is there with its body; a batch is there whole or not at
all), checks the derived state (every version gets a vector within a bounded wait, the vector
index holds them all, dense recall finds a memory written now, a near-duplicate written now
is merged into the memory it copies), then sends a random mix of `remember` and
`remember_batch` calls with a random number in flight, while the background embedding worker
runs, and kills the server after a random number of requests and a random pause. The
integrity check runs on a copy of the killed server's files, so that the next server is the
one that recovers the WAL. Two variants damage the saved vector index (`<db>.hnsw` and its
`.meta`) before each restart, truncating it or replacing it with garbage; the next server must
notice and rebuild it. At the end `strata check-index` measures the index against an exact
scan. A last case puts back an older copy of the database under a newer saved index, as a
power loss under --durability normal can.

On PostgreSQL (STRATA_TEST_STORE=postgresql, a fresh database per test) the same loops kill
the node: every acknowledged write survives, and its saved index (in --index-dir, under the
database's store id) is loaded, or rebuilt when damaged; the last case restores an older copy
of the database. What is about the SQLite file itself stays SQLite-only: the integrity check
of the killed server's files (a PostgreSQL server recovers its own).

Randomness comes from one seed, printed; STRATA_CRASH_SEED=N replays a run.

Run: python3 tests/e2e/test_crash.py <path-to-strata-binary>
"""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import (ON_POSTGRES, StrataTestCase, integrity, sentence,  # noqa: E402
                        stdout_problems, store_args)

SEED = int(os.environ.get("STRATA_CRASH_SEED", random.SystemRandom().randrange(1 << 31)))

# Kills per variant: 14 + 8 + 8.
KILLS_PLAIN = 14
KILLS_DAMAGED = 8
# Written (and the index saved by a clean exit) before the first kill.
SEED_MEMORIES = 1200

# Bounds only against hangs, never asserted as timings.
REPAIR_DEADLINE = 60.0
POLL_INTERVAL = 0.05

CATEGORY = "load"

def tool_call(id, name, arguments):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def responses_in(data):
    """Every complete JSON-RPC response line in `data` (bytes), by id. A last line cut short by
    the kill was not sent whole, so it acknowledges nothing."""
    out = {}
    for line in data.split(b"\n")[:-1]:
        message = json.loads(line)
        if isinstance(message, dict) and "id" in message and "method" not in message:
            out[message["id"]] = message
    return out


class Totals:
    kills = 0
    acknowledged = 0
    recovered = 0
    unacknowledged_found = 0
    rebuilds = 0
    seconds = 0.0


class CrashCase(StrataTestCase):
    """A crash loop over one database. State, per key of the load:
    bodies[key]: every body sent for it, in order; acked[key]: the index in bodies[key] of the
    last one whose response arrived (-1: none yet)."""

    # A killed server's last line may be cut short: load_and_kill and close check stdout.
    check_stdout = False

    @classmethod
    def tearDownClass(cls):
        if cls is CrashCase or not Totals.kills:
            return
        print("\ncrash summary (seed %d): %d kills, %d writes acknowledged, %d recovered "
              "(%d unacknowledged writes found committed), %d index rebuilds, %.1f s"
              % (SEED, Totals.kills, Totals.acknowledged, Totals.recovered,
                 Totals.unacknowledged_found, Totals.rebuilds, Totals.seconds), flush=True)
        Totals.kills = 0

    def setUp(self):
        super().setUp()
        self.seed = SEED + sum(map(ord, self._testMethodName))
        self.rng = random.Random(self.seed)
        print("\n%s: seed %d (STRATA_CRASH_SEED=%d)" % (self._testMethodName, self.seed, SEED),
              flush=True)
        self.bodies = {}
        self.acked = {}
        self.ids = {}           # key -> memory id, from acknowledged responses
        self.to_check = set()   # keys written since the last restart
        self.new_acks = {}      # key -> writes of it acknowledged since the last restart
        self.open_batches = []  # batches sent whose response never came: lists of keys
        self.next_key = 0
        self.next_request = 1
        self.acknowledged = 0
        self.recovered = 0
        self.unacknowledged_found = 0
        self.rebuilds = 0
        self.damage_done = None  # what damage_index did last
        self.open_batches_seen = {True: 0, False: 0}  # unanswered batches: committed or not
        self.index = None  # where the index is saved: known once seed_store opened the store

    # ----- requests ---------------------------------------------------------------------

    def new_key(self):
        self.next_key += 1
        return "k%05d" % self.next_key

    def body_for(self, key):
        # Unique words per body keep every two bodies far below the near-duplicate threshold.
        return {"text": "%s %s" % (sentence(self.rng), key)}

    def item(self, key):
        body = self.body_for(key)
        self.bodies.setdefault(key, []).append(body)
        self.acked.setdefault(key, -1)
        self.to_check.add(key)
        return {"category": CATEGORY, "key": key, "body": body, "dedup": False}

    def make_request(self):
        """A random write: (message, [(key, index of its body)]), with batches of new keys."""
        id = self.next_request
        self.next_request += 1
        settled = [k for k, a in self.acked.items() if a >= 0]
        if self.rng.random() < 0.3:
            keys = [self.new_key() for _ in range(self.rng.randint(2, 40))]
            items = [self.item(k) for k in keys]
            message = tool_call(id, "remember_batch", {"items": items})
        else:
            if settled and self.rng.random() < 0.3:
                key = self.rng.choice(settled)  # an update of an acknowledged memory
            else:
                key = self.new_key()
            keys = [key]
            message = tool_call(id, "remember", self.item(key))
        return message, [(k, len(self.bodies[k]) - 1) for k in keys]

    def record(self, response, written):
        """Takes a response to a write as the acknowledgement of each of its bodies."""
        result = response.get("result")
        self.assertIsNotNone(result, "a write failed: %r" % response)
        self.assertIs(result.get("isError"), False, "a write failed: %r" % response)
        s = result["structuredContent"]
        results = s["results"] if "results" in s else [s]
        self.assertEqual(len(results), len(written), s)
        for r, (key, index) in zip(results, written):
            self.assertEqual((r.get("key"), r.get("action")),
                             (key, "created" if index == 0 else "updated"), r)
            self.acked[key] = max(self.acked[key], index)
            self.ids[key] = r["id"]
            self.new_acks[key] = self.new_acks.get(key, 0) + 1
            self.acknowledged += 1

    def close(self, client):
        """Ends a server that was not killed: exit 0, and only JSON-RPC lines on stdout."""
        self.assertEqual(client.close(), 0)
        self.assertEqual(stdout_problems(client.stdout_bytes), [])

    # ----- one round --------------------------------------------------------------------

    def load_and_kill(self, client):
        """Sends writes with a random number in flight and kills the server after a random
        number of them and a random pause; returns how many were sent."""
        kill_after = self.rng.randint(1, 40)
        window = self.rng.randint(1, 12)
        pause = self.rng.choice([0, 0, 0.001, 0.003, 0.01, 0.03])
        in_flight = {}  # id -> [(key, body index)]
        batches = {}
        for _ in range(kill_after):
            message, written = self.make_request()
            in_flight[message["id"]] = written
            if message["params"]["name"] == "remember_batch":
                batches[message["id"]] = [k for k, _ in written]
            client.send(message)
            while len(in_flight) >= window:
                response = client.read_message()
                self.record(response, in_flight.pop(response["id"]))
        time.sleep(pause)
        client.terminate(signal.SIGKILL)
        data = client.stdout_bytes
        complete = data[:data.rfind(b"\n") + 1]
        self.assertEqual(stdout_problems(complete), [])
        # Responses the server wrote before it died acknowledge their writes as well.
        for id, response in responses_in(complete).items():
            if id in in_flight:
                self.record(response, in_flight.pop(id))
        self.open_batches = [batches[id] for id in in_flight if id in batches]
        return kill_after

    def check_integrity_of_copy(self, round):
        """integrity_check on a copy of the files, so the next server recovers the WAL itself."""
        copy_dir = os.path.join(self.tmp, "copy-%d" % round)
        os.mkdir(copy_dir)
        copy = os.path.join(copy_dir, "memory.db")
        for suffix in ("", "-wal"):
            if os.path.exists(self.db + suffix):
                shutil.copyfile(self.db + suffix, copy + suffix)
        self.assertEqual(integrity(copy), "ok", "after kill %d" % round)
        shutil.rmtree(copy_dir)

    def damage_index(self, how):
        """Truncates the saved index or replaces it with garbage: the graph, its .meta or both.
        Returns what was done, or None when there was no saved index to damage."""
        meta = self.index + ".meta"
        if not (os.path.exists(self.index) and os.path.exists(meta)):
            return None
        targets = self.rng.choice([[self.index], [meta], [self.index, meta]])
        for path in targets:
            size = os.path.getsize(path)
            if how == "truncate":
                # The .meta is one JSON line: without only its final newline it still says all
                # it said, and is rightly loaded. Cut into the JSON itself.
                keep = size - 1 if path == meta else size
                with open(path, "r+b") as f:
                    f.truncate(self.rng.randrange(keep) if keep > 0 else 0)
            else:
                with open(path, "wb") as f:
                    f.write(self.rng.randbytes(max(size, 64)))
        return "%s %s" % (how, "+".join(os.path.basename(p) for p in targets))

    def verify_writes(self, client):
        """Every key written since the last restart holds its last acknowledged body or one
        sent after it; a batch whose response never came is there whole or not at all."""
        keys = sorted(self.to_check)
        found = self.get_many(client, keys)
        for key in keys:
            got = found[key]
            a = self.acked[key]
            if a < 0:
                if got["found"]:
                    self.assertIn(got["body"], self.bodies[key], key)
                    self.unacknowledged_found += 1
                continue
            self.assertIs(got["found"], True, "acknowledged write of %s lost" % key)
            self.assertIn(got["body"], self.bodies[key][a:],
                          "%s: acknowledged body %d of %d lost"
                          % (key, a + 1, len(self.bodies[key])))
            self.assertEqual(got["id"], self.ids[key], key)
            # The body found is the last acknowledged or a later one: every write of this key
            # acknowledged since the last restart is in.
            self.recovered += self.new_acks.get(key, 0)
            if got["body"] != self.bodies[key][a]:
                self.unacknowledged_found += 1
        for batch in self.open_batches:
            present = [found[k]["found"] for k in batch]
            self.assertIn(present, ([True] * len(batch), [False] * len(batch)),
                          "a batch was committed in part: %r" % list(zip(batch, present)))
            self.open_batches_seen[present[0]] += 1
        self.to_check = set()
        self.new_acks = {}
        self.open_batches = []

    def verify_all(self, client):
        """Every key acknowledged since the start, the seed included, still holds its last
        acknowledged body or a later one."""
        keys = sorted(k for k, a in self.acked.items() if a >= 0)
        found = self.get_many(client, keys)
        for key in keys:
            self.assertIs(found[key]["found"], True, key)
            self.assertIn(found[key]["body"], self.bodies[key][self.acked[key]:], key)

    def get_many(self, client, keys):
        """get of each key, pipelined; key -> structuredContent."""
        ids = {}
        messages = []
        for key in keys:
            id = "get-%s" % key
            ids[id] = key
            messages.append(tool_call(id, "get", {"category": CATEGORY, "key": key}))
        out = {}
        for response in mcp_client.pipeline(client, messages):
            result = response.get("result")
            self.assertIsNotNone(result, response)
            self.assertIs(result["isError"], False, response)
            out[ids[response["id"]]] = result["structuredContent"]
        return out

    def wait_repaired(self, client):
        """Waits (bounded) until every version has a vector and the index holds them all."""
        deadline = time.monotonic() + REPAIR_DEADLINE
        while True:
            e = self.call_ok(client, "stats", {})["embeddings"]
            if e["pending"] == 0 and e["index_state"] == "ready" and e["indexed"] == e["vectors"]:
                return e
            if time.monotonic() > deadline:
                self.fail("derived state not repaired within %.0f s: %r" % (REPAIR_DEADLINE, e))
            time.sleep(POLL_INTERVAL)

    def check_dense_and_dedup(self, client, round):
        # A memory written now is found by meaning (the worker embeds it, the index takes it).
        key = "fresh-%d" % round
        text = "%s fresh note %d" % (sentence(self.rng, 12), round)
        r = self.call_ok(client, "remember", {"category": "probe", "key": key,
                                              "body": {"text": text}, "dedup": False})
        deadline = time.monotonic() + REPAIR_DEADLINE
        while True:
            items = self.call_ok(client, "recall", {"query": text, "mode": "dense",
                                                    "limit": 3})["items"]
            if items and items[0]["id"] == r["id"]:
                break
            if time.monotonic() > deadline:
                self.fail("dense recall did not find %s: %r" % (key, items))
            time.sleep(POLL_INTERVAL)
        # A near-duplicate of an acknowledged memory is merged into it.
        settled = sorted(k for k, a in self.acked.items() if a >= 0)
        if not settled:
            return
        original = self.rng.choice(settled)
        current = self.call_ok(client, "get", {"category": CATEGORY, "key": original})
        copy = {"text": current["body"]["text"] + " indeed"}
        r = self.call_ok(client, "remember", {"category": CATEGORY, "key": "dup-%d" % round,
                                              "body": copy})
        self.assertEqual(r["action"], "deduped", "near-duplicate of %s not merged: %r"
                         % (original, r))
        self.assertEqual(r["merged_into"]["id"], self.ids[original], r)

    def seed_store(self):
        """Memories enough for a clean exit to save the vector index (1,000 new vectors)."""
        client = self.serve()
        keys = [self.new_key() for _ in range(SEED_MEMORIES)]
        r = self.call_ok(client, "remember_batch", {"items": [self.item(k) for k in keys]})
        self.assertEqual(r["created"], SEED_MEMORIES)
        for key, result in zip(keys, r["results"]):
            self.acked[key] = 0
            self.ids[key] = result["id"]
        self.to_check = set()
        self.wait_repaired(client)
        self.close(client)
        self.index = mcp_client.index_file(self.db, self.tmp)
        self.assertTrue(os.path.exists(self.index + ".meta"), "no index saved on exit")

    def crash_loop(self, kills, damage=None):
        started = time.monotonic()
        sent = 0
        self.seed_store()
        for round in range(kills + 1):
            client = self.serve()
            self.verify_writes(client)
            e = self.wait_repaired(client)
            rebuilt = "rebuilding the vector index" in client.stderr_text()
            if damage and round > 0:
                self.assertTrue(rebuilt, "the damaged index (%s) was not rebuilt"
                                % self.damage_done)
                self.rebuilds += 1
            else:
                # A kill leaves the saved index as it was: loaded and caught up, not rebuilt.
                self.assertFalse(rebuilt, client.stderr_text())
            self.check_dense_and_dedup(client, round)
            if round == kills:
                self.verify_all(client)
                self.close(client)
                break
            sent += self.load_and_kill(client)
            if not ON_POSTGRES:  # the SQLite files; a PostgreSQL server recovers its own
                self.check_integrity_of_copy(round)
            if damage:
                self.damage_done = self.damage_index(damage)
                self.assertIsNotNone(self.damage_done,
                                     "no saved index to damage after kill %d" % round)
        self.assertFileIntact()
        recall = self.check_index()
        elapsed = time.monotonic() - started
        print("%s: %d kills, %d requests sent, %d writes acknowledged, %d recovered, "
              "%d unacknowledged found; unanswered batches: %d committed whole, %d absent; "
              "%d rebuilds, %d vectors, check-index recall@10 %.3f, %.1f s"
              % (self._testMethodName, kills, sent, self.acknowledged, self.recovered,
                 self.unacknowledged_found, self.open_batches_seen[True],
                 self.open_batches_seen[False], self.rebuilds, e["vectors"], recall, elapsed),
              flush=True)
        self.assertEqual(self.recovered, self.acknowledged)
        Totals.kills += kills
        Totals.acknowledged += self.acknowledged
        Totals.recovered += self.recovered
        Totals.unacknowledged_found += self.unacknowledged_found
        Totals.rebuilds += self.rebuilds
        Totals.seconds += elapsed

    def check_index(self):
        """`strata check-index` runs on the final database and finds the true neighbours."""
        result = subprocess.run(
            [mcp_client.BINARY, "check-index", *store_args(self.db, self.tmp), "--queries", "50"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        m = re.match(rb"recall@10 ([0-9.]+) over 50 queries", result.stdout)
        self.assertIsNotNone(m, result.stdout)
        self.assertGreaterEqual(float(m.group(1)), 0.9, result.stdout)
        return float(m.group(1))


class Crash(CrashCase):

    def test_kills_during_writes_lose_no_acknowledged_write(self):
        self.crash_loop(KILLS_PLAIN)

    def test_truncated_index_is_rebuilt_after_each_kill(self):
        self.crash_loop(KILLS_DAMAGED, damage="truncate")

    def test_garbage_index_is_rebuilt_after_each_kill(self):
        self.crash_loop(KILLS_DAMAGED, damage="garbage")


class IndexAheadOfTheDatabase(CrashCase):
    """A saved index holding vectors the database does not have: what a power loss under
    --durability normal leaves (the index file is synced when saved, the last WAL commits are
    not), and a restore of the database from an older copy. Simulated by putting back a copy
    of the database taken before more memories were written and the index saved: its files,
    or on PostgreSQL a database made from it as a template."""

    def back_up(self):
        """A copy of the store, whose server has exited; returns what restore takes."""
        if ON_POSTGRES:
            backup = self.database() + "_backup"
            mcp_client.psql(os.environ["STRATA_TEST_PG_URI"],
                            "CREATE DATABASE %s TEMPLATE %s" % (backup, self.database()))
            return backup
        backup = os.path.join(self.tmp, "backup")
        os.mkdir(backup)
        for suffix in ("", "-wal"):
            if os.path.exists(self.db + suffix):
                shutil.copyfile(self.db + suffix, os.path.join(backup, "memory.db" + suffix))
        return backup

    def restore(self, backup):
        """Puts the copy back_up made in the store's place; its server has exited."""
        if ON_POSTGRES:
            admin = os.environ["STRATA_TEST_PG_URI"]
            mcp_client.psql(admin, "DROP DATABASE %s" % self.database())
            mcp_client.psql(admin, "CREATE DATABASE %s TEMPLATE %s" % (self.database(), backup))
            return
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.remove(self.db + suffix)
            if os.path.exists(os.path.join(backup, "memory.db" + suffix)):
                shutil.copyfile(os.path.join(backup, "memory.db" + suffix), self.db + suffix)

    def database(self):
        """The name of the PostgreSQL database self.db names (mcp_client.fresh_pg_database)."""
        return self.db.rsplit("dbname=", 1)[1]

    def test_index_ahead_of_the_database_is_not_trusted(self):
        c = self.serve()
        self.call_ok(c, "remember_batch", {"items": [self.item(self.new_key())
                                                     for _ in range(100)]})
        self.wait_repaired(c)
        self.assertEqual(c.close(), 0)
        backup = self.back_up()
        c = self.serve()
        self.call_ok(c, "remember_batch", {"items": [self.item(self.new_key())
                                                     for _ in range(SEED_MEMORIES)]})
        self.wait_repaired(c)
        self.assertEqual(c.close(), 0)  # saves the index: 1,300 vectors
        self.restore(backup)
        c = self.serve()
        text = "%s written after the restore" % sentence(self.rng, 12)
        fresh = self.call_ok(c, "remember", {"category": "probe", "key": "fresh",
                                             "body": {"text": text}})
        # A rebuild of 101 vectors takes milliseconds; the bound only ends the wait.
        deadline = time.monotonic() + 10.0
        while True:
            e = self.call_ok(c, "stats", {})["embeddings"]
            items = self.call_ok(c, "recall", {"query": text, "mode": "dense",
                                               "limit": 1})["items"]
            if (e["pending"] == 0 and e["index_state"] == "ready"
                    and e["indexed"] == e["vectors"] and items
                    and items[0]["id"] == fresh["id"]):
                break
            if time.monotonic() > deadline:
                self.fail("the index from after the copy was trusted: %r, dense recall of "
                          "the memory written now: %r" % (e, [i["key"] for i in items]))
            time.sleep(POLL_INTERVAL)


if __name__ == "__main__":
    mcp_client.run_tests()
