"""Protocol end-to-end tests: framing, JSON-RPC 2.0, the MCP lifecycle, stdout discipline,
stdin EOF and SIGTERM (docs/design.md §7, §8).

Run: python3 tests/e2e/test_protocol.py <path-to-strata-binary>
With STRATA_TEST_STORE=postgresql (mcp_client.py) the store is a PostgreSQL database.
"""

import json
import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase, now_ms, schema_problems, stdout_problems  # noqa: E402,E501

VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
CANONICAL = ["remember", "remember_batch", "recall", "get", "history", "as_of", "valid_at",
             "bitemporal", "forget", "purge", "embed", "stats"]
PERSEUS = ["perseus_vault_remember", "perseus_vault_recall", "perseus_vault_as_of",
           "perseus_vault_valid_at", "perseus_vault_bitemporal", "perseus_vault_history",
           "perseus_vault_forget", "perseus_vault_embed", "perseus_vault_stats",
           "perseus_vault_get_entity"]


# Cases that read and write no store run on SQLite only: on PostgreSQL they would test the same
# code again, at the price of a database each.
NO_STORE = "reads and writes no store: the SQLite run covers it"


@unittest.skipIf(mcp_client.ON_POSTGRES, NO_STORE)
class Lifecycle(StrataTestCase):

    def test_initialize_echoes_each_supported_version(self):
        for version in VERSIONS:
            with self.subTest(version=version):
                client = self.spawn()
                result = client.initialize(version)
                self.assertEqual(result["protocolVersion"], version)
                self.assertEqual(client.close(), 0)

    def test_initialize_unknown_version_gets_newest(self):
        for version in ["1999-01-01", "2026-12-31", ""]:
            with self.subTest(version=version):
                client = self.spawn()
                result = client.initialize(version)
                self.assertEqual(result["protocolVersion"], "2025-11-25")
                self.assertEqual(client.close(), 0)

    def test_initialize_has_server_info_and_tools_capability(self):
        client = self.spawn()
        result = client.initialize("2025-06-18")
        info = result.get("serverInfo")
        self.assertIsInstance(info, dict)
        self.assertEqual(info.get("name"), "strata")
        self.assertIsInstance(info.get("version"), str)
        self.assertTrue(info["version"])
        self.assertIn("tools", result.get("capabilities", {}))

    def test_initialized_notification_gets_no_response(self):
        client = self.spawn()
        client.initialize("2025-06-18", initialized=False)
        client.notify("notifications/initialized")
        # The next line on stdout must be the ping's response, not one to the notification.
        client.send({"jsonrpc": "2.0", "id": "after-initialized", "method": "ping"})
        response = client.read_message()
        self.assertEqual(response.get("id"), "after-initialized")
        self.assertEqual(response.get("result"), {})

    def test_other_notifications_get_no_response(self):
        client = self.serve()
        client.notify("notifications/cancelled", {"requestId": 1, "reason": "test"})
        client.notify("notifications/unknown_thing", {"x": 1})
        client.send({"jsonrpc": "2.0", "method": "tools/list"})  # no id: a notification
        client.send({"jsonrpc": "2.0", "id": 77, "method": "ping"})
        response = client.read_message()
        self.assertEqual(response.get("id"), 77)
        self.assertEqual(response.get("result"), {})

    def test_ping(self):
        client = self.serve()
        response = client.request("ping", id="p-1")
        self.assertEqual(response, {"jsonrpc": "2.0", "id": "p-1", "result": {}})
        response = client.request("ping", {}, id=0)
        self.assertEqual(response.get("result"), {})
        self.assertEqual(response.get("id"), 0)

    def test_ping_before_initialize(self):
        client = self.spawn()
        self.assertTrue(client.ping())


