"""Embeddings end to end (docs/design.md §5–§7; docs/compat.md): the embed tool under both names,
its progress notifications, dense and hybrid recall finding a paraphrase that keywords miss,
the embeddings in stats, and the --embedder option (none; an embedder that is down; an
unknown one, refused at start).

Every server with an embedder also runs a background worker that embeds whatever is written,
at the same time as the test. Where a test needs an embed call to find the work still to do,
it writes FILLER memories first: the worker embeds oldest first (by version id), so it is
still busy with the filler while the test embeds the memories written after it. Those tests
use an embedder of their own (fake_embedder.py) that takes FILLER_DELAY over each batch of
filler: with the built-in embedder the worker's lead depended on the machine's load, and a
loaded CI machine once let it embed all 3,000 filler memories and the targets before the
test's embed call was read.

Run: python3 tests/e2e/test_embed.py <path-to-strata-binary>
"""

import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from fake_embedder import FakeEmbedder, openai_spec  # noqa: E402
from mcp_client import StrataTestCase, now_ms, schema_problems  # noqa: E402

# Versions written ahead of the ones a test embeds itself (see the module doc), and how long
# the fake embedder takes over each batch of them (32 texts): the worker needs 63 batches,
# 6.3 s, for the filler; a test's embed call waits for at most one.
FILLER = 2000
FILLER_DELAY = 0.1

# Only against hangs: how long to wait for the background worker to finish something.
WORKER_DEADLINE = 60.0

PARAPHRASE = "what hot beverage does she have in the afternoon"
MANY_NOTES = "green tea budget deploy script cat garage slides invoices printer"
NOTES = [
    ("tea-habit", "She drinks green tea after lunch"),
    ("budget-review", "The quarterly budget review is due on Friday"),
    ("deploy-script", "The deploy script needs bash 5 or newer"),
    ("cat", "The cat sleeps on the windowsill all morning"),
    ("garage", "He repaired the garage door last weekend"),
    ("talk-slides", "The conference talk slides are in the shared drive"),
    ("invoices", "Invoices are paid within thirty days"),
    ("printer", "The office printer is on the third floor"),
]


def memory(category, key, text):
    return {"category": category, "key": key, "body": {"text": text}, "dedup": False}


def filler(n=FILLER):
    return [memory("filler", "f%05d" % i, "filler note number %d" % i) for i in range(n)]


def tool_call(id, name, arguments, meta=None):
    params = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def send_together(client, messages):
    """Writes `messages` in one go, so the server reads each as soon as the previous is done."""
    client.send_bytes(b"".join(json.dumps(m).encode("utf-8") + b"\n" for m in messages))


def read_response(client, id):
    """The notifications the server sent before the response to `id`, and that response."""
    notifications = []
    while True:
        message = client.read_message()
        if isinstance(message, dict) and "method" not in message and message.get("id") == id:
            return notifications, message
        notifications.append(message)


def structured(test, response):
    test.assertIn("result", response, response)
    test.assertIs(response["result"].get("isError"), False, response)
    return response["result"]["structuredContent"]


def keys(result):
    return [i["key"] for i in result["items"]]


class EmbedCase(StrataTestCase):

    def embeddings(self, client):
        stats = self.call_ok(client, "stats", {})
        self.assertIsInstance(stats["embeddings"], dict, stats)
        return stats["embeddings"]

    def wait_indexed(self, client):
        """Waits until every stored vector is in the index (the worker loads or builds it in
        the background); returns the embeddings stats then."""
        return mcp_client.wait_indexed(lambda: self.embeddings(client), WORKER_DEADLINE)


class FillerCase(EmbedCase):
    """Servers whose embedder is slow over filler and quick over everything else."""

    def setUp(self):
        super().setUp()
        self.embedder = FakeEmbedder()
        self.addCleanup(self.embedder.close)
        self.embedder.slow_when(lambda texts: any("filler note" in t for t in texts),
                                FILLER_DELAY)

    def serve(self, *extra, **kw):
        return super().serve("--embedder", self.embedder.spec, *extra, **kw)

    def write_behind_filler(self, client, items, then=()):
        """Writes FILLER memories and then `items` in one batch, and sends the requests `then`
        right behind it; returns the responses to `then`, in order."""
        batch = tool_call(1, "remember_batch", {"items": filler() + items})
        send_together(client, [batch] + list(then))
        written = structured(self, read_response(client, 1)[1])
        self.assertEqual((written["created"], written["failed"]), (FILLER + len(items), 0))
        return [read_response(client, m["id"])[1] for m in then]


