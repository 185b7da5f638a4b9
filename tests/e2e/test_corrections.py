"""Explicit corrections through MCP: `remember` with `supersedes`, under the
canonical tool names and under perseus_vault_remember (docs/compat.md argument names). The
superseded memory's valid period ends where its successor's begins, recall stops returning
it in every mode, both histories name each other, as_of before the correction answers as it
did, and a correction naming a missing memory fails and writes nothing (alone in a batch).

Run: python3 tests/e2e/test_corrections.py <path-to-strata-binary>
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase, days, schema_problems  # noqa: E402

GO = "Maria leads the storage team and prefers Go for new services"
RUST = "Maria leads the storage team and prefers Rust for new services"


def pause():
    """Lets the wall clock move a few ms, so that recorded_at instants are distinct."""
    time.sleep(0.005)


class Corrections(StrataTestCase):
    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.base = mcp_client.now_ms()

    def day(self, offset):
        return days(offset, self.base)

    def keys(self, **args):
        args.setdefault("query", "Maria storage team")
        return [i["key"] for i in self.call_ok(self.client, "recall", args)["items"]]

    def remember(self, key, text, valid_from, **extra):
        args = {"category": "people", "key": key, "body": {"text": text},
                "valid_from": valid_from}
        args.update(extra)
        return self.call_ok(self.client, "remember", args)

    def correct(self):
        """maria-go true from -100 days; then maria-rust from -10 days, superseding it."""
        go = self.remember("maria-go", GO, self.day(-100))
        pause()
        before = mcp_client.now_ms()
        pause()
        rust = self.remember("maria-rust", RUST, self.day(-10),
                             supersedes={"category": "people", "key": "maria-go"})
        return go, before, rust

    def test_result_names_the_superseded_memory_and_fits_the_output_schema(self):
        go, _, rust = self.correct()
        self.assertEqual(rust["action"], "created")
        self.assertEqual(rust["supersedes"], {"id": go["id"], "category": "people",
                                              "key": "maria-go", "workspace": ""})
        tools = {t["name"]: t for t in self.client.list_tools()}
        self.assertEqual(schema_problems(tools["remember"]["outputSchema"], rust), [])
        prop = tools["remember"]["inputSchema"]["properties"]["supersedes"]
        self.assertEqual(prop["type"], "object")
        self.assertEqual(sorted(prop["properties"]), ["category", "key", "workspace"])
        self.assertEqual(sorted(prop["required"]), ["category", "key"])
        self.assertIn("supersedes", tools["remember_batch"]["inputSchema"]["properties"]
                      ["items"]["items"]["properties"])

    def test_valid_at_before_and_after_the_successors_valid_from(self):
        self.correct()
        c = self.client
        then = self.call_ok(c, "valid_at", {"category": "people", "key": "maria-go",
                                            "valid_at": self.day(-50)})
        self.assertIs(then["found"], True)
        self.assertEqual(then["body"]["text"], GO)
        self.assertIs(self.call_ok(c, "valid_at", {"category": "people", "key": "maria-go",
                                                   "valid_at": self.day(-5)})["found"], False)
        current = self.call_ok(c, "get", {"category": "people", "key": "maria-go"})
        self.assertEqual(current["valid_to"], self.day(-10))

    def test_recall_now_returns_the_successor_only_in_every_mode(self):
        self.correct()
        self.call_ok(self.client, "embed", {"limit": 100})
        self.assertEqual(self.keys(), ["maria-rust"])
        for mode in ("fts5", "dense", "hybrid"):
            self.assertEqual(self.keys(query="Maria prefers Go", mode=mode), ["maria-rust"],
                             mode)
            self.assertEqual(self.keys(query="Maria prefers Go", mode=mode,
                                       valid_at=self.day(-50)), ["maria-go"], mode)

    def test_as_of_before_the_correction_answers_as_it_did(self):
        _, before, _ = self.correct()
        then = self.call_ok(self.client, "as_of", {"category": "people", "key": "maria-go",
                                                   "as_of": before})
        self.assertIs(then["found"], True)
        self.assertIsNone(then["valid_to"])
        self.assertEqual(self.keys(as_of=before), ["maria-go"])

    def test_histories_name_each_other(self):
        go, _, rust = self.correct()
        c = self.client
        old = self.call_ok(c, "history", {"category": "people", "key": "maria-go"})
        self.assertEqual(old["total"], 2)
        self.assertEqual([(s["id"], s["key"]) for s in old["successors"]],
                         [(rust["id"], "maria-rust")])
        self.assertEqual(old["successors"][0]["at"], rust["recorded_at"])
        self.assertEqual(old["predecessors"], [])
        new = self.call_ok(c, "history", {"category": "people", "key": "maria-rust"})
        self.assertEqual([(p["id"], p["key"], p["workspace"]) for p in new["predecessors"]],
                         [(go["id"], "maria-go", "")])
        tools = {t["name"]: t for t in c.list_tools()}
        self.assertEqual(schema_problems(tools["history"]["outputSchema"], old), [])

    def test_missing_target_is_an_error_and_writes_nothing(self):
        c = self.client
        self.call_error(c, "remember",
                        {"category": "people", "key": "maria-rust", "body": {"text": RUST},
                         "supersedes": {"category": "people", "key": "nobody"}},
                        'supersedes: no memory with category "people" and key "nobody"')
        self.assertIs(self.call_ok(c, "get", {"category": "people",
                                              "key": "maria-rust"})["found"], False)
        self.call_error(c, "remember",
                        {"category": "people", "key": "maria-rust", "body": {"text": RUST},
                         "supersedes": "people/nobody"}, "supersedes", "object")
        self.assertEqual(self.call_ok(c, "stats", {})["versions"], 0)

    def test_missing_target_fails_alone_in_a_batch(self):
        self.remember("maria-go", GO, self.day(-100))
        pause()
        out = self.call_ok(self.client, "remember_batch", {"items": [
            {"category": "people", "key": "a", "body": "first"},
            {"category": "people", "key": "b", "body": "second",
             "supersedes": {"category": "people", "key": "nobody"}},
            {"category": "people", "key": "maria-rust", "body": {"text": RUST},
             "valid_from": self.day(-10),
             "supersedes": {"category": "people", "key": "maria-go"}},
        ]})
        self.assertEqual((out["created"], out["failed"]), (2, 1))
        self.assertIs(out["results"][1]["ok"], False)
        self.assertIn("no memory", out["results"][1]["error"])
        self.assertEqual(out["results"][2]["supersedes"]["key"], "maria-go")
        self.assertIs(self.call_ok(self.client, "get", {"category": "people",
                                                        "key": "b"})["found"], False)
        self.assertEqual(self.keys(), ["maria-rust"])

    def test_forgotten_target_is_an_error(self):
        self.remember("maria-go", GO, self.day(-100))
        self.call_ok(self.client, "forget", {"category": "people", "key": "maria-go"})
        self.call_error(self.client, "remember",
                        {"category": "people", "key": "maria-rust", "body": {"text": RUST},
                         "supersedes": {"category": "people", "key": "maria-go"}},
                        "supersedes", "forgotten")


class PerseusCorrections(StrataTestCase):
    """perseus_vault_remember with body_json, valid_from_unix_ms and workspace_hash; results
    read as Perseus Vault clients do, from content[0].text."""

    def call(self, tool, args):
        structured, is_error, raw = self.client.call_tool(tool, args)
        self.assertIs(is_error, False, "%s(%r): %r" % (tool, args, raw))
        text_obj = json.loads(raw["content"][0]["text"])
        self.assertEqual(text_obj, structured)
        return text_obj

    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.base = mcp_client.now_ms()

    def remember(self, key, text, valid_from, **extra):
        args = {"category": "people", "key": key, "workspace_hash": "ws1",
                "body_json": json.dumps({"text": text}), "valid_from_unix_ms": valid_from}
        args.update(extra)
        return self.call("perseus_vault_remember", args)

    def test_supersedes_in_the_workspace_of_the_write(self):
        go = self.remember("maria-go", GO, days(-100, self.base))
        pause()
        before = mcp_client.now_ms()
        pause()
        rust = self.remember("maria-rust", RUST, days(-10, self.base),
                             supersedes={"category": "people", "key": "maria-go"})
        self.assertEqual(rust["supersedes"], {"id": go["id"], "category": "people",
                                              "key": "maria-go", "workspace": "ws1"})
        lookup = {"category": "people", "key": "maria-go", "workspace_hash": "ws1"}
        then = self.call("perseus_vault_valid_at",
                         dict(lookup, valid_at_unix_ms=days(-50, self.base)))
        self.assertIs(then["found"], True)
        self.assertEqual(json.loads(then["body_json"])["text"], GO)
        self.assertIs(self.call("perseus_vault_valid_at",
                                dict(lookup, valid_at_unix_ms=days(-5, self.base)))["found"],
                      False)
        self.assertIs(self.call("perseus_vault_as_of",
                                dict(lookup, as_of_unix_ms=before))["found"], True)
        items = self.call("perseus_vault_recall", {"query": "Maria storage team",
                                                   "workspace_hash": "ws1"})["items"]
        self.assertEqual([i["key"] for i in items], ["maria-rust"])
        history = self.call("perseus_vault_history", lookup)
        self.assertEqual([s["key"] for s in history["successors"]], ["maria-rust"])
        history = self.call("perseus_vault_history",
                            {"category": "people", "key": "maria-rust", "workspace_hash": "ws1"})
        self.assertEqual([p["key"] for p in history["predecessors"]], ["maria-go"])

    def test_missing_target_is_an_error(self):
        structured, is_error, raw = self.client.call_tool("perseus_vault_remember", {
            "category": "people", "key": "maria-rust", "body_json": json.dumps({"text": RUST}),
            "supersedes": {"category": "people", "key": "nobody"}})
        self.assertIs(is_error, True, raw)
        self.assertIn("no memory", mcp_client.error_text(raw))
        self.assertIs(self.call("perseus_vault_get_entity",
                                {"category": "people", "key": "maria-rust"})["found"], False)


if __name__ == "__main__":
    mcp_client.run_tests()
