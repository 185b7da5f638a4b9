"""docs/design.md §3 through MCP: the five time-axis scenarios under the canonical tool names and
under the perseus_vault_* names (docs/compat.md), forget and revival, time argument formats, and
keyword recall with filters and as_of.

Run: python3 tests/e2e/test_scenarios.py <path-to-strata-binary>
"""

import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import DAY_MS, StrataTestCase, now_ms  # noqa: E402


def pause():
    """Lets the wall clock move a few ms, so that recorded_at instants are distinct."""
    time.sleep(0.005)


class CanonicalDialect:
    """remember / valid_at / as_of / bitemporal with docs/design.md's argument names."""

    name = "canonical"

    def __init__(self, test, client):
        self.test, self.client = test, client

    def remember(self, category, key, value, valid_from=None, valid_to=None):
        args = {"category": category, "key": key, "body": {"value": value}}
        if valid_from is not None:
            args["valid_from"] = valid_from
        if valid_to is not None:
            args["valid_to"] = valid_to
        result = self.test.call_ok(self.client, "remember", args)
        self.test.assertIs(result["ok"], True)
        self.test.assertIn(result["action"], ("created", "updated"))
        return result

    def valid_at(self, category, key, v):
        result = self.test.call_ok(self.client, "valid_at",
                                   {"category": category, "key": key, "valid_at": v})
        self.test.assertEqual(result["valid_at"], v)
        return result

    def as_of(self, category, key, tx):
        result = self.test.call_ok(self.client, "as_of",
                                   {"category": category, "key": key, "as_of": tx})
        self.test.assertEqual(result["as_of"], tx)
        return result

    def bitemporal(self, category, key, tx, v):
        result = self.test.call_ok(self.client, "bitemporal",
                                   {"category": category, "key": key, "tx_at": tx,
                                    "valid_at": v})
        self.test.assertEqual(result["tx_at"], tx)
        self.test.assertEqual(result["valid_at"], v)
        return result

    def value(self, result):
        return result["body"]["value"]


class PerseusDialect(CanonicalDialect):
    """perseus_vault_* with docs/compat.md's argument names; results read as clients do, from
    json.loads(content[0].text)."""

    name = "perseus"

    def call(self, tool, args):
        structured, is_error, raw = self.client.call_tool(tool, args)
        self.test.assertIs(is_error, False, "%s(%r): %r" % (tool, args, raw))
        text_obj = json.loads(raw["content"][0]["text"])
        self.test.assertEqual(text_obj, structured)
        return text_obj

    def remember(self, category, key, value, valid_from=None, valid_to=None):
        args = {"category": category, "key": key, "body_json": json.dumps({"value": value})}
        if valid_from is not None:
            args["valid_from_unix_ms"] = valid_from
        if valid_to is not None:
            args["valid_to_unix_ms"] = valid_to
        result = self.call("perseus_vault_remember", args)
        self.test.assertIs(result["ok"], True)
        self.test.assertIn(result["action"], ("created", "updated"))
        self.test.assertEqual((result["category"], result["key"]), (category, key))
        self.test.assertIsInstance(result["id"], int)
        return result

    def check_lookup(self, result, category, key):
        self.test.assertEqual((result["category"], result["key"]), (category, key))
        if result["found"]:
            for field in ("id", "body_json", "entity_type", "valid_from_unix_ms",
                          "valid_to_unix_ms", "recorded_at_unix_ms", "invalidated_at_unix_ms",
                          "is_live_version"):
                self.test.assertIn(field, result)
            self.test.assertIsInstance(result["body_json"], str)

    def valid_at(self, category, key, v):
        result = self.call("perseus_vault_valid_at",
                           {"category": category, "key": key, "valid_at_unix_ms": v})
        self.test.assertEqual(result["valid_at_unix_ms"], v)
        self.check_lookup(result, category, key)
        return result

    def as_of(self, category, key, tx):
        result = self.call("perseus_vault_as_of",
                           {"category": category, "key": key, "as_of_unix_ms": tx})
        self.test.assertEqual(result["as_of_unix_ms"], tx)
        self.check_lookup(result, category, key)
        return result

    def bitemporal(self, category, key, tx, v):
        result = self.call("perseus_vault_bitemporal",
                           {"category": category, "key": key, "tx_at_unix_ms": tx,
                            "valid_at_unix_ms": v})
        self.test.assertEqual(result["tx_at_unix_ms"], tx)
        self.test.assertEqual(result["valid_at_unix_ms"], v)
        self.check_lookup(result, category, key)
        return result

    def value(self, result):
        return json.loads(result["body_json"])["value"]