class EmbedTool(FillerCase):

    def test_embed_leaves_nothing_pending(self):
        c = self.serve()
        items = [memory("notes", "n%d" % i, "note number %d about the garden" % i)
                 for i in range(40)]
        self.call_ok(c, "remember_batch", {"items": items})
        schema = [t for t in c.list_tools() if t["name"] == "embed"][0]["outputSchema"]
        r = self.call_ok(c, "embed", {})
        self.assertEqual(schema_problems(schema, r), [])
        # The worker may have embedded some (or all) first; this call did the rest.
        self.assertEqual((r["remaining"], r["failed"]), (0, 0))
        self.assertEqual(r["attempted"], r["embedded"])
        self.assertLessEqual(r["embedded"], 40)
        self.assertNotIn("error", r)
        again = self.call_ok(c, "embed", {})
        self.assertEqual(again, {"embedded": 0, "attempted": 0, "failed": 0, "remaining": 0})
        e = self.embeddings(c)
        self.assertEqual((e["vectors"], e["pending"], e["last_error"]), (40, 0, None))
        self.assertEqual(self.wait_indexed(c)["indexed"], 40)

    def test_limit_and_remaining(self):
        c = self.serve()
        targets = [memory("target", "t%03d" % i, "target note %d" % i) for i in range(250)]
        first, = self.write_behind_filler(
            c, targets, [tool_call(2, "embed", {"category": "target", "limit": 100})])
        self.assertEqual(structured(self, first),
                         {"embedded": 100, "attempted": 100, "failed": 0, "remaining": 150})
        # The worker is still on the filler: this call does the rest.
        self.assertEqual(self.call_ok(c, "embed", {"category": "target", "limit": 1000}),
                         {"embedded": 150, "attempted": 150, "failed": 0, "remaining": 0})
        self.assertEqual(self.call_ok(c, "embed", {"category": "target"}),
                         {"embedded": 0, "attempted": 0, "failed": 0, "remaining": 0})

    def test_progress_notifications_come_before_the_response(self):
        c = self.serve()
        targets = [memory("target", "t%03d" % i, "target note %d" % i) for i in range(700)]
        self.write_behind_filler(c, targets)
        # write_behind_filler read only the batch's response; the embed goes in right after.
        c.send(tool_call(2, "embed", {"category": "target", "limit": 10000},
                         {"progressToken": "embed-1"}))
        notifications, response = read_response(c, 2)
        r = structured(self, response)
        self.assertEqual((r["embedded"], r["remaining"]), (700, 0))
        # One after each batch: several for 700 versions, the last when all are done.
        self.assertGreaterEqual(len(notifications), 2, notifications)
        last = 0
        for n in notifications:
            self.assertEqual(n.get("jsonrpc"), "2.0", n)
            self.assertEqual(n.get("method"), "notifications/progress", n)
            self.assertNotIn("id", n)
            params = n["params"]
            self.assertEqual(params["progressToken"], "embed-1", n)
            self.assertEqual(params["total"], 700, n)
            self.assertGreater(params["progress"], last, n)
            self.assertLessEqual(params["progress"], params["total"], n)
            last = params["progress"]
        self.assertEqual(last, 700)

    def test_progress_token_kinds(self):
        c = self.serve()
        more = [memory("more", "m%03d" % i, "more notes %d" % i) for i in range(300)]
        targets = [memory("target", "t%03d" % i, "target note %d" % i) for i in range(300)]
        self.write_behind_filler(c, targets + more)
        # An integer token comes back as an integer.
        c.send(tool_call(2, "embed", {"category": "target", "limit": 10000}, {"progressToken": 7}))
        notifications, response = read_response(c, 2)
        self.assertEqual(structured(self, response)["embedded"], 300)
        self.assertTrue(notifications)
        for n in notifications:
            self.assertIs(type(n["params"]["progressToken"]), int, n)
            self.assertEqual(n["params"]["progressToken"], 7, n)
        # Without a token (or with one that is neither a string nor an integer): no
        # notifications, the response is the next line.
        for meta in (None, {}, {"progressToken": None}, {"progressToken": [1]}):
            with self.subTest(meta=meta):
                c.send(tool_call(3, "embed", {"category": "more", "limit": 100}, meta))
                notifications, response = read_response(c, 3)
                self.assertEqual(notifications, [])
                structured(self, response)