@unittest.skipIf(mcp_client.ON_POSTGRES, NO_STORE)
class ToolsList(StrataTestCase):

    def test_every_tool_is_fully_described(self):
        client = self.serve()
        tools = client.list_tools()
        self.assertTrue(tools)
        for tool in tools:
            with self.subTest(tool=tool.get("name")):
                for field in ("name", "title", "description"):
                    self.assertIsInstance(tool.get(field), str)
                    self.assertTrue(tool[field].strip(), field + " is empty")
                self.assertEqual(tool.get("inputSchema", {}).get("type"), "object")
                self.assertIsInstance(tool["inputSchema"].get("properties"), dict)
                self.assertIsInstance(tool.get("outputSchema"), dict)
                self.assertEqual(tool["outputSchema"].get("type"), "object")
                self.assertIsInstance(tool.get("annotations"), dict)
                self.assertIn("readOnlyHint", tool["annotations"])

    def test_canonical_names_exactly(self):
        client = self.serve()
        names = [t["name"] for t in client.list_tools()]
        self.assertEqual(sorted(names), sorted(CANONICAL))
        self.assertEqual(len(names), len(set(names)), "duplicate tool names")

    def test_read_only_hints(self):
        client = self.serve()
        hints = {t["name"]: t["annotations"].get("readOnlyHint") for t in client.list_tools()}
        for name in ("recall", "get", "history", "as_of", "valid_at", "bitemporal", "stats"):
            self.assertIs(hints[name], True, name)
        for name in ("remember", "remember_batch", "forget", "purge", "embed"):
            self.assertIs(hints[name], False, name)

    def test_recall_mode_enum_lists_every_mode(self):
        # The same with or without an embedder: without one, dense and hybrid are refused
        # with a message rather than hidden.
        for args in ((), ("--embedder", "none")):
            with self.subTest(args=args):
                client = self.serve(*args)
                recall = [t for t in client.list_tools() if t["name"] == "recall"][0]
                mode = recall["inputSchema"]["properties"].get("mode", {})
                self.assertEqual(mode.get("type"), "string")
                self.assertEqual(mode.get("enum"), ["auto", "fts5", "dense", "hybrid"])

    def test_embed_arguments_declared(self):
        client = self.serve()
        embed = [t for t in client.list_tools() if t["name"] == "embed"][0]
        self.assertEqual(sorted(embed["inputSchema"]["properties"]),
                         ["batch_category", "batch_limit", "category", "key", "limit",
                          "workspace"])
        self.assertEqual(sorted(embed["outputSchema"]["required"]),
                         ["attempted", "embedded", "failed", "remaining"])

    def test_required_arguments_declared(self):
        client = self.serve()
        tools = {t["name"]: t for t in client.list_tools()}
        for name in ("remember", "history", "as_of", "valid_at", "bitemporal", "forget",
                     "purge"):
            required = tools[name]["inputSchema"].get("required", [])
            self.assertIn("category", required, name)
            self.assertIn("key", required, name)
        self.assertIn("as_of", tools["as_of"]["inputSchema"]["required"])
        self.assertIn("valid_at", tools["valid_at"]["inputSchema"]["required"])
        self.assertIn("tx_at", tools["bitemporal"]["inputSchema"]["required"])
        self.assertIn("items", tools["remember_batch"]["inputSchema"]["required"])

    def test_compat_perseus_vault_lists_perseus_names(self):
        client = self.serve("--compat", "perseus-vault")
        tools = client.list_tools()
        names = [t["name"] for t in tools]
        for name in PERSEUS:
            self.assertIn(name, names)
        for verb in ("remember", "recall", "as_of", "valid_at", "bitemporal", "history",
                     "forget", "embed", "stats", "get"):
            self.assertNotIn(verb, names, "canonical name listed under --compat")
        self.assertEqual(len(names), len(set(names)))
        by_name = {t["name"]: t for t in tools}
        # The listed schemas use the Perseus Vault argument names (docs/compat.md).
        remember_props = by_name["perseus_vault_remember"]["inputSchema"]["properties"]
        for arg in ("body_json", "workspace_hash", "valid_from_unix_ms", "valid_to_unix_ms",
                    "skip_dedup"):
            self.assertIn(arg, remember_props)
        self.assertIn("as_of_unix_ms",
                      by_name["perseus_vault_as_of"]["inputSchema"]["properties"])
        self.assertIn("tx_at_unix_ms",
                      by_name["perseus_vault_bitemporal"]["inputSchema"]["properties"])
        for arg in ("batch_category", "batch_limit", "category", "key", "workspace_hash"):
            self.assertIn(arg, by_name["perseus_vault_embed"]["inputSchema"]["properties"])

    def test_tool_prefix(self):
        client = self.serve("--tool-prefix", "mem_")
        names = [t["name"] for t in client.list_tools()]
        self.assertEqual(sorted(names), sorted("mem_" + n for n in CANONICAL))
        structured = self.call_ok(client, "mem_remember",
                                  {"category": "c", "key": "k", "body": {"text": "prefixed"}})
        self.assertEqual(structured["action"], "created")
        found = self.call_ok(client, "mem_get", {"category": "c", "key": "k"})
        self.assertIs(found["found"], True)
        self.assertEqual(found["body"], {"text": "prefixed"})