class ScenarioMixin:
    """The five scenarios of docs/design.md §3; `dialect` is set by the concrete class."""

    dialect = None

    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.d = self.dialect(self, self.client)
        self.base = now_ms()

    def day(self, offset):
        return self.base + offset * DAY_MS

    def assertValue(self, result, expected, what):
        self.assertIs(result["found"], True, "%s: expected %r, not found: %r"
                      % (what, expected, result))
        self.assertEqual(self.d.value(result), expected, what)

    def assertNotFound(self, result, what):
        self.assertIs(result["found"], False, "%s: expected not found, got %r" % (what, result))

    def test_1_retroactive_correction(self):
        d = self.d
        d.remember("person", "title", "senior engineer", self.day(-300), self.day(-60))
        pause()
        d.remember("person", "title", "staff engineer", self.day(-60))
        self.assertValue(d.valid_at("person", "title", self.day(-150)), "senior engineer",
                         "valid_at -150")
        self.assertValue(d.valid_at("person", "title", self.day(-10)), "staff engineer",
                         "valid_at -10")
        self.assertNotFound(d.valid_at("person", "title", self.day(-320)), "valid_at -320")
        # The boundary is half-open: at -60 the new title holds.
        self.assertValue(d.valid_at("person", "title", self.day(-60)), "staff engineer",
                         "valid_at -60")
        self.assertValue(d.valid_at("person", "title", self.day(-60) - 1), "senior engineer",
                         "valid_at just before -60")

    def test_2_future_dated_facts(self):
        d = self.d
        d.remember("person", "salary", "120k", self.day(-400), self.day(30))
        pause()
        d.remember("person", "salary", "150k", self.day(30))
        self.assertValue(d.valid_at("person", "salary", self.day(0)), "120k", "valid_at 0")
        self.assertValue(d.valid_at("person", "salary", self.day(45)), "150k", "valid_at +45")
        self.assertNotFound(d.valid_at("person", "salary", self.day(-401)), "valid_at -401")

    def test_3_belief_vs_truth(self):
        d = self.d
        first = d.remember("project", "status", "on-track", self.day(-20))
        t0 = first["recorded_at"] if "recorded_at" in first else None
        if t0 is None:  # Perseus Vault's remember has no recorded_at: ask history.
            t0 = self.history_recorded_at("project", "status")[-1]
        pause()
        second = d.remember("project", "status", "at-risk", self.day(-20))
        pause()
        now = now_ms()
        if "recorded_at" in second:
            self.assertGreater(second["recorded_at"], t0)
            now = max(now, second["recorded_at"])
        self.assertValue(d.as_of("project", "status", t0), "on-track", "as_of t0")
        self.assertValue(d.valid_at("project", "status", self.day(-10)), "at-risk",
                         "valid_at -10")
        self.assertValue(d.bitemporal("project", "status", t0, self.day(-10)), "on-track",
                         "bitemporal(t0, -10)")
        self.assertValue(d.bitemporal("project", "status", now, self.day(-10)), "at-risk",
                         "bitemporal(now, -10)")
        self.assertNotFound(d.as_of("project", "status", t0 - 1), "as_of before t0")
        self.assertNotFound(d.bitemporal("project", "status", t0 - 1, self.day(-10)),
                            "bitemporal(before t0, -10)")

    def test_4_out_of_order_arrival(self):
        d = self.d
        d.remember("agent", "model", "opus-4-8", self.day(-5))
        pause()
        d.remember("agent", "model", "opus-4-7", self.day(-90), self.day(-5))
        self.assertValue(d.valid_at("agent", "model", self.day(-40)), "opus-4-7", "valid_at -40")
        self.assertValue(d.valid_at("agent", "model", self.day(-1)), "opus-4-8", "valid_at -1")
        self.assertNotFound(d.valid_at("agent", "model", self.day(-91)), "valid_at -91")

    def test_5_closed_period(self):
        d = self.d
        d.remember("owned", "vehicle", "bike", self.day(-200), self.day(-30))
        self.assertValue(d.valid_at("owned", "vehicle", self.day(-100)), "bike", "valid_at -100")
        self.assertNotFound(d.valid_at("owned", "vehicle", self.day(-5)), "valid_at -5")

    def test_all_scenarios_in_one_store(self):
        # The same five identities side by side must not disturb each other.
        self.test_1_retroactive_correction()
        self.test_2_future_dated_facts()
        self.test_4_out_of_order_arrival()
        self.test_5_closed_period()
        self.assertValue(self.d.valid_at("person", "title", self.day(-150)), "senior engineer",
                         "valid_at -150 after the other scenarios")

    def history_recorded_at(self, category, key):
        h = self.call_ok(self.client, "history", {"category": category, "key": key})
        return [v["recorded_at"] for v in h["versions"]]


class CanonicalScenarios(ScenarioMixin, StrataTestCase):
    dialect = CanonicalDialect


class PerseusScenarios(ScenarioMixin, StrataTestCase):
    dialect = PerseusDialect