class PerseusEmbed(FillerCase):
    """A Perseus Vault client's embed (docs/compat.md): json.loads(content[0].text) of each call."""

    def perseus_result(self, response):
        self.assertIs(response["result"]["isError"], False, response)
        return json.loads(response["result"]["content"][0]["text"])

    def test_batch_loop(self):
        c = self.serve()
        targets = [memory("target", "t%03d" % i, "target note %d" % i) for i in range(250)]
        args = {"batch_category": "target", "batch_limit": 100}
        first, = self.write_behind_filler(c, targets, [tool_call(2, "perseus_vault_embed", args)])
        results = [self.perseus_result(first)]
        # The client's loop: again while a call embedded a whole batch.
        while results[-1]["embedded"] == args["batch_limit"]:
            self.assertLess(len(results), 10, results)
            results.append(self.perseus_result(c.call_tool_raw("perseus_vault_embed", args)))
        self.assertEqual([(r["embedded"], r["remaining"]) for r in results],
                         [(100, 150), (100, 50), (50, 0)])
        for r in results:
            self.assertEqual((r["attempted"], r["failed"]), (r["embedded"], 0))
        # Nothing of the category is left.
        self.assertEqual(self.perseus_result(c.call_tool_raw("perseus_vault_embed", args)),
                         {"embedded": 0, "attempted": 0, "failed": 0, "remaining": 0})

    def test_one_memory_by_category_and_key(self):
        c = self.serve()
        targets = [memory("target", "one", "the first target"),
                   memory("target", "two", "the second target"),
                   dict(memory("target", "one", "the same key elsewhere"), workspace="ws")]
        one, again, in_ws, rest = self.write_behind_filler(c, targets, [
            tool_call(2, "perseus_vault_embed", {"category": "target", "key": "one"}),
            tool_call(3, "perseus_vault_embed", {"category": "target", "key": "one"}),
            tool_call(4, "perseus_vault_embed",
                      {"category": "target", "key": "one", "workspace_hash": "ws"}),
            tool_call(5, "perseus_vault_embed", {"batch_category": "target",
                                                 "batch_limit": 100}),
        ])
        self.assertEqual(self.perseus_result(one),
                         {"embedded": 1, "attempted": 1, "failed": 0, "remaining": 0})
        self.assertEqual(self.perseus_result(again)["embedded"], 0)
        self.assertEqual(self.perseus_result(in_ws)["embedded"], 1)
        # Only "two" was left in the category.
        self.assertEqual(self.perseus_result(rest),
                         {"embedded": 1, "attempted": 1, "failed": 0, "remaining": 0})
        # Every version of the memory, not only the current one (as_of works in every mode).
        self.call_ok(c, "remember", memory("target", "two", "the second target, revised"))
        r = self.perseus_result(c.call_tool_raw("perseus_vault_embed",
                                                {"category": "target", "key": "two"}))
        self.assertLessEqual(r["embedded"], 1)
        self.assertEqual(r["remaining"], 0)

    def test_unknown_memory_is_a_tool_error(self):
        c = self.serve()
        self.call_ok(c, "remember", memory("target", "one", "the first target"))
        text = self.call_error(c, "perseus_vault_embed", {"category": "target", "key": "none"},
                               "none")
        self.assertIn("target", text)