class ToolsCall(StrataTestCase):

    def test_result_text_equals_structured_content(self):
        client = self.serve()
        calls = [
            ("remember", {"category": "c", "key": "k", "body": {"text": "same object"}}),
            ("recall", {"query": "object"}),
            ("get", {"category": "c", "key": "k"}),
            ("history", {"category": "c", "key": "k"}),
            ("stats", {}),
            ("embed", {}),
        ]
        for name, args in calls:
            with self.subTest(tool=name):
                structured, is_error, raw = client.call_tool(name, args)
                self.assertIs(is_error, False)
                content = raw["content"]
                self.assertIsInstance(content, list)
                self.assertEqual(content[0]["type"], "text")
                self.assertEqual(json.loads(content[0]["text"]), structured)

    def test_results_conform_to_output_schemas(self):
        client = self.serve()
        schemas = {t["name"]: t["outputSchema"] for t in client.list_tools()}
        text = "the release checklist lives in docs/release.md and is reviewed weekly"
        calls = [
            ("remember", {"category": "c", "key": "k", "body": {"text": text},
                          "tags": ["a"], "valid_to": "2100-01-01"}),
            ("remember", {"category": "c", "key": "k", "body": {"text": text},
                          "valid_to": "2100-01-01"}),
            ("remember", {"category": "c", "key": "k2", "body": {"text": text + "!"}}),
            ("remember", {"category": "c", "key": "k", "body": "changed"}),
            ("remember_batch", {"items": [{"category": "c", "key": "b", "body": "b"},
                                          {"category": "c"}]}),
            ("recall", {"query": "changed"}),
            ("recall", {"query": "changed", "as_of": "2100-01-01", "valid_at": now_ms()}),
            ("embed", {"limit": 1}),
            ("embed", {"category": "c", "key": "k2"}),
            ("embed", {"category": "nothing"}),
            ("embed", {"batch_category": "c", "batch_limit": 2}),
            ("recall", {"query": "changed", "mode": "fts5"}),
            ("recall", {"query": "release checklist", "mode": "dense"}),
            ("recall", {"query": "release checklist", "mode": "hybrid", "limit": 1,
                        "offset": 1}),
            ("get", {"category": "c", "key": "k"}),
            ("get", {"category": "c", "key": "missing"}),
            ("get", {"id": 999}),
            ("history", {"category": "c", "key": "k"}),
            ("history", {"category": "c", "key": "missing"}),
            ("as_of", {"category": "c", "key": "k", "as_of": now_ms()}),
            ("as_of", {"category": "c", "key": "k", "as_of": 0}),
            ("valid_at", {"category": "c", "key": "k", "valid_at": now_ms() + 1000}),
            ("valid_at", {"category": "c", "key": "k", "valid_at": 0}),
            ("bitemporal", {"category": "c", "key": "k", "tx_at": now_ms() + 1000,
                            "valid_at": now_ms() + 1000}),
            ("bitemporal", {"category": "c", "key": "k", "tx_at": 0, "valid_at": 0}),
            ("stats", {}),
            ("forget", {"category": "c", "key": "k"}),
            ("forget", {"category": "c", "key": "k"}),
            ("purge", {"category": "c", "key": "k"}),
            ("purge", {"category": "c", "key": "k"}),
        ]
        for name, args in calls:
            with self.subTest(tool=name, args=args):
                structured = self.call_ok(client, name, args)
                self.assertEqual(schema_problems(schemas[name], structured), [])

    def test_call_without_arguments_member(self):
        client = self.serve()
        structured, is_error, _ = client.call_tool("stats")  # no "arguments" at all
        self.assertIs(is_error, False)
        self.assertIn("total_memories", structured)

    def test_unknown_tool_is_invalid_params(self):
        client = self.serve()
        response = client.call_tool_raw("no_such_tool", {})
        self.assertEqual(response["error"]["code"], -32602)
        self.assertIn("no_such_tool", response["error"]["message"])


