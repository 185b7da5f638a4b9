"""recall's `fields` and `max_chars` over the real binary (docs/design.md §5, "Items"): the
canonical name returns only the fields asked for (and `id`), cuts a long body to a snippet
around the matched word, refuses a bad field or an out-of-range max_chars, and answers
smaller; `perseus_vault_recall` neither lists nor reads them (docs/compat.md), so its answer
is the same with or without them.

Run: python3 tests/e2e/test_recall_shape.py <path-to-strata-binary>
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase  # noqa: E402

# 300 accented letters, the word, 300 more: 612 code points in 1212 bytes.
LONG_TEXT = "é" * 300 + " kubernetes " + "ü" * 300
SHORT_TEXT = "vim with many plugins, and kubernetes for the lab"


class RecallShapeTest(StrataTestCase):

    def setUp(self):
        super().setUp()
        # Keyword recall only: no background embedding changes the mode between calls.
        self.client = self.serve("--embedder", "none")
        self.call_ok(self.client, "remember",
                     {"category": "note", "key": "long", "body": {"text": LONG_TEXT}})
        self.call_ok(self.client, "remember",
                     {"category": "note", "key": "short", "body": SHORT_TEXT})

    def recall_line(self, name, arguments):
        """The raw response line and its parsed result."""
        message = {"jsonrpc": "2.0", "id": self.client.new_id(), "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}}
        self.client.send(message)
        line = self.client.read_line()
        response = json.loads(line)
        self.assertIn("result", response, line[:300])
        self.assertFalse(response["result"].get("isError"), line[:300])
        return line, response["result"]

    def items_by_key(self, result):
        return {item["key"]: item for item in result["structuredContent"]["items"]}

    def test_fields_and_max_chars_shape_the_canonical_answer(self):
        tools = {tool["name"]: tool for tool in self.client.list_tools()}
        self.assertIn("fields", tools["recall"]["inputSchema"]["properties"])
        self.assertIn("max_chars", tools["recall"]["inputSchema"]["properties"])
        default_line, _ = self.recall_line("recall", {"query": "kubernetes"})
        line, result = self.recall_line(
            "recall", {"query": "kubernetes", "fields": ["key", "body"], "max_chars": 100})
        # The text content still repeats structuredContent.
        self.assertEqual(json.loads(result["content"][0]["text"]), result["structuredContent"])
        self.assertEqual(mcp_client.schema_problems(tools["recall"]["outputSchema"],
                                                    result["structuredContent"]), [])
        items = self.items_by_key(result)
        self.assertEqual(set(items), {"long", "short"})
        cut = items["long"]
        self.assertEqual(set(cut), {"id", "key", "snippet", "cut", "body_chars"})
        self.assertIs(cut["cut"], True)
        self.assertEqual(cut["body_chars"], 612)
        self.assertEqual(len(cut["snippet"]), 100)  # Python counts code points.
        self.assertIn("kubernetes", cut["snippet"])
        self.assertEqual(items["short"], {"id": items["short"]["id"], "key": "short",
                                          "body": SHORT_TEXT})
        self.assertLess(len(line), len(default_line) / 3)
        # get by id returns the cut body whole.
        whole = self.call_ok(self.client, "get", {"id": cut["id"]})
        self.assertEqual(whole["body"], {"text": LONG_TEXT})

    def test_bad_arguments_are_refused_naming_them(self):
        text = self.call_error(self.client, "recall",
                               {"query": "kubernetes", "fields": ["key", "bdy"]},
                               "fields", "body_json", "bdy")
        self.assertIn("score", text)
        self.call_error(self.client, "recall", {"query": "kubernetes", "max_chars": 39},
                        "max_chars", "between 40 and 100000", "39")
        self.call_error(self.client, "recall", {"query": "kubernetes", "max_chars": 100001},
                        "max_chars", "100001")
        self.assertAlive(self.client)

    def test_perseus_recall_answers_the_same_without_them(self):
        listed = self.serve("--embedder", "none", "--compat", "perseus-vault", db=self.db)
        tools = {tool["name"]: tool for tool in listed.list_tools()}
        properties = tools["perseus_vault_recall"]["inputSchema"]["properties"]
        self.assertNotIn("fields", properties)
        self.assertNotIn("max_chars", properties)
        listed.close()

        _, plain = self.recall_line("perseus_vault_recall", {"query": "kubernetes"})
        _, asked = self.recall_line("perseus_vault_recall",
                                    {"query": "kubernetes", "fields": ["key"], "max_chars": 40})
        self.assertEqual(asked, plain)
        item = self.items_by_key(plain)["long"]
        self.assertEqual(item["body_json"], json.dumps({"text": LONG_TEXT}, ensure_ascii=False,
                                                       separators=(",", ":")))
        self.assertEqual(item["text"], LONG_TEXT)  # The body's fields, on the item.
        self.assertNotIn("snippet", item)
        self.assertNotIn("cut", item)


if __name__ == "__main__":
    mcp_client.run_tests()
