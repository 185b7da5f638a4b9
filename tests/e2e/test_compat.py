"""A Perseus Vault client's session, unchanged (docs/compat.md).

The client starts `strata --db PATH` (no subcommand), initializes with 2025-06-18, reads
exactly one line per request and reads every result as json.loads(content[0].text).

Run: python3 tests/e2e/test_compat.py <path-to-strata-binary>
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import DAY_MS, ServerError, StrataTestCase, now_ms  # noqa: E402

LOOKUP_FIELDS = ("id", "category", "key", "body_json", "entity_type", "valid_from_unix_ms",
                 "valid_to_unix_ms", "recorded_at_unix_ms", "invalidated_at_unix_ms",
                 "is_live_version")


class PerseusClient:
    """What a Perseus Vault client does: one line out, one line in, json.loads the text."""

    def __init__(self, test, client):
        self.test, self.client = test, client

    def call(self, verb, arguments):
        client = self.client
        request_id = client.new_id()
        client.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                     "params": {"name": "perseus_vault_" + verb, "arguments": arguments}})
        response = json.loads(client.read_line())
        self.test.assertEqual(response.get("id"), request_id)
        result = response["result"]
        self.text = result["content"][0]["text"]
        if result.get("isError"):
            raise ServerError("perseus_vault_%s(%r) failed: %s" % (verb, arguments, self.text))
        return json.loads(self.text)


class PerseusSession(StrataTestCase):

    def setUp(self):
        super().setUp()
        # Exactly the client's command line: no subcommand, no --compat.
        self.client = self.spawn()
        result = self.client.initialize("2025-06-18")
        self.assertEqual(result["protocolVersion"], "2025-06-18")
        self.pv = PerseusClient(self, self.client)

    def remember(self, category, key, body, **extra):
        args = {"category": category, "key": key, "body_json": json.dumps(body),
                "skip_dedup": True}
        args.update(extra)
        return self.pv.call("remember", args)

    def test_remember(self):
        t = now_ms() - 3 * DAY_MS
        r = self.pv.call("remember", {
            "category": "decision", "key": "database",
            "body_json": json.dumps({"summary": "use sqlite for storage", "priority": 2}),
            "type": "decision", "tags": ["arch", "storage"], "importance": 0.8,
            "workspace_hash": "", "valid_from_unix_ms": str(t), "skip_dedup": True,
            "trust_weight": 0.5, "min_decay": 0.1, "some_future_field": {"x": 1}})
        self.assertIs(r["ok"], True)
        self.assertIsInstance(r["id"], int)
        self.assertEqual(r["action"], "created")
        self.assertEqual(r["category"], "decision")
        self.assertEqual(r["key"], "database")
        entity = self.pv.call("get_entity", {"id": r["id"]})
        self.assertIs(entity["found"], True)
        self.assertEqual(entity["valid_from_unix_ms"], t)
        self.assertEqual(entity["entity_type"], "decision")
        self.assertEqual(json.loads(entity["body_json"]),
                         {"summary": "use sqlite for storage", "priority": 2})
        self.assertEqual(entity["tags"], ["arch", "storage"])

        same = self.remember("decision", "database",
                             {"summary": "use sqlite for storage", "priority": 2},
                             type="decision", tags=["arch", "storage"],
                             valid_from_unix_ms=str(t))
        self.assertEqual(same["action"], "unchanged")
        self.assertEqual(same["id"], r["id"])
        changed = self.remember("decision", "database", {"summary": "use postgres"})
        self.assertEqual(changed["action"], "updated")
        self.assertEqual(changed["id"], r["id"])
        self.assertIs(changed["ok"], True)

    def test_remember_body_json_that_is_a_plain_string(self):
        r = self.pv.call("remember", {"category": "note", "key": "plain",
                                      "body_json": "just some words, not JSON"})
        self.assertIs(r["ok"], True)
        got = self.pv.call("get_entity", {"id": r["id"]})
        self.assertEqual(json.loads(got["body_json"]), "just some words, not JSON")

    def test_body_json_is_kept_verbatim(self):
        text = '{ "summary" : "spacing kept",  "z": 1, "a": [ 1, 2 ] }'
        r = self.pv.call("remember", {"category": "note", "key": "verbatim", "body_json": text})
        self.assertEqual(self.pv.call("get_entity", {"id": r["id"]})["body_json"], text)
        items = self.pv.call("recall", {"query": "spacing"})["items"]
        self.assertEqual([i["body_json"] for i in items], [text])
        # The same body with other whitespace is not a change.
        again = self.pv.call("remember", {"category": "note", "key": "verbatim",
                                          "body_json": '{"summary":"spacing kept","z":1,'
                                                       '"a":[1,2]}'})
        self.assertEqual(again["action"], "unchanged")

    def test_recall(self):
        self.remember("decision", "database", {"summary": "sqlite keeps the memory store",
                                               "priority": 2, "owner": "ana"},
                      type="decision", tags=["arch"])
        self.remember("preference", "editor", {"summary": "vim for the memory notes"},
                      type="preference", tags=["tools"], workspace_hash="ws-1")
        r = self.pv.call("recall", {"query": "memory", "limit": 10, "trust_weight": 0.7,
                                    "min_decay": 0.2})
        self.assertIsInstance(r["total"], int)
        self.assertEqual(len(r["items"]), 2)
        self.assertGreaterEqual(r["total"], 2)
        by_key = {i["key"]: i for i in r["items"]}
        db = by_key["database"]
        for field in ("id", "category", "key", "body_json", "type", "tags"):
            self.assertIn(field, db)
        self.assertIsInstance(db["body_json"], str)
        self.assertEqual(json.loads(db["body_json"])["owner"], "ana")
        self.assertEqual(db["type"], "decision")
        self.assertEqual(db["tags"], ["arch"])
        # The body's top-level fields are copied onto the item.
        self.assertEqual(db["summary"], "sqlite keeps the memory store")
        self.assertEqual(db["priority"], 2)
        self.assertEqual(db["owner"], "ana")
        self.assertEqual(by_key["editor"]["summary"], "vim for the memory notes")

        # Filters under the client's names.
        r = self.pv.call("recall", {"query": "memory", "workspace_hash": "ws-1"})
        self.assertEqual([i["key"] for i in r["items"]], ["editor"])
        r = self.pv.call("recall", {"query": "memory", "category": "decision", "type": "decision"})
        self.assertEqual([i["key"] for i in r["items"]], ["database"])
        r = self.pv.call("recall", {"query": "memory", "mode": "fts5", "limit": 1, "offset": 1})
        self.assertEqual(len(r["items"]), 1)

    def test_recall_default_limit_is_10(self):
        for i in range(12):
            self.remember("bulk", "item-%02d" % i, {"text": "lighthouse note number %d" % i})
        r = self.pv.call("recall", {"query": "lighthouse"})
        self.assertEqual(len(r["items"]), 10)

    def test_recall_temporal_items(self):
        first = self.remember("status", "release", {"state": "planned for june"})
        time.sleep(0.005)
        self.remember("status", "release", {"state": "shipped in june"})
        r = self.pv.call("recall", {"query": "june", "as_of_unix_ms": str(first["recorded_at"])
                                    if "recorded_at" in first else str(now_ms())})
        self.assertEqual(len(r["items"]), 1)
        item = r["items"][0]
        for field in ("valid_from_unix_ms", "valid_to_unix_ms", "recorded_at_unix_ms",
                      "is_live_version"):
            self.assertIn(field, item)
        self.assertEqual(item["state"], "planned for june")
        self.assertIs(item["is_live_version"], False)
        self.assertIsNone(item["valid_to_unix_ms"])

        r = self.pv.call("recall", {"query": "june", "as_of_unix_ms": now_ms() + 1000})
        self.assertEqual([i["state"] for i in r["items"]], ["shipped in june"])
        self.assertIs(r["items"][0]["is_live_version"], True)

        # recall takes `valid_at` (not *_unix_ms) in docs/compat.md.
        self.remember("trip", "city", {"text": "june trip to porto"},
                      valid_from_unix_ms=now_ms() - 10 * DAY_MS,
                      valid_to_unix_ms=now_ms() - 5 * DAY_MS)
        r = self.pv.call("recall", {"query": "porto", "valid_at": now_ms() - 7 * DAY_MS})
        self.assertEqual([i["key"] for i in r["items"]], ["city"])
        self.assertIn("valid_from_unix_ms", r["items"][0])
        # Now the trip is over: no version true now matches "porto". (Once the background
        # worker has embedded the memories, the default mode is hybrid, whose dense arm ranks
        # every memory true now, so "release" may come back, by meaning only.)
        t = now_ms()
        r = self.pv.call("recall", {"query": "porto", "valid_at": str(t)})
        self.assertNotIn("city", [i["key"] for i in r["items"]])
        for item in r["items"]:
            self.assertIsNone(item["fts5_rank"], item)
            self.assertLessEqual(item["valid_from_unix_ms"], t)
            self.assertTrue(item["valid_to_unix_ms"] is None or item["valid_to_unix_ms"] > t)
        r = self.pv.call("recall", {"query": "porto", "valid_at": str(t), "mode": "fts5"})
        self.assertEqual(r["items"], [])

    def test_time_axis_lookups(self):
        base = now_ms()
        first = self.remember("person", "title", {"title": "senior engineer"},
                              valid_from_unix_ms=base - 300 * DAY_MS,
                              valid_to_unix_ms=str(base - 60 * DAY_MS))
        t0 = self.pv.call("get_entity", {"id": first["id"]})["recorded_at_unix_ms"]
        time.sleep(0.005)
        self.remember("person", "title", {"title": "staff engineer"},
                      valid_from_unix_ms=str(base - 60 * DAY_MS))

        # as_of: found, with every field clients read.
        r = self.pv.call("as_of", {"category": "person", "key": "title", "as_of_unix_ms": t0})
        self.assertIs(r["found"], True)
        for field in LOOKUP_FIELDS:
            self.assertIn(field, r)
        self.assertEqual((r["category"], r["key"]), ("person", "title"))
        self.assertEqual(r["as_of_unix_ms"], t0)
        self.assertIn("senior engineer", self.pv.text)
        self.assertEqual(r["valid_to_unix_ms"], base - 60 * DAY_MS)
        self.assertIsInstance(r["invalidated_at_unix_ms"], int)  # superseded since
        self.assertIs(r["is_live_version"], False)
        # as_of: not found.
        r = self.pv.call("as_of", {"category": "person", "key": "title",
                                   "as_of_unix_ms": str(t0 - 1)})
        self.assertEqual(r, {**r, "found": False, "category": "person", "key": "title",
                             "as_of_unix_ms": t0 - 1})
        self.assertNotIn("engineer", self.pv.text)

        # valid_at: found (current version: open valid_to, not invalidated) and not found.
        r = self.pv.call("valid_at", {"category": "person", "key": "title",
                                      "valid_at_unix_ms": str(base - 10 * DAY_MS)})
        self.assertIs(r["found"], True)
        for field in LOOKUP_FIELDS:
            self.assertIn(field, r)
        self.assertIn("staff engineer", self.pv.text)
        self.assertIsNone(r["valid_to_unix_ms"])
        self.assertIsNone(r["invalidated_at_unix_ms"])
        self.assertIs(r["is_live_version"], True)
        self.assertEqual(r["valid_at_unix_ms"], base - 10 * DAY_MS)
        r = self.pv.call("valid_at", {"category": "person", "key": "title",
                                      "valid_at_unix_ms": base - 150 * DAY_MS})
        self.assertIn("senior engineer", self.pv.text)
        r = self.pv.call("valid_at", {"category": "person", "key": "title",
                                      "valid_at_unix_ms": base - 320 * DAY_MS})
        self.assertIs(r["found"], False)
        self.assertEqual((r["category"], r["key"], r["valid_at_unix_ms"]),
                         ("person", "title", base - 320 * DAY_MS))

        # bitemporal: found and not found, both instants echoed.
        r = self.pv.call("bitemporal", {"category": "person", "key": "title",
                                        "tx_at_unix_ms": str(t0),
                                        "valid_at_unix_ms": str(base - 10 * DAY_MS)})
        self.assertIs(r["found"], False)  # at t0, nothing was believed true at -10
        self.assertEqual((r["category"], r["key"], r["tx_at_unix_ms"], r["valid_at_unix_ms"]),
                         ("person", "title", t0, base - 10 * DAY_MS))
        r = self.pv.call("bitemporal", {"category": "person", "key": "title",
                                        "tx_at_unix_ms": t0,
                                        "valid_at_unix_ms": base - 100 * DAY_MS})
        self.assertIs(r["found"], True)
        for field in LOOKUP_FIELDS:
            self.assertIn(field, r)
        self.assertIn("senior engineer", self.pv.text)
        self.assertEqual((r["tx_at_unix_ms"], r["valid_at_unix_ms"]), (t0, base - 100 * DAY_MS))

        # Unknown identity: not found, not an error.
        r = self.pv.call("as_of", {"category": "nobody", "key": "nothing",
                                   "as_of_unix_ms": now_ms()})
        self.assertIs(r["found"], False)
        self.assertEqual((r["category"], r["key"]), ("nobody", "nothing"))

    def test_history(self):
        for i in range(22):
            self.remember("counter", "value", {"n": i})
        r = self.pv.call("history", {"category": "counter", "key": "value"})
        self.assertEqual((r["category"], r["key"]), ("counter", "value"))
        self.assertEqual(r["total"], 22)
        self.assertEqual(r["returned"], 20)  # default limit
        self.assertEqual(len(r["versions"]), 20)
        self.assertEqual([json.loads(v["body_json"])["n"] for v in r["versions"]],
                         list(range(21, 1, -1)))  # newest first
        recorded = [v["recorded_at_unix_ms"] for v in r["versions"]]
        self.assertEqual(recorded, sorted(recorded, reverse=True))
        r = self.pv.call("history", {"category": "counter", "key": "value", "limit": "5",
                                     "offset": 20})
        self.assertEqual(r["returned"], 2)
        self.assertEqual([json.loads(v["body_json"])["n"] for v in r["versions"]], [1, 0])
        self.assertIs(r["versions"][0]["is_live_version"], False)

    def test_forget(self):
        self.remember("pref", "theme", {"text": "dark theme everywhere"})
        r = self.pv.call("forget", {"category": "pref", "key": "theme", "reason": "changed mind"})
        self.assertEqual(r, {**r, "found": True, "category": "pref", "key": "theme"})
        r = self.pv.call("recall", {"query": "theme"})
        self.assertEqual(r["items"], [])
        r = self.pv.call("forget", {"category": "pref", "key": "theme"})
        self.assertIs(r["found"], False)
        self.assertEqual((r["category"], r["key"]), ("pref", "theme"))
        h = self.pv.call("history", {"category": "pref", "key": "theme"})
        self.assertEqual(h["total"], 1)

    def test_stats(self):
        self.remember("a", "one", {"text": "one"})
        self.remember("a", "two", {"text": "two"})
        self.remember("b", "three", {"text": "three"})
        self.pv.call("forget", {"category": "a", "key": "two"})
        r = self.pv.call("stats", {})
        self.assertEqual(r["total_entities"], 3)
        self.assertEqual(r["active_entities"], 2)
        self.assertIsInstance(r["by_category"], dict)
        self.assertEqual(r["by_category"], {"a": 1, "b": 1})
        if mcp_client.ON_POSTGRES:  # The database's size on disk.
            self.assertGreater(r["db_file_size_bytes"], 0)
        else:  # The main database file's size, as the file system sees it while idle.
            self.assertEqual(r["db_file_size_bytes"], os.path.getsize(self.db))

    def test_get_entity(self):
        r = self.remember("fact", "sky", {"text": "the sky is blue"}, type="fact")
        got = self.pv.call("get_entity", {"id": r["id"]})
        self.assertIs(got["found"], True)
        self.assertEqual((got["id"], got["category"], got["key"]), (r["id"], "fact", "sky"))
        self.assertEqual(json.loads(got["body_json"]), {"text": "the sky is blue"})
        self.assertEqual(got["entity_type"], "fact")
        got = self.pv.call("get_entity", {"id": str(r["id"])})
        self.assertIs(got["found"], True)
        missing = self.pv.call("get_entity", {"id": r["id"] + 1000})
        self.assertIs(missing["found"], False)

    def test_tool_errors_are_results(self):
        with self.assertRaises(ServerError):
            self.pv.call("recall", {"query": "x", "limit": "many"})
        self.assertIn("limit", self.pv.text)
        with self.assertRaises(ServerError):
            self.pv.call("remember", {"category": "c", "key": "k",
                                      "body_json": "{}", "valid_from_unix_ms": "whenever"})
        self.assertTrue(self.client.ping())

    def test_one_line_per_request(self):
        self.remember("c", "k", {"text": "hello"})
        self.pv.call("recall", {"query": "hello"})
        self.pv.call("stats", {})
        self.assertEqual(self.client.close(), 0)
        # initialize + three calls: four lines, each a single JSON-RPC response.
        lines = self.client.stdout_lines()
        self.assertEqual(len(lines), 4)
        for line in lines:
            self.assertIsInstance(json.loads(line), dict)


if __name__ == "__main__":
    mcp_client.run_tests()