class JsonRpc(StrataTestCase):

    def test_mixed_batch(self):
        client = self.serve()
        client.send([
            {"jsonrpc": "2.0", "id": 11, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "twelve", "method": "tools/list"},
        ])
        response = client.read_message()
        self.assertIsInstance(response, list)
        self.assertEqual(len(response), 2)
        self.assertEqual(sorted(str(r.get("id")) for r in response), ["11", "twelve"])
        by_id = {r["id"]: r for r in response}
        self.assertEqual(by_id[11]["result"], {})
        self.assertIn("tools", by_id["twelve"]["result"])
        self.assertTrue(client.ping())

    def test_batch_with_an_invalid_member(self):
        client = self.serve()
        client.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, 42])
        response = client.read_message()
        self.assertIsInstance(response, list)
        self.assertEqual(len(response), 2)
        self.assertEqual(response[0], {"jsonrpc": "2.0", "id": 1, "result": {}})
        self.assertEqual(response[1]["error"]["code"], -32600)
        self.assertIsNone(response[1]["id"])

    def test_all_notification_batch_gets_no_response(self):
        client = self.serve()
        client.send([{"jsonrpc": "2.0", "method": "notifications/initialized"},
                     {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 3}}])
        client.send({"jsonrpc": "2.0", "id": "next", "method": "ping"})
        response = client.read_message()
        self.assertIsInstance(response, dict)
        self.assertEqual(response.get("id"), "next")

    def test_empty_batch_is_invalid_request(self):
        client = self.serve()
        client.send("[]")
        response = client.read_message()
        self.assertIsInstance(response, dict)
        self.assertEqual(response["error"]["code"], -32600)
        self.assertIsNone(response["id"])
        self.assertTrue(client.ping())

    def test_unknown_method(self):
        client = self.serve()
        response = client.request("tools/frobnicate", {}, id=5)
        self.assertEqual(response["error"]["code"], -32601)
        self.assertEqual(response["id"], 5)
        self.assertNotIn("result", response)
        response = client.request("resources/list", id="str-id")
        self.assertEqual(response["error"]["code"], -32601)
        self.assertEqual(response["id"], "str-id")

    def test_missing_jsonrpc_is_invalid_request(self):
        client = self.serve()
        client.send({"id": 9, "method": "ping"})
        response = client.read_message()
        self.assertEqual(response["error"]["code"], -32600)
        self.assertEqual(response["id"], 9)
        client.send({"jsonrpc": "1.0", "id": 10, "method": "ping"})
        response = client.read_message()
        self.assertEqual(response["error"]["code"], -32600)
        self.assertEqual(response["id"], 10)
        self.assertTrue(client.ping())

    def test_missing_method_is_invalid_request(self):
        client = self.serve()
        client.send({"jsonrpc": "2.0", "id": 13})
        response = client.read_message()
        self.assertEqual(response["error"]["code"], -32600)
        self.assertEqual(response["id"], 13)

    def test_blank_lines_ignored(self):
        client = self.serve()
        client.send_bytes(b"\n\n   \n\t\n\r\n")
        client.send({"jsonrpc": "2.0", "id": "after-blank", "method": "ping"})
        response = client.read_message()
        self.assertEqual(response.get("id"), "after-blank")

    def test_crlf_line_ending(self):
        client = self.serve()
        client.send_bytes(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
        response = client.read_message()
        self.assertEqual(response, {"jsonrpc": "2.0", "id": "crlf", "result": {}})

    def test_not_json_is_parse_error_and_server_keeps_serving(self):
        client = self.serve()
        for garbage in ["this is not json", "{\"jsonrpc\": \"2.0\", \"id\": 1,", "{]", "nul"]:
            with self.subTest(line=garbage):
                client.send(garbage)
                response = client.read_message()
                self.assertEqual(response["error"]["code"], -32700)
                self.assertIn("id", response)
                self.assertIsNone(response["id"])
        self.assertTrue(client.ping())
        structured = self.call_ok(client, "stats", {})
        self.assertEqual(structured["total_memories"], 0)

    def test_requests_answered_in_order(self):
        client = self.serve()
        ids = list(range(100, 120))
        data = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() + b"\n"
                        for i in ids)
        client.send_bytes(data)
        got = [client.read_message()["id"] for _ in ids]
        self.assertEqual(got, ids)

    def test_whole_stdout_is_jsonrpc(self):
        client = self.spawn()
        client.initialize("2025-11-25")
        client.list_tools()
        self.call_ok(client, "remember", {"category": "c", "key": "k", "body": "text\nwith\nlines"})
        self.call_ok(client, "recall", {"query": "lines"})
        client.call_tool("recall", {"limit": "ten"})
        client.call_tool_raw("nope", {})
        for raw in ["garbage", "[]", "{}", "[1,2]", '{"jsonrpc":"2.0","id":1}', "\xff\xfe"]:
            client.send(raw)
            client.read_message()
        client.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                     {"jsonrpc": "2.0", "method": "notifications/initialized"}])
        client.read_message()
        client.send_bytes(b"\n\n")
        client.notify("notifications/initialized")
        self.assertTrue(client.ping())
        self.assertEqual(client.close(), 0)
        lines = client.stdout_lines()
        self.assertGreaterEqual(len(lines), 14)
        self.assertEqual(stdout_problems(client.stdout_bytes), [])


