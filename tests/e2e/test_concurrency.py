"""Two strata processes on one database (docs/design.md §6, §9): a SQLite file, or with
STRATA_TEST_STORE=postgresql (mcp_client.py) a PostgreSQL database.

Two servers start together on a new file, then write (`remember` and `remember_batch`) and
recall at the same time, each driven by its own thread. No lock error may reach a client: every
call succeeds. Each sees the other's writes: a keyword recall (fts5 and hybrid) sent after the
other process acknowledged a write finds it at once, `get` reads it, and dense recall finds it
once a vector exists and the index has caught up (a bounded poll).

The bounded-busy case: a write lock held from outside (Python's sqlite3, BEGIN IMMEDIATE; on
PostgreSQL a psql session's lock on the change log every write appends to) for longer than
strata's busy timeout makes a strata write fail with a clear error result, not a hang or a
crash, while reads keep working; once the lock is released the write succeeds.

Randomness comes from one seed, printed; STRATA_CONCURRENCY_SEED=N replays a run.

Run: python3 tests/e2e/test_concurrency.py <path-to-strata-binary>
"""

import os
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from fake_embedder import FakeEmbedder  # noqa: E402
from mcp_client import WORDS, StrataTestCase, error_text, sentence  # noqa: E402

SEED = int(os.environ.get("STRATA_CONCURRENCY_SEED",
                          random.SystemRandom().randrange(1 << 31)))

OPERATIONS = 150        # per process
REPAIR_DEADLINE = 60.0  # bound on waiting for the other process's vectors (never asserted)
POLL_INTERVAL = 0.05

LOCK_WORDS = ("locked", "busy", "lock_timeout")
# What a write gets once the lock stayed held for strata's busy timeout
# (store::DbOptions::busy_timeout_ms, 5000; PostgreSQL's lock_timeout).
BUSY_MESSAGE = ("the database is busy: another writer has held its lock for more than 5000 ms; "
                "nothing was written, try again")
PG_BUSY_MESSAGE = ("the database is busy: another session held a lock past lock_timeout; "
                   "nothing was written, try again")
# pg/schema.h kChangeLock: every write transaction of strata takes it at BEGIN.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "pg",
                       "schema.h")) as _schema:
    PG_CHANGE_LOCK = int(re.search(r"kChangeLock = (0x[0-9A-Fa-f]+)", _schema.read()).group(1), 16)


def token(side, n):
    """A word no other memory has: the side's letter and n in base 26, e.g. "qzabc"."""
    letters = ""
    for _ in range(4):
        n, r = divmod(n, 26)
        letters += chr(ord("a") + r)
    return "qz%s%s" % (side, letters)


class Side:
    """What one process wrote and acknowledged; `lock` guards `acked`, read by the other
    side's thread."""

    def __init__(self, name, client, seed):
        self.name = name
        self.client = client
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.acked = []      # (key, token, text) in acknowledgement order
        self.problems = []   # what went wrong, reported by the main thread
        self.calls = 0
        self.cross_checks = 0
        self.next = 0

    def new_memory(self):
        self.next += 1
        t = token(self.name, self.next)
        text = "%s %s" % (sentence(self.rng, 8), t)
        return {"category": "shared", "key": "%s-%05d" % (self.name, self.next),
                "body": {"text": text}, "dedup": False}, t, text

    def last_acked(self):
        with self.lock:
            return self.acked[-1] if self.acked else None


def call(side, name, arguments):
    """A tool call that must succeed; a problem is recorded (threads cannot fail the test)."""
    side.calls += 1
    response = side.client.call_tool_raw(name, arguments)
    result = response.get("result")
    if result is None:
        side.problems.append("%s %s: JSON-RPC error %r" % (side.name, name, response))
        return None
    if result.get("isError") is not False:
        text = error_text(result)
        kind = "a lock error reached the client" if any(
            w in text.lower() for w in LOCK_WORDS) else "failed"
        side.problems.append("%s %s %s: %s" % (side.name, name, kind, text))
        return None
    return result["structuredContent"]


def drive(side, other):
    """One process's share of the load: writes, and recalls of what `other` acknowledged."""
    try:
        for _ in range(OPERATIONS):
            roll = side.rng.random()
            if roll < 0.35:
                memory, t, text = side.new_memory()
                if call(side, "remember", memory) is not None:
                    with side.lock:
                        side.acked.append((memory["key"], t, text))
            elif roll < 0.5:
                made = [side.new_memory() for _ in range(side.rng.randint(2, 40))]
                r = call(side, "remember_batch", {"items": [m for m, _, _ in made]})
                if r is not None:
                    with side.lock:
                        side.acked.extend((m["key"], t, text) for m, t, text in made)
            else:
                # Acknowledged by the other process before this request is sent, so visible.
                seen = other.last_acked()
                mode = side.rng.choice(["fts5", "hybrid", "dense", "auto"])
                query = seen[1] if seen and mode != "dense" else side.rng.choice(WORDS)
                r = call(side, "recall", {"query": query, "mode": mode, "limit": 5})
                if r is not None and seen and mode in ("fts5", "hybrid"):
                    side.cross_checks += 1
                    keys = [i["key"] for i in r["items"]]
                    if seen[0] not in keys:
                        side.problems.append("%s: %s recall of %s's acknowledged %s: %r"
                                             % (side.name, mode, other.name, seen[0], keys))
    except Exception as e:  # A hang or a dead server: reported by the main thread.
        side.problems.append("%s: %r" % (side.name, e))