class DenseRecall(EmbedCase):

    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.written = self.call_ok(self.client, "remember_batch", {
            "items": [memory("notes", key, text) for key, text in NOTES]})
        r = self.call_ok(self.client, "embed", {})
        self.assertEqual(r["remaining"], 0)
        # Recall reads the index once it holds every vector (while the worker still loads it,
        # recall may miss vectors, or score them by an exact scan that rounds differently).
        self.wait_indexed(self.client)

    def recall(self, **args):
        return self.call_ok(self.client, "recall", args)

    def test_a_paraphrase_is_found_by_meaning(self):
        # No keyword in common with the tea memory: the keyword arm finds nothing.
        self.assertEqual(self.recall(query=PARAPHRASE, mode="fts5")["items"], [])
        for mode in ("dense", "hybrid"):
            with self.subTest(mode=mode):
                r = self.recall(query=PARAPHRASE, mode=mode)
                self.assertEqual(r["mode"], mode)
                self.assertIn("tea-habit", keys(r)[:3], keys(r))
                tea = [i for i in r["items"] if i["key"] == "tea-habit"][0]
                self.assertIsInstance(tea["dense_rank"], int)
                self.assertIsNone(tea["fts5_rank"])
                self.assertEqual(tea["body"], {"text": "She drinks green tea after lunch"})
                # Every item was found by meaning alone, in dense-rank order.
                self.assertEqual([i["dense_rank"] for i in r["items"]],
                                 list(range(1, len(r["items"]) + 1)))
                self.assertEqual([i["fts5_rank"] for i in r["items"]], [None] * len(r["items"]))
                scores = [i["score"] for i in r["items"]]
                self.assertEqual(scores, sorted(scores, reverse=True))

    def test_hybrid_fuses_both_arms(self):
        r = self.recall(query="green tea", mode="hybrid")
        self.assertEqual(r["mode"], "hybrid")
        top = r["items"][0]
        self.assertEqual((top["key"], top["fts5_rank"], top["dense_rank"]), ("tea-habit", 1, 1))
        for item in r["items"][1:]:
            self.assertIsNone(item["fts5_rank"], item)  # No other memory says "green" or "tea".
            self.assertIsInstance(item["dense_rank"], int)
        fts5 = self.recall(query="green tea", mode="fts5")
        self.assertEqual([(i["key"], i["fts5_rank"], i["dense_rank"]) for i in fts5["items"]],
                         [("tea-habit", 1, None)])

    def test_limit_offset_and_filters_in_every_mode(self):
        for mode in ("dense", "hybrid"):
            with self.subTest(mode=mode):
                # Words of most notes, so that most are above the similarity floor; the
                # unrelated rest is not returned at all.
                full = keys(self.recall(query=MANY_NOTES, mode=mode, limit=8))
                self.assertGreaterEqual(len(full), 5, full)
                self.assertLessEqual(set(full), {k for k, _ in NOTES})
                page = keys(self.recall(query=MANY_NOTES, mode=mode, limit=2, offset=3))
                self.assertEqual(page, full[3:5])
                self.assertEqual(self.recall(query=PARAPHRASE, mode=mode,
                                             category="elsewhere")["items"], [])
                self.assertEqual(self.recall(query=PARAPHRASE, mode=mode,
                                             workspace="ws")["items"], [])

    def test_forgotten_and_past_versions(self):
        before = now_ms()
        time.sleep(0.005)
        self.call_ok(self.client, "forget", {"category": "notes", "key": "tea-habit"})
        for mode in ("dense", "hybrid"):
            with self.subTest(mode=mode):
                self.assertNotIn("tea-habit", keys(self.recall(query=PARAPHRASE, mode=mode)))
                past = keys(self.recall(query=PARAPHRASE, mode=mode, as_of=before))
                self.assertIn("tea-habit", past[:3], past)

    def test_deterministic_and_a_pure_read(self):
        for mode in ("dense", "hybrid"):
            with self.subTest(mode=mode):
                args = {"query": PARAPHRASE, "mode": mode}
                first = self.client.call_tool("recall", args)[2]["content"][0]["text"]
                for _ in range(3):
                    self.call_ok(self.client, "recall", {"query": "printer floor", "mode": mode})
                again = self.client.call_tool("recall", args)[2]["content"][0]["text"]
                self.assertEqual(again, first)

    def test_auto_is_hybrid_once_the_vectors_are_indexed(self):
        r = self.recall(query="green tea")
        self.assertEqual(r["mode"], "hybrid")
        self.assertEqual(r["items"][0]["key"], "tea-habit")
        # A query without words has nothing to embed: newest memories, in every mode.
        for mode in (None, "dense", "hybrid"):
            args = {"query": ""}
            if mode:
                args["mode"] = mode
            with self.subTest(mode=mode):
                self.assertEqual(len(self.recall(**args)["items"]), len(NOTES))

    def test_vectors_outlive_the_process(self):
        self.assertEqual(self.client.close(), 0)
        again = self.serve()
        e = self.embeddings(again)
        self.assertEqual((e["vectors"], e["pending"]), (len(NOTES), 0))
        self.assertEqual(e["embedded_since_start"], 0)
        # The index is loaded (or rebuilt) from what is stored, without embedding again.
        self.assertEqual(self.wait_indexed(again)["indexed"], len(NOTES))
        self.assertEqual(self.embeddings(again)["embedded_since_start"], 0)
        self.assertIn("tea-habit", keys(self.call_ok(again, "recall",
                                                     {"query": PARAPHRASE, "mode": "dense"}))[:3])

    def test_a_second_process_sees_the_first_ones_writes_in_every_mode(self):
        # Two agent hosts on one file: the second server is already running (its index
        # loaded) when the first writes; its worker notices the new versions by polling.
        other = self.serve()
        self.wait_indexed(other)
        self.call_ok(self.client, "remember", memory(
            "notes", "boat", "The sailing club meets at the harbour every Sunday"))
        deadline = time.monotonic() + WORKER_DEADLINE
        while True:
            found = {mode: "boat" in keys(self.call_ok(other, "recall", {
                "query": "sailing club harbour", "mode": mode, "limit": 3}))
                for mode in ("fts5", "dense", "hybrid")}
            if all(found.values()):
                break
            if time.monotonic() > deadline:
                self.fail("the second process does not see the write: %r" % found)
            time.sleep(0.1)
        self.assertEqual(other.close(), 0)

    def test_results_match_the_output_schema(self):
        schemas = {t["name"]: t["outputSchema"] for t in self.client.list_tools()}
        for mode in ("dense", "hybrid"):
            with self.subTest(mode=mode):
                r = self.recall(query=PARAPHRASE, mode=mode, as_of=now_ms(), valid_at=now_ms())
                self.assertEqual(schema_problems(schemas["recall"], r), [])