class StdoutChecker(unittest.TestCase):
    """The stdout check used on every session can fail."""

    def test_detects_bad_lines(self):
        good = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
        self.assertEqual(stdout_problems(good), [])
        self.assertEqual(stdout_problems(b'[{"jsonrpc":"2.0","id":null,"error":'
                                         b'{"code":-32700,"message":"x"}}]\n'), [])
        for bad in [b"log line\n", good + b"strata: starting\n", good.rstrip(b"\n"),
                    b'{"id":1,"result":{}}\n', b'{"jsonrpc":"2.0","id":1}\n',
                    b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}\n',
                    b"[]\n", b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}}\n',
                    b"\xff\n"]:
            with self.subTest(output=bad):
                self.assertNotEqual(stdout_problems(bad), [])


class SchemaChecker(unittest.TestCase):
    """The outputSchema check can fail."""

    SCHEMA = {"type": "object", "required": ["a"],
              "properties": {"a": {"type": "integer"}, "b": {"type": ["string", "null"]},
                             "e": {"type": "string", "enum": ["x"]},
                             "l": {"type": "array", "items": {"type": "string"}},
                             "m": {"type": "object", "additionalProperties": {"type": "integer"}}}}

    def test_detects_violations(self):
        self.assertEqual(schema_problems(self.SCHEMA, {"a": 1, "b": None, "e": "x", "l": ["s"],
                                                       "m": {"k": 2}, "extra": 0}), [])
        for bad in [{}, {"a": "1"}, {"a": True}, {"a": 1, "b": 2}, {"a": 1, "e": "y"},
                    {"a": 1, "l": [1]}, {"a": 1, "m": {"k": "v"}}, []]:
            with self.subTest(value=bad):
                self.assertNotEqual(schema_problems(self.SCHEMA, bad), [])