class TwoProcesses(StrataTestCase):

    def setUp(self):
        super().setUp()
        self.seed = SEED + sum(map(ord, self._testMethodName))
        print("\n%s: seed %d (STRATA_CONCURRENCY_SEED=%d)"
              % (self._testMethodName, self.seed, SEED), flush=True)

    def test_two_servers_write_and_recall_at_once(self):
        # Both start together on a file that does not exist yet: both create and migrate it.
        first, second = self.spawn(), self.spawn()
        first.initialize()
        second.initialize()
        a = Side("a", first, self.seed)
        b = Side("b", second, self.seed + 1)
        threads = [threading.Thread(target=drive, args=(a, b)),
                   threading.Thread(target=drive, args=(b, a))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(a.problems + b.problems, [])
        print("%d + %d calls, %d + %d writes acknowledged, %d + %d cross-process recalls"
              % (a.calls, b.calls, len(a.acked), len(b.acked), a.cross_checks,
                 b.cross_checks), flush=True)
        self.assertGreater(a.cross_checks + b.cross_checks, 0)
        for reader, writer in ((a, b), (b, a)):
            self.check_sees(reader, writer)
        for side in (a, b):
            stats = self.call_ok(side.client, "stats", {})
            self.assertEqual(stats["total_memories"], len(a.acked) + len(b.acked))
            # Nor did one reach the background worker (its last error shows in stats).
            self.assertIsNone(stats["embeddings"]["last_error"], stats["embeddings"])
        self.assertEqual(first.close(), 0)
        self.assertEqual(second.close(), 0)
        self.assertFileIntact()

    def check_sees(self, reader, writer):
        """`reader`'s process reads every write `writer`'s acknowledged, in every mode."""
        c = reader.client
        gets = mcp_client.pipeline(c, [
            {"jsonrpc": "2.0", "id": i, "method": "tools/call",
             "params": {"name": "get", "arguments": {"category": "shared", "key": key}}}
            for i, (key, _, _) in enumerate(writer.acked)])
        for response in gets:
            key, _, text = writer.acked[response["id"]]
            got = response["result"]["structuredContent"]
            self.assertIs(got["found"], True, "%s does not see %s" % (reader.name, key))
            self.assertEqual(got["body"], {"text": text})
        sample = reader.rng.sample(writer.acked, min(20, len(writer.acked)))
        sample.append(writer.acked[-1])
        for key, t, text in sample:
            items = self.call_ok(c, "recall", {"query": t, "mode": "fts5"})["items"]
            self.assertEqual([i["key"] for i in items], [key],
                             "%s fts5 recall of %s" % (reader.name, t))
            # The keyword arm puts it in; the dense arm may rank a neighbour level with it.
            items = self.call_ok(c, "recall", {"query": t, "mode": "hybrid"})["items"]
            self.assertIn(key, [i["key"] for i in items],
                          "%s hybrid recall of %s" % (reader.name, t))
        # Dense needs a vector (either process's worker makes it) and this process's index
        # to catch up with the rows the other wrote.
        deadline = time.monotonic() + REPAIR_DEADLINE
        waiting = list(sample)
        while waiting:
            key, _, text = waiting[0]
            items = self.call_ok(c, "recall", {"query": text, "mode": "dense", "limit": 3})
            if [i["key"] for i in items["items"]][:1] == [key]:
                waiting.pop(0)
                continue
            if time.monotonic() > deadline:
                self.fail("%s: dense recall never found %s: %r"
                          % (reader.name, key, self.call_ok(c, "stats", {})["embeddings"]))
            time.sleep(POLL_INTERVAL)


class SqliteLock:
    """The write lock of a SQLite file, held by another connection until release()."""

    def __init__(self, path):
        # Waits its turn: the embedding worker may be storing vectors at that moment.
        self.db = sqlite3.connect(path, timeout=10, isolation_level=None)
        self.db.execute("BEGIN IMMEDIATE")

    def release(self):
        self.db.execute("ROLLBACK")

    def close(self):
        self.db.close()


class PostgresLock:
    """A psql session holding strata's change lock (every write transaction of strata takes
    it; readers do not) until release()."""

    def __init__(self, uri):
        self.psql = subprocess.Popen([mcp_client.PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", uri],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.psql.stdin.write("BEGIN;\nSELECT pg_advisory_xact_lock(%d) \\g /dev/null\n"
                              "\\echo locked\n" % PG_CHANGE_LOCK)
        self.psql.stdin.flush()
        line = self.psql.stdout.readline()  # Waits its turn, as above.
        if line.strip() != "locked":
            raise AssertionError("psql did not take the lock: %r" % line)

    def release(self):
        self.psql.stdin.write("ROLLBACK;\n\\echo released\n")
        self.psql.stdin.flush()
        self.psql.stdout.readline()

    def close(self):
        if self.psql.poll() is None:
            self.psql.kill()
        self.psql.wait()
        self.psql.stdin.close()
        self.psql.stdout.close()


class BusyDatabase(StrataTestCase):
    """A write lock held from outside strata for longer than its busy timeout."""

    def hold_write_lock(self):
        holder = (PostgresLock if mcp_client.ON_POSTGRES else SqliteLock)(self.db)
        self.addCleanup(holder.close)
        return holder

    def write(self, key, text):
        return {"category": "busy", "key": key, "body": {"text": text}, "dedup": False}

    def check_busy_error(self, client, name, arguments):
        """The error of a write while the lock is held: it says the database is busy, for how
        long strata waited, that nothing was written and to try again."""
        text = self.call_error(client, name, arguments,
                               PG_BUSY_MESSAGE if mcp_client.ON_POSTGRES else BUSY_MESSAGE)
        print("%s while locked: %s" % (name, text), flush=True)
        return text

    def test_write_fails_clearly_while_locked_and_succeeds_after(self):
        c = self.serve()
        self.call_ok(c, "remember", self.write("before", "written before the lock"))
        holder = self.hold_write_lock()
        # Readers are not blocked by a writer (WAL).
        self.assertEqual(self.call_ok(c, "get", {"category": "busy", "key": "before"})["body"],
                         {"text": "written before the lock"})
        self.assertEqual(len(self.call_ok(c, "recall", {"query": "lock"})["items"]), 1)
        locked = self.write("during", "written while another process holds the lock")
        self.check_busy_error(c, "remember", locked)
        self.check_busy_error(c, "remember_batch", {"items": [locked]})
        self.assertAlive(c)
        self.assertIs(self.call_ok(c, "get", {"category": "busy", "key": "during"})["found"],
                      False)
        holder.release()
        r = self.call_ok(c, "remember", locked)
        self.assertEqual(r["action"], "created")
        self.assertEqual(self.call_ok(c, "get", {"category": "busy", "key": "during"})["body"],
                         locked["body"])
        self.assertEqual(c.close(), 0)

    def test_write_behind_a_busy_embedding_worker_fails_clearly(self):
        # The worker has vectors to store when the lock is taken, so it waits for the same
        # lock inside strata; a write then queues behind it. The embedder holds the worker's
        # first batch until the lock is taken (with the built-in one, a loaded machine once
        # let the worker store all 3,000 vectors first).
        embedder = FakeEmbedder()
        self.addCleanup(embedder.close)
        embedder.hold()
        c = self.serve("--embedder", embedder.spec)
        items = [self.write("b%04d" % i, "backlog note %d about %s" % (i, WORDS[i % len(WORDS)]))
                 for i in range(3000)]
        self.assertEqual(self.call_ok(c, "remember_batch", {"items": items})["created"], 3000)
        holder = self.hold_write_lock()
        embedder.release()
        self.assertTrue(embedder.wait_answered(
            lambda texts: any("backlog note" in t for t in texts), REPAIR_DEADLINE),
            "the worker asked for no vector of the backlog")
        # Until the worker is stuck: it stores no more vectors though some are pending.
        deadline = time.monotonic() + REPAIR_DEADLINE
        before = self.call_ok(c, "stats", {})["embeddings"]
        while True:
            time.sleep(0.5)
            now = self.call_ok(c, "stats", {})["embeddings"]
            if now["pending"] > 0 and now["vectors"] == before["vectors"]:
                break
            if time.monotonic() > deadline:
                self.fail("the worker did not meet the lock: %r" % now)
            before = now
        self.check_busy_error(c, "remember", self.write("during", "behind the worker"))
        # The worker gave up first (it waited first), and says why in stats.
        worker = self.call_ok(c, "stats", {})["embeddings"]
        self.assertIn(PG_BUSY_MESSAGE if mcp_client.ON_POSTGRES else "database is busy",
                      worker["last_error"] or "", worker)
        holder.release()
        self.assertEqual(self.call_ok(c, "remember", self.write("after", "released"))["action"],
                         "created")
        # The worker got over it too: everything gets its vector.
        deadline = time.monotonic() + REPAIR_DEADLINE
        while self.call_ok(c, "stats", {})["embeddings"]["pending"]:
            if time.monotonic() > deadline:
                self.fail("the worker did not recover from the lock")
            time.sleep(POLL_INTERVAL)
        self.assertEqual(c.close(), 0)


if __name__ == "__main__":
    mcp_client.run_tests()