class Stats(EmbedCase):

    def test_embeddings_object(self):
        c = self.serve()
        stats = self.call_ok(c, "stats", {})
        self.assertEqual(stats["recall_modes"], ["fts5", "dense", "hybrid"])
        e = stats["embeddings"]
        self.assertEqual(sorted(e), ["dimension", "embedded_since_start", "embedder",
                                     "index_file_size_bytes", "index_state", "indexed",
                                     "last_error", "pending", "similarity_floor", "vectors"])
        self.assertTrue(e["embedder"].startswith("builtin/"), e)
        self.assertIsInstance(e["dimension"], int)
        self.assertGreater(e["dimension"], 0)
        self.assertIn(e["index_state"], ("loading", "building", "ready"))
        self.assertIsNone(e["last_error"])
        # Measured by the worker as it starts: null only until then.
        self.assertTrue(e["similarity_floor"] is None or 0 <= e["similarity_floor"] < 1, e)
        self.assertEqual((e["vectors"], e["pending"], e["embedded_since_start"]), (0, 0, 0))
        self.call_ok(c, "remember_batch", {"items": [memory("notes", k, t) for k, t in NOTES]})
        self.call_ok(c, "remember", memory("notes", "printer", "The printer moved upstairs"))
        self.call_ok(c, "embed", {})
        e = self.wait_indexed(c)
        # Every version has a vector, superseded ones too.
        self.assertEqual((e["vectors"], e["pending"], e["indexed"]), (len(NOTES) + 1, 0,
                                                                        len(NOTES) + 1))
        self.assertGreaterEqual(e["embedded_since_start"], len(NOTES) + 1)
        self.assertIsInstance(e["index_file_size_bytes"], int)
        # The Perseus Vault name shows the same.
        perseus = self.call_ok(c, "perseus_vault_stats", {})
        self.assertEqual(perseus["embeddings"]["vectors"], len(NOTES) + 1)

    def test_the_worker_embeds_without_being_asked(self):
        c = self.serve()
        self.call_ok(c, "remember_batch", {"items": [memory("notes", k, t) for k, t in NOTES]})
        e = self.wait_indexed(c)
        self.assertEqual((e["vectors"], e["pending"]), (len(NOTES), 0))
        self.assertEqual(e["embedded_since_start"], len(NOTES))