class ProcessLifetime(StrataTestCase):

    def test_stdin_eof_exits_zero_and_write_is_durable(self):
        client = self.serve()
        written = self.call_ok(client, "remember",
                               {"category": "project", "key": "codename",
                                "body": {"text": "bluebird durable write"}})
        self.assertEqual(written["action"], "created")
        self.assertEqual(client.close(), 0)

        again = self.serve()
        found = self.call_ok(again, "get", {"category": "project", "key": "codename"})
        self.assertIs(found["found"], True)
        self.assertEqual(found["body"], {"text": "bluebird durable write"})
        recalled = self.call_ok(again, "recall", {"query": "bluebird"})
        self.assertEqual([i["key"] for i in recalled["items"]], ["codename"])
        self.assertEqual(again.close(), 0)
        # The database file is consistent once both processes are gone.
        self.assertFileIntact()

    def test_kill_9_loses_no_acknowledged_write(self):
        client = self.serve()
        requests = b"".join(json.dumps({
            "jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "remember", "arguments": {
                "category": "crash", "key": "k%03d" % i, "dedup": False,
                "body": {"text": "acknowledged before the crash %d" % i}}}}).encode() + b"\n"
            for i in range(300))
        client.send_bytes(requests)
        acknowledged = []
        for _ in range(60):
            response = client.read_message()
            self.assertIs(response["result"]["isError"], False)
            acknowledged.append(response["id"])
        client.terminate(signal.SIGKILL)
        self.assertFileIntact()
        again = self.serve()
        for i in acknowledged:
            got = self.call_ok(again, "get", {"category": "crash", "key": "k%03d" % i})
            self.assertIs(got["found"], True, "acknowledged write %d lost" % i)
        total = self.call_ok(again, "stats", {})["total_memories"]
        self.assertGreaterEqual(total, len(acknowledged))
        self.assertEqual(again.close(), 0)
        self.assertFileIntact()

    def test_eof_before_initialize_exits_zero(self):
        client = self.spawn()
        self.assertEqual(client.close(), 0)
        self.assertEqual(client.stdout_bytes, b"")

    def test_sigterm_while_idle_exits_zero(self):
        client = self.serve()
        self.call_ok(client, "remember", {"category": "c", "key": "k", "body": "before sigterm"})
        self.assertEqual(client.terminate(signal.SIGTERM), 0)
        again = self.serve()
        found = self.call_ok(again, "get", {"category": "c", "key": "k"})
        self.assertEqual(found["body"], "before sigterm")

    def test_sigterm_delivered_to_a_background_thread_still_ends_the_server(self):
        # The kernel may hand a process-directed signal to any thread; the checkpointer and the
        # embedding worker must not swallow it while the serving thread blocks on stdin.
        import ctypes
        client = self.serve()
        self.call_ok(client, "remember", {"category": "c", "key": "k", "body": "x"})
        pid = client.proc.pid
        others = [int(t) for t in os.listdir("/proc/%d/task" % pid) if int(t) != pid]
        self.assertTrue(others, "strata runs background threads")
        libc = ctypes.CDLL(None, use_errno=True)
        SYS_tgkill = 234  # x86-64
        self.assertEqual(libc.syscall(SYS_tgkill, pid, others[0], int(signal.SIGTERM)), 0)
        try:
            client.exit_code = client.proc.wait(mcp_client.EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            client.kill()
            self.fail("a SIGTERM delivered to a background thread did not end the server")
        self.assertEqual(client.exit_code, 0)

    def test_sigint_while_idle_exits_zero(self):
        client = self.serve()
        self.assertEqual(client.terminate(signal.SIGINT), 0)

    def test_last_line_without_newline_is_answered(self):
        client = self.serve()
        client.send({"jsonrpc": "2.0", "id": "no-newline", "method": "ping"}, newline=False)
        self.assertEqual(client.close(), 0)
        lines = client.stdout_lines()
        self.assertTrue(lines, "no output at all")
        self.assertEqual(json.loads(lines[-1]),
                         {"jsonrpc": "2.0", "id": "no-newline", "result": {}})

    def test_last_write_without_newline_is_committed(self):
        client = self.serve()
        client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "remember",
                                "arguments": {"category": "c", "key": "tail",
                                              "body": "written at eof"}}}, newline=False)
        self.assertEqual(client.close(), 0)
        response = json.loads(client.stdout_lines()[-1])
        self.assertIs(response["result"]["isError"], False)
        again = self.serve()
        self.assertEqual(self.call_ok(again, "get", {"category": "c", "key": "tail"})["body"],
                         "written at eof")

    def test_logs_go_to_stderr_only(self):
        client = self.serve()
        self.assertEqual(client.close(), 0)
        # The only stdout line is the initialize response; the banner went to stderr.
        self.assertEqual(len(client.stdout_lines()), 1)
        self.assertIn("strata", client.stderr_text())

    def test_serve_subcommand(self):
        client = self.spawn("serve")
        result = client.initialize("2025-06-18")
        self.assertEqual(result["protocolVersion"], "2025-06-18")
        self.assertEqual(client.close(), 0)


if __name__ == "__main__":
    mcp_client.run_tests()