def iso_ms(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class ForgetAndRevive(StrataTestCase):

    def setUp(self):
        super().setUp()
        self.client = self.serve()

    def recall_keys(self, query, **extra):
        args = {"query": query}
        args.update(extra)
        return [(i["category"], i["key"]) for i in
                self.call_ok(self.client, "recall", args)["items"]]

    def test_forget_then_recall_history_as_of_and_revive(self):
        c = self.client
        first = self.call_ok(c, "remember", {"category": "fact", "key": "office",
                                             "body": {"text": "office is in lisbon"}})
        self.call_ok(c, "remember", {"category": "fact", "key": "other",
                                     "body": {"text": "lisbon has trams"}})
        self.assertIn(("fact", "office"), self.recall_keys("lisbon"))
        pause()
        forgot = self.call_ok(c, "forget", {"category": "fact", "key": "office",
                                            "reason": "moved"})
        self.assertIs(forgot["found"], True)
        self.assertEqual((forgot["category"], forgot["key"]), ("fact", "office"))
        pause()

        # Recall no longer returns it; the other memory is untouched.
        self.assertEqual(self.recall_keys("lisbon"), [("fact", "other")])
        self.assertIs(self.call_ok(c, "get", {"category": "fact", "key": "office"})["found"],
                      False)
        self.assertIs(self.call_ok(c, "valid_at", {"category": "fact", "key": "office",
                                                   "valid_at": now_ms()})["found"], False)
        # History keeps it.
        history = self.call_ok(c, "history", {"category": "fact", "key": "office"})
        self.assertEqual(history["total"], 1)
        self.assertEqual(history["versions"][0]["body"], {"text": "office is in lisbon"})
        # What we believed before the forget is still there; after it, nothing.
        before = self.call_ok(c, "as_of", {"category": "fact", "key": "office",
                                           "as_of": first["recorded_at"]})
        self.assertIs(before["found"], True)
        self.assertEqual(before["body"], {"text": "office is in lisbon"})
        after = self.call_ok(c, "as_of", {"category": "fact", "key": "office",
                                          "as_of": now_ms()})
        self.assertIs(after["found"], False)
        # Recall as of before the forget still finds it.
        self.assertIn(("fact", "office"),
                      self.recall_keys("lisbon", as_of=first["recorded_at"]))
        # Forgetting what is not current finds nothing.
        self.assertIs(self.call_ok(c, "forget", {"category": "fact", "key": "office"})["found"],
                      False)
        self.assertIs(self.call_ok(c, "forget", {"category": "fact", "key": "never"})["found"],
                      False)

        # Remembering it again, even with the same body, starts a new version.
        revived = self.call_ok(c, "remember", {"category": "fact", "key": "office",
                                               "body": {"text": "office is in lisbon"}})
        self.assertNotEqual(revived["action"], "unchanged")
        self.assertGreater(revived["recorded_at"], first["recorded_at"])
        self.assertIn(("fact", "office"), self.recall_keys("lisbon"))
        self.assertIs(self.call_ok(c, "get", {"category": "fact", "key": "office"})["found"],
                      True)
        history = self.call_ok(c, "history", {"category": "fact", "key": "office"})
        self.assertEqual(history["total"], 2)
        self.assertEqual(history["returned"], 2)
        recorded = [v["recorded_at"] for v in history["versions"]]
        self.assertEqual(recorded, sorted(recorded, reverse=True), "history is newest first")
        # The belief before the forget is unchanged by the revival.
        before = self.call_ok(c, "as_of", {"category": "fact", "key": "office",
                                           "as_of": first["recorded_at"]})
        self.assertIs(before["found"], True)

    def test_revive_with_new_body(self):
        c = self.client
        self.call_ok(c, "remember", {"category": "c", "key": "k", "body": "version one"})
        pause()
        self.call_ok(c, "forget", {"category": "c", "key": "k"})
        pause()
        self.call_ok(c, "remember", {"category": "c", "key": "k", "body": "version two"})
        got = self.call_ok(c, "get", {"category": "c", "key": "k"})
        self.assertEqual(got["body"], "version two")
        self.assertEqual(self.recall_keys("version"), [("c", "k")])
        # A bitemporal read after the revival sees only the new belief.
        v = self.call_ok(c, "bitemporal", {"category": "c", "key": "k", "tx_at": now_ms() + 1000,
                                           "valid_at": now_ms()})
        self.assertEqual(v["body"], "version two")

    def test_unchanged_and_versions(self):
        c = self.client
        a = self.call_ok(c, "remember", {"category": "c", "key": "k", "body": {"a": 1, "b": [1, 2]}})
        self.assertEqual(a["action"], "created")
        # Same body with other whitespace: no new version.
        b = self.call_ok(c, "remember", {"category": "c", "key": "k",
                                         "body_json": '{ "a" : 1,\n "b" : [ 1 , 2 ] }'})
        self.assertEqual(b["action"], "unchanged")
        self.assertEqual(b["id"], a["id"])
        pause()
        u = self.call_ok(c, "remember", {"category": "c", "key": "k", "body": {"a": 2}})
        self.assertEqual(u["action"], "updated")
        self.assertEqual(u["id"], a["id"])
        self.assertEqual(u["version"], a["version"] + 1)
        # Different valid bounds with the same body are a change.
        pause()
        w = self.call_ok(c, "remember", {"category": "c", "key": "k", "body": {"a": 2},
                                         "valid_from": now_ms() - DAY_MS})
        self.assertEqual(w["action"], "updated")
        history = self.call_ok(c, "history", {"category": "c", "key": "k"})
        self.assertEqual(history["total"], 3)
        self.assertEqual([v["version"] for v in history["versions"]], [3, 2, 1])
        # Paging history.
        page = self.call_ok(c, "history", {"category": "c", "key": "k", "limit": 1, "offset": 1})
        self.assertEqual([v["version"] for v in page["versions"]], [2])
        self.assertEqual(page["total"], 3)
        self.assertEqual(page["returned"], 1)


class MoreTimeRules(StrataTestCase):
    """Other docs/design.md §3 rules, seen through MCP."""

    def setUp(self):
        super().setUp()
        self.client = self.serve()

    def test_recorded_at_strictly_increases_without_pauses(self):
        c = self.client
        written = [self.call_ok(c, "remember", {"category": "fast", "key": "k",
                                                "body": {"n": i}}) for i in range(8)]
        recorded = [w["recorded_at"] for w in written]
        self.assertEqual(recorded, sorted(set(recorded)), "recorded_at must strictly increase")
        # Every belief interval has non-zero width: as_of each instant sees that version.
        for i, t in enumerate(recorded):
            r = self.call_ok(c, "as_of", {"category": "fast", "key": "k", "as_of": t})
            self.assertEqual(r["body"], {"n": i})
            self.assertEqual(r["version"], i + 1)
        history = self.call_ok(c, "history", {"category": "fast", "key": "k"})
        for newer, older in zip(history["versions"], history["versions"][1:]):
            self.assertEqual(older["superseded_at"], newer["recorded_at"])
        self.assertIsNone(history["versions"][0]["superseded_at"])

    def test_forget_ends_belief_in_the_whole_identity(self):
        c = self.client
        base = now_ms()
        self.call_ok(c, "remember", {"category": "f", "key": "k", "body": "long ago",
                                     "valid_from": base - 100 * DAY_MS})
        pause()
        self.call_ok(c, "forget", {"category": "f", "key": "k"})
        pause()
        self.call_ok(c, "remember", {"category": "f", "key": "k", "body": "recent",
                                     "valid_from": base - 10 * DAY_MS})
        # The old version's validity is not believed any more after the forget.
        r = self.call_ok(c, "valid_at", {"category": "f", "key": "k",
                                         "valid_at": base - 50 * DAY_MS})
        self.assertIs(r["found"], False)
        r = self.call_ok(c, "valid_at", {"category": "f", "key": "k",
                                         "valid_at": base - 5 * DAY_MS})
        self.assertEqual(r["body"], "recent")

    def test_new_version_does_not_inherit_valid_period(self):
        c = self.client
        base = now_ms()
        self.call_ok(c, "remember", {"category": "v", "key": "k", "body": "first",
                                     "valid_from": base - 50 * DAY_MS,
                                     "valid_to": base + 50 * DAY_MS})
        pause()
        second = self.call_ok(c, "remember", {"category": "v", "key": "k", "body": "second"})
        self.assertIsNone(second["valid_to"])
        self.assertEqual(second["valid_from"], second["recorded_at"])
        r = self.call_ok(c, "valid_at", {"category": "v", "key": "k",
                                         "valid_at": base + 100 * DAY_MS})
        self.assertEqual(r["body"], "second")
        r = self.call_ok(c, "valid_at", {"category": "v", "key": "k",
                                         "valid_at": base - 10 * DAY_MS})
        self.assertEqual(r["body"], "first")

    def test_get_by_id_after_forget(self):
        c = self.client
        w = self.call_ok(c, "remember", {"category": "g", "key": "k", "body": "soon gone"})
        self.assertIs(self.call_ok(c, "get", {"id": w["id"]})["found"], True)
        self.call_ok(c, "forget", {"category": "g", "key": "k"})
        self.assertIs(self.call_ok(c, "get", {"id": w["id"]})["found"], False)

    def test_purge_erases_every_version(self):
        c = self.client
        first = self.call_ok(c, "remember", {"category": "p", "key": "k",
                                             "body": {"text": "secret token one"}})
        pause()
        self.call_ok(c, "remember", {"category": "p", "key": "k",
                                     "body": {"text": "secret token two"}})
        self.call_ok(c, "remember", {"category": "p", "key": "other", "dedup": False,
                                     "body": {"text": "unrelated secret"}})
        r = self.call_ok(c, "purge", {"category": "p", "key": "k"})
        self.assertIs(r["found"], True)
        self.assertEqual(r["purged_versions"], 2)
        h = self.call_ok(c, "history", {"category": "p", "key": "k"})
        self.assertEqual((h["total"], h["versions"]), (0, []))
        self.assertIs(self.call_ok(c, "as_of", {"category": "p", "key": "k",
                                                "as_of": first["recorded_at"]})["found"], False)
        for args in ({"query": "token"}, {"query": "token", "as_of": first["recorded_at"]}):
            keys = [i["key"] for i in self.call_ok(c, "recall", args)["items"]]
            self.assertNotIn("k", keys)
        self.assertEqual([i["key"] for i in self.call_ok(c, "recall",
                                                           {"query": "secret"})["items"]],
                         ["other"])
        self.assertIs(self.call_ok(c, "purge", {"category": "p", "key": "k"})["found"], False)
        stats = self.call_ok(c, "stats", {})
        self.assertEqual((stats["total_memories"], stats["versions"]), (1, 1))

    def test_remember_batch(self):
        c = self.client
        self.call_ok(c, "remember", {"category": "b", "key": "existing", "body": "old"})
        r = self.call_ok(c, "remember_batch", {"items": [
            {"category": "b", "key": "one", "body": {"text": "batch one"}, "dedup": False},
            {"category": "b", "key": "two", "body": {"text": "batch two"}, "tags": ["t"],
             "dedup": False},
            {"category": "b", "key": "existing", "body": "new"},
            {"category": "b", "key": "one", "body": {"text": "batch one"}},
        ]})
        self.assertIs(r["ok"], True)
        self.assertEqual((r["created"], r["updated"], r["unchanged"], r["failed"]), (2, 1, 1, 0))
        self.assertEqual([x["action"] for x in r["results"]],
                         ["created", "created", "updated", "unchanged"])
        self.assertEqual(sorted(i["key"] for i in self.call_ok(
            c, "recall", {"query": "batch", "mode": "fts5"})["items"]), ["one", "two"])
        self.assertEqual(self.call_ok(c, "get", {"category": "b", "key": "existing"})["body"],
                         "new")


class Dedup(StrataTestCase):
    """A new identity whose body nearly duplicates a memory and adds nothing to it is merged
    into it; one that adds a word, a number or a value is written and names what it
    resembles (docs/design.md §4). Both name sets."""

    TEXT = "the deploy script lives in tools/deploy.sh and needs bash 5 or newer"

    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.first = self.call_ok(self.client, "remember", {
            "category": "ops", "key": "deploy", "body": {"text": self.TEXT}})
        self.assertEqual(self.first["action"], "created")

    def test_near_duplicate_is_merged_and_aliased(self):
        c = self.client
        r = self.call_ok(c, "remember", {"category": "ops", "key": "deploy-script",
                                         "body": {"text": self.TEXT + "!"}})
        self.assertEqual(r["action"], "deduped")
        self.assertEqual((r["merged_into"]["id"], r["merged_into"]["category"],
                          r["merged_into"]["key"]), (self.first["id"], "ops", "deploy"))
        self.assertGreaterEqual(r["similarity"], 0.7)
        self.assertLessEqual(r["similarity"], 1.0)
        # Reading by the new key finds the merged memory.
        got = self.call_ok(c, "get", {"category": "ops", "key": "deploy-script"})
        self.assertIs(got["found"], True)
        self.assertEqual(got["id"], self.first["id"])
        self.assertEqual(got["body"], {"text": self.TEXT})
        # Still one memory.
        self.assertEqual(self.call_ok(c, "stats", {})["total_memories"], 1)
        items = self.call_ok(c, "recall", {"query": "deploy script"})["items"]
        self.assertEqual([i["id"] for i in items], [self.first["id"]])

    def test_exact_duplicate_under_a_new_key(self):
        r = self.call_ok(self.client, "remember", {"category": "ops", "key": "copy",
                                                   "body": {"text": self.TEXT}})
        self.assertEqual(r["action"], "deduped")
        self.assertEqual(r["merged_into"]["id"], self.first["id"])

    def test_scope_and_opt_out(self):
        c = self.client
        cases = [
            ({"category": "other", "key": "deploy"}, "another category"),
            ({"category": "ops", "key": "deploy", "workspace": "proj"}, "another workspace"),
            ({"category": "ops", "key": "kept", "dedup": False}, "dedup false"),
            ({"category": "ops", "key": "unrelated", "body": {"text": "lunch is at noon"}},
             "a different body"),
        ]
        for args, why in cases:
            with self.subTest(why=why):
                r = self.call_ok(c, "remember", dict({"body": {"text": self.TEXT}}, **args))
                self.assertEqual(r["action"], "created", why)
                self.assertNotEqual(r["id"], self.first["id"])

    def remember(self, perseus, category, key, body):
        """remember under the canonical or the Perseus Vault names; the result object."""
        if perseus:
            return self.call_ok(self.client, "perseus_vault_remember", {
                "category": category, "key": key, "body_json": json.dumps(body)})
        return self.call_ok(self.client, "remember",
                            {"category": category, "key": key, "body": body})

    def get(self, perseus, category, key):
        if perseus:
            r = self.call_ok(self.client, "perseus_vault_as_of", {
                "category": category, "key": key, "as_of_unix_ms": 2 ** 53})
            return json.loads(r["body_json"]) if r["found"] else None
        r = self.call_ok(self.client, "get", {"category": category, "key": key})
        return r["body"] if r["found"] else None

    def test_the_same_attribute_under_two_subjects_stays_two_memories(self):
        for perseus in (False, True):
            with self.subTest(perseus=perseus):
                cat = "hr-pv" if perseus else "hr"
                alice = self.remember(perseus, cat, "alice", {"title": "senior engineer"})
                bob = self.remember(perseus, cat, "bob", {"title": "senior engineer"})
                self.assertEqual(bob["action"], "created", bob)
                self.assertNotEqual(bob["id"], alice["id"])
                self.assertEqual([(m["key"], m["similarity"]) for m in bob["similar"]],
                                 [("alice", 1.0)])
                promoted = self.remember(perseus, cat, "alice", {"title": "staff engineer"})
                self.assertEqual(promoted["action"], "updated")
                self.assertEqual(self.get(perseus, cat, "bob"), {"title": "senior engineer"})
                self.assertEqual(self.get(perseus, cat, "alice"), {"title": "staff engineer"})

    def test_a_one_word_correction_under_a_new_key_is_written_and_names_the_old(self):
        old = "Maria leads the storage team and prefers Go for new services"
        new = "Maria leads the storage team and prefers Rust for new services"
        for perseus in (False, True):
            with self.subTest(perseus=perseus):
                cat = "people-pv" if perseus else "people"
                first = self.remember(perseus, cat, "maria-lang", {"text": old})
                r = self.remember(perseus, cat, "maria-lang-2", {"text": new})
                self.assertEqual((r["action"], r["deduped"]), ("created", False), r)
                self.assertNotIn("merged_into", r)
                self.assertEqual(len(r["similar"]), 1, r)
                self.assertEqual((r["similar"][0]["id"], r["similar"][0]["key"]),
                                 (first["id"], "maria-lang"))
                self.assertGreaterEqual(r["similar"][0]["similarity"], 0.7)
                self.assertEqual(self.get(perseus, cat, "maria-lang-2"), {"text": new})
                tool = "perseus_vault_recall" if perseus else "recall"
                items = self.call_ok(self.client, tool, {"query": "Rust", "mode": "fts5",
                                                         "category": cat})["items"]
                self.assertEqual([i["key"] for i in items], ["maria-lang-2"])

    def test_a_reworded_restore_with_no_new_content_word_is_merged(self):
        # Filler words added ("really", "also"), punctuation changed, a word dropped.
        reworded = ("The deploy script really lives in tools/deploy.sh, and also needs "
                    "bash 5 or newer.")
        for perseus in (False, True):
            with self.subTest(perseus=perseus):
                r = self.remember(perseus, "ops", "deploy-copy-%s" % perseus,
                                  {"text": reworded})
                self.assertEqual((r["action"], r["deduped"]), ("deduped", True), r)
                self.assertEqual(r["merged_into"]["id"], self.first["id"])
                self.assertEqual(self.get(perseus, "ops", "deploy-copy-%s" % perseus),
                                 {"text": self.TEXT})

    def test_a_changed_number_or_identifier_is_written(self):
        for changed in (self.TEXT.replace("bash 5", "bash 4"),
                        self.TEXT.replace("tools/deploy.sh", "tools/deploy2.sh")):
            with self.subTest(changed=changed):
                r = self.remember(False, "ops", "deploy-%d" % len(changed), {"text": changed})
                self.assertEqual(r["action"], "created", r)
                self.assertIn("deploy", [m["key"] for m in r["similar"]])

    def test_perseus_vault_fields(self):
        pv = json.dumps({"text": self.TEXT + "?"})
        structured, is_error, raw = self.client.call_tool(
            "perseus_vault_remember", {"category": "ops", "key": "pv", "body_json": pv})
        self.assertIs(is_error, False)
        r = json.loads(raw["content"][0]["text"])
        self.assertEqual((r["ok"], r["action"], r["deduped"]), (True, "deduped", True))
        self.assertEqual(r["merged_into"]["id"], self.first["id"])
        for skip in (True, "true"):
            with self.subTest(skip_dedup=skip):
                r = self.call_ok(self.client, "perseus_vault_remember",
                                 {"category": "ops", "key": "pv-%s" % skip, "body_json": pv,
                                  "skip_dedup": skip})
                self.assertEqual(r["action"], "created")


class TwoProcesses(StrataTestCase):
    """Two servers on one database file see each other's writes (docs/design.md §6)."""

    def test_each_sees_the_others_writes(self):
        a = self.serve()
        b = self.serve()
        self.call_ok(a, "remember", {"category": "shared", "key": "from-a",
                                     "body": {"text": "written by process a"}})
        r = self.call_ok(b, "recall", {"query": "process"})
        self.assertEqual([i["key"] for i in r["items"]], ["from-a"])
        self.call_ok(b, "remember", {"category": "shared", "key": "from-a",
                                     "body": {"text": "rewritten by process b"}})
        got = self.call_ok(a, "get", {"category": "shared", "key": "from-a"})
        self.assertEqual(got["body"], {"text": "rewritten by process b"})
        self.assertEqual(got["version"], 2)
        for i in range(20):
            self.call_ok(a if i % 2 else b, "remember",
                         {"category": "shared", "key": "n%d" % i, "body": "interleaved %d" % i,
                          "dedup": False})
        self.assertEqual(self.call_ok(a, "stats", {})["total_memories"], 21)
        self.assertEqual(self.call_ok(b, "stats", {})["total_memories"], 21)
        self.assertEqual(a.close(), 0)
        self.assertEqual(b.close(), 0)


class RecallFiltersAtScale(StrataTestCase):
    """A selective filter never shrinks the result below limit (docs/design.md §5), even when
    hundreds of better-ranked memories fail it."""

    def test_selective_filters_fill_the_limit(self):
        c = self.serve()
        # Near-duplicate bodies on purpose: dedup off, every one is its own memory.
        items = [{"category": "noise", "key": "n%d" % i, "type": "chatter", "tags": ["loud"],
                  "dedup": False,
                  "workspace": "w-noise", "body": {"text": "alpha alpha alpha beta %d" % i}}
                 for i in range(600)]
        items += [{"category": "target", "key": "t%d" % i, "type": "fact", "tags": ["quiet"],
                   "dedup": False,
                   "workspace": "w-target",
                   "body": {"text": "a longer text that mentions alpha once among others %d" % i}}
                  for i in range(12)]
        r = self.call_ok(c, "remember_batch", {"items": items})
        self.assertEqual((r["created"], r["failed"]), (612, 0))
        t = now_ms() + 1000
        for extra in ({"category": "target"}, {"type": "fact"}, {"tags": ["quiet"]},
                      {"workspace": "w-target"}, {"category": "target", "as_of": t},
                      {"category": "target", "valid_at": t}):
            with self.subTest(filters=extra):
                args = dict({"query": "alpha", "limit": 10}, **extra)
                got = self.call_ok(c, "recall", args)["items"]
                self.assertEqual(len(got), 10)
                self.assertEqual({i["category"] for i in got}, {"target"})
        got = self.call_ok(c, "recall", {"query": "alpha", "limit": 20,
                                         "category": "target"})["items"]
        self.assertEqual(len(got), 12)


class TimeFormats(StrataTestCase):
    """Integers, numeric strings and ISO-8601 strings name the same instants (docs/design.md §3)."""

    FROM = "2026-03-01T12:00:00Z"
    TO = "2026-03-02"

    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.t_from = iso_ms(self.FROM)
        self.t_to = iso_ms(self.TO + "T00:00:00+00:00")

    def test_remember_accepts_each_format(self):
        c = self.client
        forms = {
            "iso": (self.FROM, self.TO),
            "int": (self.t_from, self.t_to),
            "numeric-string": (str(self.t_from), str(self.t_to)),
            "offset": ("2026-03-01T14:00:00+02:00", "2026-03-01T19:00:00-05:00"),
            "fraction": ("2026-03-01T12:00:00.000Z", "2026-03-02T00:00:00Z"),
        }
        for name, (vf, vt) in forms.items():
            with self.subTest(form=name):
                r = self.call_ok(c, "remember", {"category": "tf", "key": name,
                                                 "body": "when " + name, "dedup": False,
                                                 "valid_from": vf, "valid_to": vt})
                self.assertEqual(r["valid_from"], self.t_from)
                self.assertEqual(r["valid_to"], self.t_to)

    def test_queries_accept_each_format(self):
        c = self.client
        self.call_ok(c, "remember", {"category": "tf", "key": "k", "body": "march first",
                                     "valid_from": self.FROM, "valid_to": self.TO})
        inside = self.t_from + 3600 * 1000  # 13:00Z
        same_instant = [inside, str(inside), "2026-03-01T13:00:00Z",
                        "2026-03-01T15:00:00+02:00", "2026-03-01T08:00:00-05:00",
                        "2026-03-01T13:00:00.000Z"]
        answers = []
        for form in same_instant:
            with self.subTest(valid_at=form):
                r = self.call_ok(c, "valid_at", {"category": "tf", "key": "k", "valid_at": form})
                self.assertIs(r["found"], True)
                self.assertEqual(r["valid_at"], inside)
                answers.append(r)
        self.assertTrue(all(a == answers[0] for a in answers), "the answers differ")

        outside = [self.t_from - 1, str(self.t_from - 1), "2026-03-01T11:59:59.999Z",
                   "2026-03-02", self.t_to, "2026-03-01T19:00:00-05:00"]
        for form in outside:
            with self.subTest(valid_at=form):
                r = self.call_ok(c, "valid_at", {"category": "tf", "key": "k", "valid_at": form})
                self.assertIs(r["found"], False)

        # Transaction time: nothing was believed in 2000, the current version is by 2100.
        for form in ["2000-01-01", "946684800000", 946684800000]:
            with self.subTest(as_of=form):
                r = self.call_ok(c, "as_of", {"category": "tf", "key": "k", "as_of": form})
                self.assertIs(r["found"], False)
                self.assertEqual(r["as_of"], 946684800000)
        for form in ["2100-01-01T00:00:00Z", "4102444800000", 4102444800000]:
            with self.subTest(as_of=form):
                r = self.call_ok(c, "as_of", {"category": "tf", "key": "k", "as_of": form})
                self.assertIs(r["found"], True)
                self.assertEqual(r["as_of"], 4102444800000)
        r = self.call_ok(c, "bitemporal", {"category": "tf", "key": "k",
                                           "tx_at": "2100-01-01T00:00:00Z",
                                           "valid_at": "2026-03-01T13:00:00+00:00"})
        self.assertIs(r["found"], True)
        self.assertEqual((r["tx_at"], r["valid_at"]), (4102444800000, inside))

    def test_recall_time_filters_accept_each_format(self):
        c = self.client
        self.call_ok(c, "remember", {"category": "tf", "key": "k", "body": "march first",
                                     "valid_from": self.FROM, "valid_to": self.TO})
        inside = self.t_from + 3600 * 1000
        for form in [inside, str(inside), "2026-03-01T13:00:00Z", "2026-03-01T15:00:00+02:00"]:
            with self.subTest(valid_at=form):
                r = self.call_ok(c, "recall", {"query": "march", "valid_at": form})
                self.assertEqual([i["key"] for i in r["items"]], ["k"])
        for form in ["2026-03-03", str(self.t_to)]:
            with self.subTest(valid_at=form):
                r = self.call_ok(c, "recall", {"query": "march", "valid_at": form})
                self.assertEqual(r["items"], [])


class RecallKeyword(StrataTestCase):
    """Keyword recall, the default mode without an embedder. (With one, auto turns hybrid once
    the background worker has embedded the memories; test_embed.py covers that.)"""

    MEMORIES = [
        {"category": "pref", "key": "editor", "type": "preference", "tags": ["tools", "editor"],
         "body": {"text": "I edit everything in neovim with a dark theme"}},
        {"category": "pref", "key": "shell", "type": "preference", "tags": ["tools"],
         "body": {"text": "zsh with neovim keybindings enabled"}},
        {"category": "decision", "key": "storage", "type": "decision", "tags": ["arch"],
         "workspace": "proj-a", "body": {"text": "the neovim plugin stores notes in sqlite"}},
        {"category": "pref", "key": "font", "type": "preference", "tags": ["looks"],
         "body": {"text": "fira code at 14 points"}},
    ]

    def setUp(self):
        super().setUp()
        self.client = self.serve("--embedder", "none")
        self.written = [self.call_ok(self.client, "remember", m) for m in self.MEMORIES]

    def keys(self, **args):
        r = self.call_ok(self.client, "recall", args)
        self.assertIsInstance(r["total"], int)
        self.assertGreaterEqual(r["total"], len(r["items"]))
        return sorted(i["key"] for i in r["items"])

    def test_items_shape(self):
        r = self.call_ok(self.client, "recall", {"query": "neovim", "mode": "fts5"})
        self.assertEqual(r["mode"], "fts5")
        self.assertEqual(len(r["items"]), 3)
        for item in r["items"]:
            for field in ("id", "category", "key", "body_json", "body", "type", "tags",
                          "score", "valid_from", "valid_to", "recorded_at", "version"):
                self.assertIn(field, item)
            self.assertIsInstance(item["body_json"], str)
            self.assertEqual(json.loads(item["body_json"]), item["body"])
        scores = [i["score"] for i in r["items"]]
        self.assertEqual(scores, sorted(scores, reverse=True), "best first")

    def test_default_mode_finds_by_keyword(self):
        self.assertEqual(self.call_ok(self.client, "recall", {"query": "neovim"})["mode"], "fts5")
        self.assertEqual(self.keys(query="neovim"), ["editor", "shell", "storage"])
        self.assertEqual(self.keys(query="fira"), ["font"])
        # Stemming: "stored" finds "stores"; keys and categories are searchable.
        self.assertEqual(self.keys(query="stored"), ["storage"])
        self.assertIn("font", self.keys(query="font"))

    def test_filters(self):
        self.assertEqual(self.keys(query="neovim", category="pref"), ["editor", "shell"])
        self.assertEqual(self.keys(query="neovim", type="decision"), ["storage"])
        self.assertEqual(self.keys(query="neovim", tags=["tools"]), ["editor", "shell"])
        self.assertEqual(self.keys(query="neovim", tags=["tools", "editor"]), ["editor"])
        self.assertEqual(self.keys(query="neovim", workspace="proj-a"), ["storage"])
        self.assertEqual(self.keys(query="neovim", workspace=""), ["editor", "shell"])
        self.assertEqual(self.keys(query="neovim", category="nope"), [])
        self.assertEqual(self.keys(query="neovim", mode="fts5", category="pref",
                                   tags=["editor"]), ["editor"])

    def test_limit_and_offset(self):
        r = self.call_ok(self.client, "recall", {"query": "neovim", "limit": 1})
        self.assertEqual(len(r["items"]), 1)
        # A filter never shrinks the result below limit when enough matches exist.
        r = self.call_ok(self.client, "recall", {"query": "neovim", "limit": 2,
                                                 "category": "pref"})
        self.assertEqual(len(r["items"]), 2)
        full = self.call_ok(self.client, "recall", {"query": "neovim", "limit": 3})["items"]
        second = self.call_ok(self.client, "recall",
                              {"query": "neovim", "limit": 1, "offset": 1})["items"]
        self.assertEqual([i["id"] for i in second], [full[1]["id"]])

    def test_deterministic(self):
        a = self.client.call_tool("recall", {"query": "neovim theme sqlite"})
        b = self.client.call_tool("recall", {"query": "neovim theme sqlite"})
        self.assertEqual(a[2]["content"][0]["text"], b[2]["content"][0]["text"])

    def test_recall_as_of(self):
        c = self.client
        t_before_update = self.written[-1]["recorded_at"]
        pause()
        self.call_ok(c, "remember", {"category": "pref", "key": "editor", "type": "preference",
                                     "tags": ["tools", "editor"],
                                     "body": {"text": "I switched to helix"}})
        pause()
        self.call_ok(c, "forget", {"category": "pref", "key": "shell"})
        # Now: editor is about helix; shell is forgotten.
        self.assertEqual(self.keys(query="neovim"), ["storage"])
        self.assertEqual(self.keys(query="helix"), ["editor"])
        # As of before the update: the old beliefs, with their old versions.
        r = self.call_ok(c, "recall", {"query": "neovim", "as_of": t_before_update})
        self.assertEqual(sorted(i["key"] for i in r["items"]), ["editor", "shell", "storage"])
        editor = [i for i in r["items"] if i["key"] == "editor"][0]
        self.assertEqual(editor["version"], 1)
        self.assertIn("neovim", editor["body"]["text"])
        self.assertEqual(self.keys(query="helix", as_of=t_before_update), [])
        # With filters too.
        self.assertEqual(self.keys(query="neovim", as_of=t_before_update, category="pref"),
                         ["editor", "shell"])
        self.assertEqual(self.keys(query="neovim", as_of=t_before_update, tags=["editor"]),
                         ["editor"])
        # Before anything was written: nothing.
        self.assertEqual(self.keys(query="neovim", as_of=self.written[0]["recorded_at"] - 1), [])

    def test_recall_valid_at(self):
        c = self.client
        base = now_ms()
        self.call_ok(c, "remember", {"category": "trip", "key": "city",
                                     "body": {"text": "travelling in kyoto"},
                                     "valid_from": base - 10 * DAY_MS,
                                     "valid_to": base - 5 * DAY_MS})
        self.assertEqual(self.keys(query="kyoto", valid_at=base - 7 * DAY_MS), ["city"])
        self.assertEqual(self.keys(query="kyoto", valid_at=base), [])

    def test_recall_is_a_pure_read(self):
        first = self.call_ok(self.client, "recall", {"query": "neovim"})
        for _ in range(3):
            self.call_ok(self.client, "recall", {"query": "neovim dark"})
        self.assertEqual(self.call_ok(self.client, "recall", {"query": "neovim"}), first)


if __name__ == "__main__":
    mcp_client.run_tests()