class WithoutAnEmbedder(EmbedCase):

    def test_dense_and_hybrid_are_refused_naming_the_option(self):
        c = self.serve("--embedder", "none")
        self.call_ok(c, "remember", memory("notes", "tea-habit", NOTES[0][1]))
        for name in ("recall", "perseus_vault_recall"):
            for mode in ("dense", "hybrid"):
                with self.subTest(tool=name, mode=mode):
                    text = self.call_error(c, name, {"query": PARAPHRASE, "mode": mode},
                                           "mode", "--embedder")
                    self.assertIn(mode, text)
        r = self.call_ok(c, "recall", {"query": "green tea"})
        self.assertEqual((r["mode"], keys(r)), ("fts5", ["tea-habit"]))
        for name, args in (("embed", {}), ("perseus_vault_embed", {"batch_category": "notes",
                                                                   "batch_limit": 10})):
            with self.subTest(tool=name):
                self.call_error(c, name, args, "--embedder")
        stats = self.call_ok(c, "stats", {})
        self.assertIsNone(stats["embeddings"])
        self.assertEqual(stats["recall_modes"], ["fts5"])

    def test_writes_without_an_embedder_are_embedded_later(self):
        c = self.serve()
        self.call_ok(c, "remember_batch",
                     {"items": [memory("notes", k, t) for k, t in NOTES[1:]]})
        self.assertEqual(self.call_ok(c, "embed", {})["remaining"], 0)
        self.assertEqual(c.close(), 0)
        # A run without an embedder writes the tea; its vector waits in the backlog.
        none = self.serve("--embedder", "none")
        self.call_ok(none, "remember", memory("notes", "tea-habit", NOTES[0][1]))
        self.assertEqual(none.close(), 0)
        again = self.serve()
        e = self.embeddings(again)
        self.assertEqual(e["vectors"] + e["pending"], len(NOTES))
        r = self.call_ok(again, "embed", {})
        self.assertEqual(r["remaining"], 0)
        self.assertLessEqual(r["embedded"], 1)
        self.assertEqual(self.wait_indexed(again)["vectors"], len(NOTES))
        found = keys(self.call_ok(again, "recall", {"query": PARAPHRASE, "mode": "dense"}))
        self.assertIn("tea-habit", found[:3], found)


class UnreachableEmbedder(EmbedCase):
    """An HTTP embedder that is down: nothing is lost, the failure is reported."""

    def setUp(self):
        super().setUp()
        # A port bound but never listening: connections to it are refused.
        self.closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.closed.bind(("127.0.0.1", 0))
        self.spec = openai_spec(self.closed.getsockname()[1], 8, model="m", retries=0)

    def tearDown(self):
        try:
            super().tearDown()
        finally:
            self.closed.close()

    def test_failures_are_reported_and_keyword_recall_still_works(self):
        c = self.serve("--embedder", self.spec)
        self.call_ok(c, "remember", memory("notes", "tea-habit", NOTES[0][1]))
        r = self.call_ok(c, "embed", {})
        self.assertEqual((r["embedded"], r["remaining"]), (0, 1))
        self.assertEqual(r["failed"], r["attempted"])
        self.assertGreaterEqual(r["failed"], 1)
        self.assertIn("127.0.0.1", r["error"])
        e = self.embeddings(c)
        self.assertEqual((e["vectors"], e["pending"]), (0, 1))
        self.assertIsInstance(e["last_error"], str)
        self.assertTrue(e["embedder"].startswith("openai/"), e)
        for mode in ("dense", "hybrid"):
            with self.subTest(mode=mode):
                self.call_error(c, "recall", {"query": "green tea", "mode": mode}, "127.0.0.1")
        r = self.call_ok(c, "recall", {"query": "green tea"})
        self.assertEqual((r["mode"], keys(r)), ("fts5", ["tea-habit"]))


class EmbedderOption(StrataTestCase):

    def test_unknown_embedder_is_refused_at_start(self):
        for spec, mentions in (("foo", "foo"), ("", "embedder"),
                               ("builtin:nonsense=1", "nonsense"),
                               ("openai:model=m,dim=8", "url")):
            with self.subTest(spec=spec):
                client = self.spawn("--embedder", spec)
                code = client.close()
                self.assertNotEqual(code, 0)
                self.assertEqual(client.stdout_bytes, b"", "nothing on stdout")
                stderr = client.stderr_text()
                self.assertIn("embedder", stderr)
                self.assertIn(mentions, stderr)

    def test_the_option_needs_a_value(self):
        client = self.spawn("--embedder")
        self.assertEqual(client.close(), 2)
        self.assertIn("--embedder", client.stderr_text())


if __name__ == "__main__":
    mcp_client.run_tests()
