"""Bad input never kills the server and never corrupts the store (docs/design.md §7, §9).

Each test is one group of bad inputs against one server. After the group the server must
still answer ping and still find the memory written before it; then it must exit 0 on EOF and
the database file must pass `PRAGMA integrity_check`. Every tool error must name the argument.
With STRATA_TEST_STORE=postgresql (mcp_client.py) the store is a PostgreSQL database.

Run: python3 tests/e2e/test_bad_input.py <path-to-strata-binary>
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import DAY_MS, StrataTestCase, now_ms  # noqa: E402

MIB = 1 << 20


class BadInputCase(StrataTestCase):
    server_args = ()

    def setUp(self):
        super().setUp()
        self.client = self.serve(*self.server_args)
        self.canary = self.call_ok(self.client, "remember", {
            "category": "canary", "key": "bird",
            "body": {"text": "the yellow canary sings before bad input"}})

    def tearDown(self):
        try:
            if self.client.exit_code is None:
                self.assertAlive(self.client)
                r = self.call_ok(self.client, "recall", {"query": "yellow canary"})
                self.assertIn(self.canary["id"], [i["id"] for i in r["items"]])
                self.assertEqual(self.client.close(), 0)
            self.assertFileIntact()
        finally:
            super().tearDown()

    def expect_protocol_error(self, line, codes=(-32700, -32600)):
        """Sends a raw line; the answer must be a JSON-RPC error with a null id."""
        if isinstance(line, str):
            line = line.encode("utf-8")
        self.client.send_bytes(line + b"\n")
        response = self.client.read_message()
        self.assertIsInstance(response, dict, response)
        self.assertIn("error", response, response)
        self.assertIn(response["error"]["code"], codes, response)
        self.assertIsInstance(response["error"]["message"], str)
        self.assertTrue(response["error"]["message"])
        self.assertIn("id", response)
        self.assertIsNone(response["id"])
        self.assertNotIn("result", response)
        return response

    def total_memories(self):
        return self.call_ok(self.client, "stats", {})["total_memories"]


class InvalidJson(BadInputCase):

    def test_not_json(self):
        for line in ["not json", "{", "}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
                     "[1,", "{'single': 'quotes'}", "{\"a\":1}}", "NaN", "\x00", "\"\\x\""]:
            with self.subTest(line=line):
                r = self.expect_protocol_error(line, codes=(-32700,))
                self.assertIn("parse", r["error"]["message"].lower())
        self.assertAlive(self.client)

    def test_json_that_is_not_a_request(self):
        for line in ["42", "\"ping\"", "null", "true", "{}", "[[]]"]:
            with self.subTest(line=line):
                self.client.send(line)
                r = self.client.read_message()
                items = r if isinstance(r, list) else [r]
                for item in items:
                    self.assertEqual(item["error"]["code"], -32600)
                    self.assertIsNone(item["id"])
        self.assertAlive(self.client)

    def test_bad_ids_and_params(self):
        self.client.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"})
        r = self.client.read_message()
        self.assertEqual(r["error"]["code"], -32600)
        self.client.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 5})
        r = self.client.read_message()
        self.assertEqual(r["id"], 3)
        self.assertEqual(r["error"]["code"], -32602)
        self.client.send({"jsonrpc": "2.0", "id": 4, "method": 17})
        r = self.client.read_message()
        self.assertEqual(r["id"], 4)
        self.assertEqual(r["error"]["code"], -32600)


class WrongTypes(BadInputCase):

    def test_wrong_argument_types(self):
        c = self.client
        base = {"category": "c", "key": "k", "body": {"text": "x"}}
        cases = [
            ("remember", dict(base, category=42), "category"),
            ("remember", dict(base, key=["a"]), "key"),
            ("remember", dict(base, tags={"a": 1}), "tags"),
            ("remember", dict(base, tags=[1, 2]), "tags"),
            ("remember", dict(base, type=7), "type"),
            ("remember", dict(base, workspace=5), "workspace"),
            ("remember", dict(base, importance="high"), "importance"),
            ("remember", dict(base, dedup="maybe"), "dedup"),
            ("remember", dict(base, source={"x": 1}), "source"),
            ("remember", {"category": "c", "key": "k", "body_json": {"text": "x"}}, "body_json"),
            ("remember", dict(base, valid_from=True), "valid_from"),
            ("remember", dict(base, valid_to=[1]), "valid_to"),
            ("recall", {"query": "x", "limit": "ten"}, "limit"),
            ("recall", {"query": "x", "limit": 2.5}, "limit"),
            ("recall", {"query": 12}, "query"),
            ("recall", {"query": "x", "category": 1}, "category"),
            ("recall", {"query": "x", "tags": {"a": "b"}}, "tags"),
            ("recall", {"query": "x", "offset": "first"}, "offset"),
            ("recall", {"query": "x", "mode": 3}, "mode"),
            ("recall", {"query": "x", "as_of": {"t": 1}}, "as_of"),
            ("history", {"category": "c", "key": "k", "limit": "all"}, "limit"),
            ("get", {"id": "abc"}, "id"),
            ("get", {"id": -3}, "id"),
            ("as_of", {"category": "c", "key": "k", "as_of": [2026]}, "as_of"),
            ("forget", {"category": "c", "key": "k", "reason": 3}, "reason"),
            ("remember_batch", {"items": {"a": 1}}, "items"),
            ("embed", {"category": 5}, "category"),
            ("embed", {"category": "c", "key": ["k"]}, "key"),
            ("embed", {"category": "c", "key": "k", "workspace": 7}, "workspace"),
            ("embed", {"limit": "all"}, "limit"),
            ("embed", {"batch_category": True}, "batch_category"),
            ("embed", {"batch_limit": 2.5}, "batch_limit"),
        ]
        for name, args, arg in cases:
            with self.subTest(tool=name, args=args):
                self.call_error(c, name, args, arg)
        # A tools/call whose arguments is not an object.
        structured, is_error, raw = c.call_tool("remember", ["c", "k"])
        self.assertIs(is_error, True)
        self.assertIn("arguments", mcp_client.error_text(raw))
        # Nothing bad was stored.
        self.assertEqual(self.total_memories(), 1)

    def test_missing_required_arguments(self):
        c = self.client
        cases = [
            ("remember", {"key": "k", "body": "x"}, "category"),
            ("remember", {"category": "c", "body": "x"}, "key"),
            ("remember", {"category": "c", "key": "k"}, "body"),
            ("remember", {}, "category"),
            ("as_of", {"category": "c", "key": "k"}, "as_of"),
            ("valid_at", {"category": "c", "key": "k"}, "valid_at"),
            ("bitemporal", {"category": "c", "key": "k", "valid_at": 1}, "tx_at"),
            ("bitemporal", {"category": "c", "key": "k", "tx_at": 1}, "valid_at"),
            ("history", {"category": "c"}, "key"),
            ("forget", {"key": "k"}, "category"),
            ("purge", {"category": "c"}, "key"),
            ("get", {}, "id"),
            ("remember_batch", {}, "items"),
            ("embed", {"key": "bird"}, "category"),
        ]
        for name, args, arg in cases:
            with self.subTest(tool=name, args=args):
                self.call_error(c, name, args, arg)
        self.assertEqual(self.total_memories(), 1)

    def test_batch_items_fail_alone(self):
        r = self.call_ok(self.client, "remember_batch", {"items": [
            {"category": "b", "key": "good", "body": "fine"},
            {"category": "b", "key": "bad", "body": "x", "valid_from": "never"},
            {"category": "b", "body": "no key"},
            7,
        ]})
        self.assertIs(r["ok"], False)
        self.assertEqual(r["failed"], 3)
        results = r["results"]
        self.assertIs(results[0]["ok"], True)
        self.assertIn("valid_from", results[1]["error"])
        self.assertIn("key", results[2]["error"])
        self.assertIs(results[3]["ok"], False)
        self.assertEqual(self.total_memories(), 2)


class UnknownTool(BadInputCase):

    def test_unknown_tool_is_jsonrpc_error_naming_it(self):
        for name in ["perseus_vault_purge", "perseus_vault_frobnicate", "remember ", "REMEMBER",
                     "embed_all", "x" * 300]:
            with self.subTest(name=name[:20]):
                r = self.client.call_tool_raw(name, {})
                self.assertNotIn("result", r)
                self.assertEqual(r["error"]["code"], -32602)
                self.assertIn(name[:60], r["error"]["message"])

    def test_tools_call_without_a_name(self):
        for params in [{}, {"name": 5}, {"name": None, "arguments": {}}]:
            with self.subTest(params=params):
                r = self.client.request("tools/call", params)
                self.assertEqual(r["error"]["code"], -32602)
                self.assertIn("name", r["error"]["message"])


class FtsSyntax(BadInputCase):

    QUERIES = ['"', '"yellow', 'yellow"', 'AND OR NOT', 'canary AND OR NOT', 'NOT canary',
               'NEAR(', 'NEAR(canary yellow', 'canary*', '*', '^', '^canary', 'col:x',
               'body:canary', ')(', '(canary', 'canary)', "'", '-canary', '+canary', '{canary}',
               '\\', 'canary; DROP TABLE versions; --', 'a:b:c', 'NEAR(a b, 3)', '""', '"" ""',
               '***', 'canary OR', 'AND', 'ñandú 鳥 🐦', '\u0000canary']

    def test_fts5_operators_and_quotes(self):
        for query in self.QUERIES:
            with self.subTest(query=query):
                r = self.call_ok(self.client, "recall", {"query": query, "mode": "fts5"})
                self.assertIsInstance(r["items"], list)
                if "canary" in query.lower() and not query.startswith("-"):
                    self.assertIn(self.canary["id"], [i["id"] for i in r["items"]],
                                  "query %r did not find the canary" % query)
        # Same through the default mode and with filters.
        for query in self.QUERIES:
            with self.subTest(query=query, mode="auto"):
                self.call_ok(self.client, "recall", {"query": query, "category": "canary",
                                                     "tags": ["x"]})
        # The dense arm embeds the same text: it must not choke on it either. Hybrid keeps
        # whatever the keyword arm found.
        self.call_ok(self.client, "embed", {})
        for mode in ("dense", "hybrid"):
            for query in self.QUERIES:
                with self.subTest(query=query, mode=mode):
                    r = self.call_ok(self.client, "recall", {"query": query, "mode": mode})
                    self.assertIsInstance(r["items"], list)
                    if mode == "hybrid" and "canary" in query.lower() \
                            and not query.startswith("-"):
                        self.assertIn(self.canary["id"], [i["id"] for i in r["items"]])

    def test_fts5_syntax_in_stored_bodies_and_keys(self):
        for i, text in enumerate(['"unbalanced', "NEAR(x", "a AND b", "col:val", ")(", "*^"]):
            self.call_ok(self.client, "remember", {"category": "fts:cat", "key": 'k"%d(' % i,
                                                   "dedup": False,
                                                   "body": {"text": text + " marker"}})
        r = self.call_ok(self.client, "recall", {"query": "marker", "limit": 50,
                                                 "mode": "fts5"})
        self.assertEqual(len(r["items"]), 6)


class Encoding(BadInputCase):

    def test_invalid_utf8(self):
        lines = [
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}',
            b'\xc3\x28',
            b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xc0\xaf"}}',
            b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\xed\xa0\x80"}}',
            b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"remember",'
            b'"arguments":{"category":"c","key":"k","body":"bad \xe2\x82 bytes"}}}',
        ]
        for line in lines:
            with self.subTest(line=line[:40]):
                r = self.expect_protocol_error(line, codes=(-32700,))
                self.assertIn("utf-8", r["error"]["message"].lower())
        self.assertAlive(self.client)
        self.assertEqual(self.total_memories(), 1)

    def test_valid_unicode_round_trips(self):
        body = {"text": "café 東京 🐦 \u2028 line", "nul": "a\u0000b"}
        self.call_ok(self.client, "remember", {"category": "ü", "key": "鍵", "body": body})
        got = self.call_ok(self.client, "get", {"category": "ü", "key": "鍵"})
        self.assertEqual(got["body"], body)
        r = self.call_ok(self.client, "recall", {"query": "東京 café"})
        self.assertIn("鍵", [i["key"] for i in r["items"]])


class Oversized(BadInputCase):

    def test_line_longer_than_8_mib(self):
        pad = "x" * (9 * MIB)
        huge = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"pad": pad}})
        r = self.expect_protocol_error(huge, codes=(-32600, -32700))
        self.assertIn("long", r["error"]["message"].lower())
        self.assertAlive(self.client)
        # A huge line followed at once by a normal one: only the huge one is refused.
        self.client.send_bytes(huge.encode() + b"\n" +
                               b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n')
        r = self.client.read_message()
        self.assertIsNone(r["id"])
        self.assertIn("error", r)
        r = self.client.read_message()
        self.assertEqual(r, {"jsonrpc": "2.0", "id": "after", "result": {}})
        # A huge write request is refused and stores nothing.
        big_write = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "remember", "arguments": {"category": "big", "key": "k", "body": pad}}})
        self.expect_protocol_error(big_write, codes=(-32600, -32700))
        self.assertEqual(self.total_memories(), 1)

    def test_line_just_under_the_limit_is_served(self):
        pad = "y" * (7 * MIB)
        line = json.dumps({"jsonrpc": "2.0", "id": "big-ok", "method": "ping",
                           "params": {"pad": pad}})
        self.client.send(line)
        r = self.client.read_message()
        self.assertEqual(r, {"jsonrpc": "2.0", "id": "big-ok", "result": {}})

    def test_body_too_large(self):
        self.call_error(self.client, "remember",
                        {"category": "c", "key": "k", "body": "z" * (2 * MIB)}, "body")
        self.call_error(self.client, "recall", {"query": "q " * 20000}, "query")
        self.call_error(self.client, "remember",
                        {"category": "c", "key": "k", "body": "x",
                         "tags": ["t%d" % i for i in range(100)]}, "tags")
        self.assertEqual(self.total_memories(), 1)


class SmallLineLimit(BadInputCase):
    server_args = ("--max-line-bytes", "4096")

    def test_max_line_bytes(self):
        line = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "ping",
                           "params": {"pad": "p" * (10 * 1024)}})
        r = self.expect_protocol_error(line, codes=(-32600, -32700))
        self.assertIn("4096", r["error"]["message"])
        self.assertAlive(self.client)
        ok = self.call_ok(self.client, "remember", {"category": "c", "key": "small",
                                                     "body": "s" * 3000})
        self.assertEqual(ok["action"], "created")
        # The same request over the limit is refused.
        line = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "remember", "arguments": {"category": "c", "key": "big",
                                              "body": "b" * 5000}}})
        self.expect_protocol_error(line, codes=(-32600, -32700))
        self.assertEqual(self.total_memories(), 2)


    def test_limit_boundary(self):
        def ping_line(id, size):
            head = '{"jsonrpc":"2.0","id":"%s","method":"ping","params":{"pad":"' % id
            tail = '"}}'
            return head + "p" * (size - len(head) - len(tail)) + tail
        exact = ping_line("exact", 4096)
        self.assertEqual(len(exact), 4096)
        self.client.send(exact)
        self.assertEqual(self.client.read_message(),
                         {"jsonrpc": "2.0", "id": "exact", "result": {}})
        self.expect_protocol_error(ping_line("over", 4097), codes=(-32600, -32700))
        # Many lines under the limit in one write: each is served, whatever their sum.
        lines = [ping_line("many-%d" % i, 3000) for i in range(40)]
        self.client.send_bytes("\n".join(lines).encode() + b"\n")
        for i in range(40):
            self.assertEqual(self.client.read_message()["id"], "many-%d" % i)


class DeepNesting(BadInputCase):

    def test_deep_nesting(self):
        depth = 10000
        self.expect_protocol_error("[" * depth + "]" * depth)
        self.expect_protocol_error("{\"a\":" * depth + "1" + "}" * depth)
        self.expect_protocol_error("[" * 100000)
        nested = "[" * depth + "]" * depth
        line = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember",'
                '"arguments":{"category":"deep","key":"k","body":%s}}}' % nested)
        self.expect_protocol_error(line)
        self.assertAlive(self.client)
        self.assertEqual(self.total_memories(), 1)

    def test_moderate_nesting_is_accepted(self):
        body = {"v": 1}
        for _ in range(20):
            body = {"n": body}
        self.call_ok(self.client, "remember", {"category": "deep", "key": "ok", "body": body})
        self.assertEqual(self.call_ok(self.client, "get", {"category": "deep",
                                                           "key": "ok"})["body"], body)


class Ranges(BadInputCase):

    def test_limits(self):
        c = self.client
        for limit in [1000000, 0, -5, 2 ** 63, 10 ** 30 + 0.0]:
            with self.subTest(limit=limit):
                text = self.call_error(c, "recall", {"query": "canary", "limit": limit}, "limit")
                if limit == 1000000:
                    self.assertIn("1000000", text)
        self.call_error(c, "history", {"category": "c", "key": "k", "limit": 1000000}, "limit")
        self.call_error(c, "recall", {"query": "canary", "offset": -1}, "offset")
        self.call_error(c, "recall", {"query": "canary", "offset": 10 ** 12}, "offset")
        self.call_error(c, "recall", {"query": "canary", "tags": ["t%d" % i for i in range(40)]},
                        "tags")
        for args, arg in [({"limit": 0}, "limit"), ({"limit": 10 ** 7}, "limit"),
                          ({"limit": -1}, "limit"), ({"batch_limit": 0}, "batch_limit")]:
            with self.subTest(tool="embed", args=args):
                self.call_error(c, "embed", args, arg)

    def test_out_of_range_json_numbers(self):
        # Out of every numeric range: either a parse error or a tool error; never a crash.
        for raw in ["1e400", "-1e400", "123456789012345678901234567890"]:
            with self.subTest(number=raw):
                line = ('{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{'
                        '"name":"recall","arguments":{"query":"canary","limit":%s}}}' % raw)
                self.client.send(line)
                r = self.client.read_message()
                if "error" in r:
                    self.assertIn(r["error"]["code"], (-32700, -32600, -32602))
                else:
                    self.assertEqual(r["id"], 21)
                    self.assertIs(r["result"]["isError"], True)
                    self.assertIn("limit", mcp_client.error_text(r["result"]))
        self.call_error(self.client, "valid_at",
                        {"category": "canary", "key": "bird", "valid_at": 1e300}, "valid_at")
        self.call_error(self.client, "valid_at",
                        {"category": "canary", "key": "bird",
                         "valid_at": "99999999999999999999"}, "valid_at")

    def test_valid_to_before_valid_from(self):
        c = self.client
        t = now_ms()
        self.call_error(c, "remember", {"category": "c", "key": "k", "body": "x",
                                        "valid_from": t, "valid_to": t - DAY_MS}, "valid_to")
        self.call_error(c, "remember", {"category": "c", "key": "k", "body": "x",
                                        "valid_from": t, "valid_to": t}, "valid_to")
        self.call_error(c, "remember", {"category": "c", "key": "k", "body": "x",
                                        "valid_from": "2026-03-02", "valid_to": "2026-03-01"},
                        "valid_to")
        # valid_from defaults to now: a valid_to in the past is before it.
        self.call_error(c, "remember", {"category": "c", "key": "k", "body": "x",
                                        "valid_to": t - DAY_MS}, "valid_to")
        self.assertEqual(self.total_memories(), 1)

    def test_unparsable_times(self):
        c = self.client
        ident = {"category": "canary", "key": "bird"}
        cases = [
            ("remember", dict(ident, body="x", valid_from="yesterday"), "valid_from"),
            ("remember", dict(ident, body="x", valid_to="2026-02-30"), "valid_to"),
            ("as_of", dict(ident, as_of="2026-13-01"), "as_of"),
            ("as_of", dict(ident, as_of=""), "as_of"),
            ("valid_at", dict(ident, valid_at="2026-03-01T25:00:00Z"), "valid_at"),
            ("valid_at", dict(ident, valid_at="12:00"), "valid_at"),
            ("bitemporal", dict(ident, tx_at="not a time", valid_at=1), "tx_at"),
            ("bitemporal", dict(ident, tx_at=1, valid_at="2026-03-01T12:00:00+25:00"),
             "valid_at"),
            ("recall", {"query": "canary", "as_of": "soon"}, "as_of"),
            ("recall", {"query": "canary", "valid_at": "1.5"}, "valid_at"),
        ]
        for name, args, arg in cases:
            with self.subTest(tool=name, args=args):
                self.call_error(c, name, args, arg)
        got = self.call_ok(c, "get", ident)
        self.assertEqual(got["version"], 1, "a failed write changed the memory")

    def test_unknown_mode(self):
        for mode in ["bm25", "", "DENSE", "semantic"]:
            with self.subTest(mode=mode):
                text = self.call_error(self.client, "recall", {"query": "canary", "mode": mode},
                                       "mode")
                for known in ("fts5", "dense", "hybrid"):
                    self.assertIn(known, text)

    def test_embed_of_an_unknown_memory(self):
        self.call_error(self.client, "embed", {"category": "canary", "key": "no-such-bird"},
                        "no-such-bird")
        self.call_error(self.client, "perseus_vault_embed",
                        {"category": "nothing", "key": "bird"}, "nothing")


class Limits(BadInputCase):
    """Each limit of src/tools/limits.h and of the protocol (docs/decisions.md, "Limits"): a
    value at the limit is served, one past it is an error naming the argument (or the message)
    and the limit, and the server keeps serving (tearDown checks it and the file)."""

    def at_and_over(self, tool, make_args, limit, arg):
        """make_args(n): arguments whose value under test has size n."""
        self.call_ok(self.client, tool, make_args(limit))
        return self.call_error(self.client, tool, make_args(limit + 1), arg, str(limit))

    def test_write_strings(self):
        def write(**fields):
            args = {"category": "limits", "key": "k", "body": "limit probe", "dedup": False}
            args.update(fields)
            return args
        cases = [
            ("category", 256, lambda n: write(category="c" * n)),
            ("key", 1024, lambda n: write(key="k" * n)),
            ("workspace", 256, lambda n: write(workspace="w" * n)),
            ("type", 128, lambda n: write(type="t" * n)),
            ("tags", 256, lambda n: write(tags=["short", "t" * n])),
            ("source", 4096, lambda n: write(source="s" * n)),
            # The body's JSON text: a string body serializes with its two quotes.
            ("body", MIB, lambda n: write(body="b" * (n - 2))),
        ]
        for arg, limit, make in cases:
            with self.subTest(arg=arg):
                self.at_and_over("remember", make, limit, arg)
        self.at_and_over("remember", lambda n: write(tags=["t%d" % i for i in range(n)]), 64,
                         "tags")
        # remember_batch items obey the same limits, each failing alone.
        r = self.call_ok(self.client, "remember_batch", {"items": [
            write(key="batch-ok"), write(key="k" * 1025)]})
        self.assertEqual(r["failed"], 1)
        self.assertIn("1024", r["results"][1]["error"])

    def test_read_strings(self):
        ident = {"category": "canary", "key": "bird"}
        cases = [
            ("get", "category", 256, lambda n: {"category": "c" * n, "key": "k"}),
            ("history", "key", 1024, lambda n: {"category": "c", "key": "k" * n}),
            ("as_of", "workspace", 256,
             lambda n: dict(ident, workspace="w" * n, as_of="2026-03-01")),
            ("recall", "query", 16384, lambda n: {"query": "canary " + "q" * (n - 7)}),
            ("recall", "category", 256, lambda n: {"query": "canary", "category": "c" * n}),
            ("recall", "type", 128, lambda n: {"query": "canary", "type": "t" * n}),
            ("recall", "workspace", 256, lambda n: {"query": "canary", "workspace": "w" * n}),
            ("recall", "tags", 256, lambda n: {"query": "canary", "tags": ["t" * n]}),
            ("recall", "tags", 16,
             lambda n: {"query": "canary", "tags": ["t%d" % i for i in range(n)]}),
            ("embed", "category", 256, lambda n: {"category": "c" * n}),
            ("perseus_vault_recall", "workspace_hash", 256,
             lambda n: {"query": "canary", "workspace_hash": "w" * n}),
        ]
        for tool, arg, limit, make in cases:
            with self.subTest(tool=tool, arg=arg):
                self.at_and_over(tool, make, limit, arg)
        self.call_error(self.client, "recall", {"query": "canary", "mode": "m" * 4097},
                        "mode", "4096")

    def test_forget_reason(self):
        for key in ("at", "over"):
            self.call_ok(self.client, "remember", {"category": "limits", "key": key,
                                                   "body": "to forget " + key})
        self.call_ok(self.client, "forget", {"category": "limits", "key": "at",
                                             "reason": "r" * 16384})
        self.call_error(self.client, "forget", {"category": "limits", "key": "over",
                                                "reason": "r" * 16385}, "reason", "16384")
        self.assertIs(self.call_ok(self.client, "get", {"category": "limits",
                                                        "key": "over"})["found"], True)

    def test_limit_and_offset_ranges(self):
        ident = {"category": "canary", "key": "bird"}
        cases = [
            ("recall", "limit", 1000, lambda n: {"query": "canary", "limit": n}),
            ("history", "limit", 1000, lambda n: dict(ident, limit=n)),
            ("recall", "offset", 100000, lambda n: {"query": "canary", "offset": n}),
            ("history", "offset", 1000000, lambda n: dict(ident, offset=n)),
        ]
        for tool, arg, limit, make in cases:
            with self.subTest(tool=tool, arg=arg):
                self.at_and_over(tool, make, limit, arg)
        for tool, args in [("recall", {"query": "canary"}), ("history", ident)]:
            with self.subTest(tool=tool, limit=0):
                self.call_ok(self.client, tool, dict(args, limit=1))
                self.call_error(self.client, tool, dict(args, limit=0), "limit", "between 1")

    def test_batch_item_count(self):
        # The same memory 10,000 times: one write, the rest unchanged, so the count is tested
        # without a large load.
        item = {"category": "batch", "key": "same", "body": "one body"}
        r = self.call_ok(self.client, "remember_batch", {"items": [item] * 10000})
        self.assertEqual((r["created"], r["unchanged"], r["failed"]), (1, 9999, 0))
        self.call_error(self.client, "remember_batch", {"items": [item] * 10001},
                        "items", "10000")
        self.assertEqual(self.total_memories(), 2)

    def test_protocol_nesting_depth(self):
        def ping(levels):
            # The message object and params are two levels; the pad adds the rest.
            pad = "[" * (levels - 2) + "]" * (levels - 2)
            return '{"jsonrpc":"2.0","id":"d%d","method":"ping","params":{"pad":%s}}' % (
                levels, pad)
        self.client.send(ping(64))
        self.assertEqual(self.client.read_message(),
                         {"jsonrpc": "2.0", "id": "d64", "result": {}})
        r = self.expect_protocol_error(ping(65), codes=(-32700,))
        self.assertIn("64", r["error"]["message"])

    def test_protocol_batch_size(self):
        def batch(n):
            return "[" + ",".join('{"jsonrpc":"2.0","id":%d,"method":"ping"}' % i
                                  for i in range(n)) + "]"
        self.client.send(batch(1000))
        r = self.client.read_message()
        self.assertEqual(sorted(m["id"] for m in r), list(range(1000)))
        r = self.expect_protocol_error(batch(1001), codes=(-32600,))
        self.assertIn("1000", r["error"]["message"])


class WithoutAnEmbedder(BadInputCase):
    """--embedder none: what needs vectors is refused with a message naming the option."""
    server_args = ("--embedder", "none")

    def test_dense_and_hybrid_name_the_option(self):
        for name in ("recall", "perseus_vault_recall"):
            for mode in ["dense", "hybrid"]:
                with self.subTest(tool=name, mode=mode):
                    self.call_error(self.client, name, {"query": "canary", "mode": mode},
                                    "mode", mode, "--embedder none")
        # Keyword recall, and auto, still work.
        for mode in [None, "auto", "fts5"]:
            args = {"query": "canary"}
            if mode:
                args["mode"] = mode
            with self.subTest(mode=mode):
                r = self.call_ok(self.client, "recall", args)
                self.assertEqual(r["mode"], "fts5")

    def test_embed_names_the_option(self):
        for name, args in [("embed", {}), ("embed", {"category": "canary", "key": "bird"}),
                           ("perseus_vault_embed", {"batch_category": "canary",
                                                    "batch_limit": 10})]:
            with self.subTest(tool=name, args=args):
                self.call_error(self.client, name, args, "--embedder none")
        # Bad arguments are still named first.
        self.call_error(self.client, "embed", {"limit": 0}, "limit")


class PerseusArgumentNames(BadInputCase):
    """A Perseus Vault client's bad arguments are named as it sent them (docs/compat.md names,
    docs/design.md §7: the message names the argument)."""

    def test_errors_name_perseus_arguments(self):
        c = self.client
        ident = {"category": "canary", "key": "bird"}
        cases = [
            ("perseus_vault_remember", dict(ident, body_json="{}",
                                            valid_from_unix_ms="yesterday"),
             "valid_from_unix_ms"),
            ("perseus_vault_remember", dict(ident, body_json="{}",
                                            valid_from_unix_ms=now_ms(),
                                            valid_to_unix_ms=now_ms() - DAY_MS),
             "valid_to_unix_ms"),
            ("perseus_vault_as_of", ident, "as_of_unix_ms"),
            ("perseus_vault_as_of", dict(ident, as_of_unix_ms="later"), "as_of_unix_ms"),
            ("perseus_vault_valid_at", dict(ident, valid_at_unix_ms=[1]), "valid_at_unix_ms"),
            ("perseus_vault_bitemporal", dict(ident, valid_at_unix_ms=1), "tx_at_unix_ms"),
            ("perseus_vault_recall", {"query": "x", "workspace_hash": 5}, "workspace_hash"),
        ]
        for name, args, arg in cases:
            with self.subTest(tool=name, args=args):
                self.call_error(c, name, args, arg)

    def test_perseus_errors_are_tool_errors(self):
        c = self.client
        self.call_error(c, "perseus_vault_recall", {"query": "x", "limit": "ten"}, "limit")
        self.call_error(c, "perseus_vault_remember", {"category": "c", "key": "k"}, "body")
        self.call_error(c, "perseus_vault_get_entity", {"id": "abc"}, "id")
        self.call_error(c, "perseus_vault_recall", {"query": "x", "mode": "vector"}, "mode")
        self.call_error(c, "perseus_vault_embed", {"batch_limit": "many"}, "batch_limit")
        self.call_error(c, "perseus_vault_embed", {"key": "bird"}, "category")


class UndefinedArguments(BadInputCase):
    """Canonical tools refuse an argument they do not define, naming it and the closest one;
    the perseus_vault_* names ignore what they do not know (docs/compat.md)."""

    def test_misspelt_argument_names_it_and_writes_nothing(self):
        c = self.client
        args = {"category": "people", "key": "maria", "body": {"title": "staff engineer"},
                "vaild_from": "2025-06-01"}
        text = self.call_error(c, "remember", args)
        self.assertEqual(text, "vaild_from: unknown argument of remember; "
                               "did you mean valid_from?")
        self.assertIs(self.call_ok(c, "get", {"category": "people", "key": "maria"})["found"],
                      False)
        self.assertEqual(self.total_memories(), 1)

    def test_unknown_argument_with_no_close_name_lists_the_known_ones(self):
        text = self.call_error(self.client, "recall", {"query": "canary", "trust_weight": 0.5},
                               "trust_weight")
        self.assertIn("the known arguments are as_of, category, fields, limit, max_chars, mode", text)

    def test_batch_item_fails_alone(self):
        r = self.call_ok(self.client, "remember_batch", {"items": [
            {"category": "b", "key": "good", "body": "fine"},
            {"category": "b", "key": "typo", "body": "x", "tgas": ["a"]},
        ]})
        self.assertEqual([r["created"], r["failed"]], [1, 1])
        self.assertEqual(r["results"][1]["error"], "items[1].tgas: unknown argument of "
                                                   "remember_batch; did you mean items[1].tags?")
        self.assertEqual(self.total_memories(), 2)

    def test_perseus_name_refused_on_remember_and_honoured_on_perseus_vault_remember(self):
        c = self.client
        valid_from = now_ms() - 30 * DAY_MS
        ident = {"category": "people", "key": "ana"}
        text = self.call_error(c, "remember", dict(ident, body={"title": "lead"},
                                                   valid_from_unix_ms=valid_from))
        self.assertEqual(text, "valid_from_unix_ms: unknown argument of remember (a "
                               "perseus_vault_remember name); did you mean valid_from?")
        self.assertIs(self.call_ok(c, "get", ident)["found"], False)
        r = self.call_ok(c, "perseus_vault_remember",
                         dict(ident, body_json='{"title": "lead"}', valid_from_unix_ms=valid_from,
                              trust_weight=0.5))
        self.assertEqual(r["valid_from"], valid_from)
        before = self.call_ok(c, "valid_at", dict(ident, valid_at=valid_from - 1))
        self.assertIs(before["found"], False)
        then = self.call_ok(c, "valid_at", dict(ident, valid_at=valid_from))
        self.assertEqual(then["body"], {"title": "lead"})

    def test_perseus_vault_recall_ignores_trust_weight(self):
        r = self.call_ok(self.client, "perseus_vault_recall",
                         {"query": "yellow canary", "trust_weight": 0.7, "min_decay": 0.2})
        self.assertIn(self.canary["id"], [i["id"] for i in r["items"]])

    def test_unparsable_body_json_names_the_byte_offset(self):
        c = self.client
        ident = {"category": "people", "key": "bo"}
        text = self.call_error(c, "remember", dict(ident, body_json='{"title": "staff"'))
        self.assertTrue(text.startswith("body_json: not a JSON text (syntax error at byte 17: "),
                        text)
        self.assertIs(self.call_ok(c, "get", ident)["found"], False)
        # A Perseus Vault client's plain text is still stored as a JSON string.
        r = self.call_ok(c, "perseus_vault_remember", dict(ident, body_json="plain words"))
        self.assertEqual(self.call_ok(c, "get", {"id": r["id"]})["body"], "plain words")

    def test_tools_list_closes_canonical_schemas_and_leaves_perseus_ones_open(self):
        tools = {t["name"]: t for t in self.client.list_tools()}
        self.assertIs(tools["remember"]["inputSchema"]["additionalProperties"], False)
        items = tools["remember_batch"]["inputSchema"]["properties"]["items"]["items"]
        self.assertIs(items["additionalProperties"], False)
        perseus = self.serve("--compat", "perseus-vault", db=os.path.join(self.tmp, "pv.db"))
        listed = {t["name"]: t for t in perseus.list_tools()}
        self.assertNotIn("additionalProperties", listed["perseus_vault_remember"]["inputSchema"])
        self.assertNotIn("additionalProperties", listed["perseus_vault_recall"]["inputSchema"])
        self.assertEqual(perseus.close(), 0)


if __name__ == "__main__":
    mcp_client.run_tests()
