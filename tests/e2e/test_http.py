"""MCP over HTTP (`strata serve --http`, docs/protocol.md "The HTTP transport"): sessions,
server-sent events, Origin checks, bearer tokens and their workspaces, JWT access tokens
(keys made and tokens signed with the openssl command), SIGHUP reload, many clients at once,
SIGTERM.

The server listens on 127.0.0.1 port 0 and the test reads the port it bound from its start
line on stderr. Requests use http.client, one connection each (but where a test keeps one).

Run: python3 tests/e2e/test_http.py <path-to-strata-binary>
"""

import base64
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402

# Bounds against hangs only, never asserted as timings.
START_DEADLINE = 30.0
EXIT_DEADLINE = 30.0
REQUEST_TIMEOUT = 30.0

VERSION = "2025-06-18"
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
# What every POST of these tests says of its body and of the answers it takes.
POST_HEADERS = {"Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
ADMIN_TOKEN = "admin-token-0123456789abcdef"
TEAM_A_TOKEN = "team-a-token-0123456789abcdef"
NEW_TOKEN = "new-token-0123456789abcdefgh"


class HttpServer:
    """One `strata serve --http 127.0.0.1:0` process; stderr goes to a file."""

    def __init__(self, binary, db, tmp, *extra):
        self.stderr_path = os.path.join(tmp, "stderr-%d.txt" % time.monotonic_ns())
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--http", "127.0.0.1:0"] + mcp_client.store_args(db, tmp)
            + list(extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr)
        self.port = None
        deadline = time.monotonic() + START_DEADLINE
        while self.port is None:
            match = re.search(r"serving MCP over HTTP at http://127\.0\.0\.1:(\d+)/mcp",
                              self.stderr())
            if match:
                self.port = int(match.group(1))
            elif self.proc.poll() is not None:
                raise AssertionError("server exited %s: %s" % (self.proc.returncode,
                                                               self.stderr()))
            elif time.monotonic() > deadline:
                raise AssertionError("server did not start: " + self.stderr())
            else:
                time.sleep(0.05)

    def stderr(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_stderr(self, text, count=1):
        deadline = time.monotonic() + START_DEADLINE
        while self.stderr().count(text) < count:
            if time.monotonic() > deadline:
                raise AssertionError("no %r on stderr: %s" % (text, self.stderr()))
            time.sleep(0.05)

    def request(self, method, body=None, headers=None, path="/mcp"):
        """(status, headers dict with lower-case names, body bytes)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)
        try:
            all_headers = dict(POST_HEADERS)
            all_headers.update(headers or {})
            data = None if body is None else (
                body if isinstance(body, bytes) else json.dumps(body).encode("utf-8"))
            conn.request(method, path, body=data, headers=all_headers)
            response = conn.getresponse()
            out = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, out
        finally:
            conn.close()

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=EXIT_DEADLINE)
        finally:
            self._stderr.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


class Session:
    """An initialized session on `server`, with an optional bearer token."""

    def __init__(self, server, token=None, version=VERSION):
        self.server = server
        self.token = token
        self.next_id = 1
        status, headers, body = self.post_raw(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": version, "capabilities": {},
                        "clientInfo": {"name": "test_http", "version": "1"}}},
            session=False)
        if status != 200:
            raise AssertionError("initialize: %d %s" % (status, body))
        self.id = headers.get("mcp-session-id")
        self.version = json.loads(body)["result"]["protocolVersion"]
        status, _, _ = self.post_raw({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise AssertionError("notifications/initialized: %d" % status)

    def headers(self, session=True):
        h = {}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if session and getattr(self, "id", None):
            h["Mcp-Session-Id"] = self.id
            h["MCP-Protocol-Version"] = self.version
        return h

    def post_raw(self, message, session=True, headers=None):
        h = self.headers(session)
        h.update(headers or {})
        return self.server.request("POST", message, h)

    def request(self, method, params=None):
        self.next_id += 1
        status, _, body = self.post_raw(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        if status != 200:
            raise AssertionError("%s: HTTP %d %s" % (method, status, body))
        response = json.loads(body)
        if response.get("id") != self.next_id:
            raise AssertionError("%s: wrong id: %s" % (method, response))
        return response

    def call(self, name, arguments):
        """The tool result object (content, structuredContent, isError)."""
        response = self.request("tools/call", {"name": name, "arguments": arguments})
        if "result" not in response:
            raise AssertionError("%s: %s" % (name, response))
        return response["result"]

    def call_ok(self, name, arguments):
        result = self.call(name, arguments)
        if result.get("isError"):
            raise AssertionError("%s failed: %s" % (name, result))
        return result["structuredContent"]

    def call_error(self, name, arguments):
        """The error text of a call that must fail as a tool error."""
        result = self.call(name, arguments)
        if not result.get("isError"):
            raise AssertionError("%s succeeded: %s" % (name, result))
        return result["content"][0]["text"]


def remember(key, body, workspace=None, category="notes"):
    args = {"category": category, "key": key, "body": body}
    if workspace is not None:
        args["workspace"] = workspace
    return args


class HttpTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="strata-http-")
        self.tmp = self._tmp.name
        self.db = os.path.join(self.tmp, "memory.db")
        if mcp_client.ON_POSTGRES:
            self.db = mcp_client.fresh_pg_database(self.id().rsplit(".", 1)[-1])
        self.token_file = os.path.join(self.tmp, "tokens")
        self._servers = []

    def tearDown(self):
        for server in self._servers:
            server.kill()
        self._tmp.cleanup()

    def start(self, *extra):
        server = HttpServer(mcp_client.BINARY, self.db, self.tmp, *extra)
        self._servers.append(server)
        return server

    def run_clients(self, client, count):
        """Runs client(0) .. client(count - 1) at once, each on a thread, to the end."""
        threads = [threading.Thread(target=client, args=(n,)) for n in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=REQUEST_TIMEOUT * 4)
        self.assertFalse(any(t.is_alive() for t in threads))

    def write_tokens(self, text):
        path = self.token_file + ".new"
        with open(path, "w") as f:
            f.write(text)
        os.replace(path, self.token_file)

    def start_with_tokens(self):
        self.write_tokens("# test tokens\n\n%s *\n%s team-a\n" % (ADMIN_TOKEN, TEAM_A_TOKEN))
        return self.start("--auth-token-file", self.token_file)


class TransportTest(HttpTestCase):
    def test_initialize_list_remember_recall(self):
        server = self.start()
        s = Session(server)
        self.assertRegex(s.id, r"^[0-9a-f]{32}$")
        self.assertEqual(s.version, VERSION)
        names = {t["name"] for t in s.request("tools/list")["result"]["tools"]}
        self.assertIn("remember", names)
        self.assertIn("recall", names)
        written = s.call_ok("remember", remember("db", {"text": "the database is PostgreSQL 16"}))
        self.assertEqual(written["action"], "created")
        found = s.call_ok("recall", {"query": "PostgreSQL"})
        self.assertEqual([i["key"] for i in found["items"]], ["db"])
        # Two sessions get different ids and both work.
        other = Session(server)
        self.assertNotEqual(other.id, s.id)
        self.assertEqual(other.call_ok("get", {"category": "notes", "key": "db"})["found"], True)

    def test_session_id_required_and_checked(self):
        server = self.start()
        s = Session(server)
        message = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
        status, _, body = server.request("POST", message)
        self.assertEqual(status, 400, body)
        self.assertIn("Mcp-Session-Id", json.loads(body)["error"]["message"])
        status, _, _ = server.request("POST", message, {"Mcp-Session-Id": "0" * 32})
        self.assertEqual(status, 404)
        # The protocol version header must be the session's.
        status, _, _ = server.request("POST", message, {"Mcp-Session-Id": s.id,
                                                        "MCP-Protocol-Version": "2025-11-25"})
        self.assertEqual(status, 400)
        for version in ("1900-01-01", "not-a-version"):
            status, _, _ = server.request("POST", message, {"Mcp-Session-Id": s.id,
                                                            "MCP-Protocol-Version": version})
            self.assertEqual(status, 400, version)
        # Without the header, the session's version is assumed.
        status, _, _ = server.request("POST", message, {"Mcp-Session-Id": s.id})
        self.assertEqual(status, 200)
        # initialize never reuses a session.
        status, _, _ = s.post_raw({"jsonrpc": "2.0", "id": 6, "method": "initialize",
                                   "params": {"protocolVersion": VERSION}})
        self.assertEqual(status, 400)
        # DELETE ends it.
        status, _, _ = server.request("DELETE", None, {"Mcp-Session-Id": s.id})
        self.assertEqual(status, 204)
        status, _, _ = s.post_raw(message)
        self.assertEqual(status, 404)
        status, _, _ = server.request("DELETE", None, {"Mcp-Session-Id": s.id})
        self.assertEqual(status, 404)

    def test_notifications_and_responses_get_202(self):
        server = self.start()
        s = Session(server)
        for message in ({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 99}},
                        {"jsonrpc": "2.0", "id": 77, "result": {}}):
            status, _, body = s.post_raw(message)
            self.assertEqual(status, 202)
            self.assertEqual(body, b"")
        self.assertIn("result", s.request("ping"))

    def test_batch(self):
        server = self.start()
        s = Session(server)
        status, _, body = s.post_raw([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
        self.assertEqual(status, 200)
        self.assertEqual(sorted(r["id"] for r in json.loads(body)), [1, 2])

    def test_parse_error_is_400(self):
        server = self.start()
        s = Session(server)
        status, _, body = s.post_raw(b"{not json")
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], -32700)

    def test_progress_as_server_sent_events(self):
        server = self.start()
        s = Session(server)
        items = [remember("k%d" % i, "item %d" % i) for i in range(40)]
        status, headers, body = s.post_raw(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
             "params": {"name": "remember_batch", "arguments": {"items": items},
                        "_meta": {"progressToken": "batch-1"}}})
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/event-stream"), headers)
        events = [json.loads(line[len("data: "):]) for line in body.decode().split("\n")
                  if line.startswith("data: ")]
        self.assertGreaterEqual(len(events), 2, body)
        for event in events[:-1]:
            self.assertEqual(event["method"], "notifications/progress")
            self.assertEqual(event["params"]["progressToken"], "batch-1")
        self.assertEqual(events[-1]["id"], 9)
        self.assertEqual(events[-1]["result"]["structuredContent"]["created"], 40)
        # Without text/event-stream in Accept, the same request is answered as JSON.
        status, headers, body = s.post_raw(
            {"jsonrpc": "2.0", "id": 10, "method": "tools/call",
             "params": {"name": "recall", "arguments": {"query": "item"},
                        "_meta": {"progressToken": "r"}}},
            headers={"Accept": "application/json"})
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("application/json"))
        self.assertEqual(json.loads(body)["id"], 10)

    def test_cancelled_batch_writes_nothing(self):
        # The cancellation may reach the batch queued, in flight or after its answer: whichever,
        # a batch answered 202 (cancelled, no response) wrote nothing, one answered 200 all.
        server = self.start("--embedder", "none")
        s = Session(server)
        items = [remember("c%d" % i, "cancel me %d" % i) for i in range(3000)]
        outcome = {}

        def batch():
            outcome["answer"] = s.post_raw(
                {"jsonrpc": "2.0", "id": "big", "method": "tools/call",
                 "params": {"name": "remember_batch", "arguments": {"items": items}}})

        thread = threading.Thread(target=batch)
        thread.start()
        time.sleep(0.1)  # Most often the batch is in flight by now; any order is correct.
        status, _, _ = s.post_raw({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                   "params": {"requestId": "big"}})
        self.assertEqual(status, 202)
        thread.join(timeout=REQUEST_TIMEOUT * 2)
        status, _, body = outcome["answer"]
        stats = s.call_ok("stats", {})
        if status == 202:
            self.assertEqual(body, b"")
            self.assertEqual(stats["total_memories"], 0)
        else:
            self.assertEqual(status, 200, body)
            self.assertEqual(stats["total_memories"], 3000)
        # The id is served again afterwards.
        status, _, body = s.post_raw({"jsonrpc": "2.0", "id": "big", "method": "ping"})
        self.assertEqual((status, json.loads(body)["id"]), (200, "big"))

    def test_origin_checked(self):
        server = self.start("--allow-origin", "https://app.example.com")
        s = Session(server)
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example",
                       "http://localhost.evil.example:80"):
            status, _, _ = s.post_raw(ping, headers={"Origin": origin})
            self.assertEqual(status, 403, origin)
        for origin in ("http://localhost:3000", "http://127.0.0.1", "http://[::1]:8080",
                       "https://app.example.com"):
            status, _, _ = s.post_raw(ping, headers={"Origin": origin})
            self.assertEqual(status, 200, origin)

    def test_get_is_405_and_other_paths_404(self):
        server = self.start()
        status, headers, _ = server.request("GET", None)
        self.assertEqual(status, 405)
        self.assertIn("POST", headers.get("allow", ""))
        status, _, _ = server.request("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                      path="/other")
        self.assertEqual(status, 404)

    def test_stateless_revision_needs_no_session(self):
        server = self.start()
        status, headers, body = server.request(
            "POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "remember", "arguments": remember("s", "stateless"),
                                "_meta": STATELESS_META}})
        self.assertEqual(status, 200, body)
        self.assertNotIn("mcp-session-id", headers)
        result = json.loads(body)["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertFalse(result["isError"])

    def test_concurrent_clients(self):
        server = self.start()
        errors = []

        def client(n):
            try:
                s = Session(server)
                for i in range(5):
                    s.call_ok("remember", remember("c%d-%d" % (n, i), "client %d note %d" % (n, i),
                                                   workspace="w%d" % n))
                found = s.call_ok("recall", {"query": "note", "workspace": "w%d" % n,
                                             "limit": 50})
                if len(found["items"]) != 5:
                    errors.append("client %d saw %d items" % (n, len(found["items"])))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append("client %d: %r" % (n, e))

        self.run_clients(client, 8)
        self.assertEqual(errors, [])
        self.assertEqual(Session(server).call_ok("stats", {})["active_memories"], 40)

    def test_keep_alive_connections_beyond_the_workers(self):
        # More clients than the server's 8 workers, each calling back to back on one
        # connection: every call is answered, and none of the connections is closed by the
        # server after a handful of calls (each would connect again).
        server = self.start()
        clients, calls = 12, 30
        closed, errors = [], []

        def client(n):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_TIMEOUT)
            try:
                for i in range(calls):
                    body = json.dumps({
                        "jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "remember",
                                   "arguments": remember("k%d-%d" % (n, i), "keep %d %d" % (n, i)),
                                   "_meta": STATELESS_META}}).encode("utf-8")
                    conn.request("POST", "/mcp", body=body, headers=POST_HEADERS)
                    response = conn.getresponse()
                    result = json.loads(response.read())["result"]
                    if result["isError"]:
                        errors.append("client %d call %d: %s" % (n, i, result))
                    if response.will_close:
                        closed.append((n, i))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append("client %d: %r" % (n, e))
            finally:
                conn.close()

        self.run_clients(client, clients)
        self.assertEqual(errors, [])
        self.assertEqual(closed, [])
        self.assertEqual(Session(server).call_ok("stats", {})["active_memories"], clients * calls)

    def test_sigterm_and_sigint_exit_0(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            server = self.start()
            Session(server).call_ok("remember", remember("x", "y"))
            self.assertEqual(server.stop(sig), 0, server.stderr())
            self.assertIn("HTTP server stopped", server.stderr())

    def test_non_loopback_needs_tokens(self):
        for address in ("0.0.0.0:0", "[::]:0", "192.0.2.1:8765"):
            proc = subprocess.run(
                [mcp_client.BINARY, "serve", "--http", address, "--db", self.db],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=EXIT_DEADLINE)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(b"not a loopback address", proc.stderr)
        for address in ("127.0.0.1", "[::1", "127.0.0.1:99999", "::1:80"):
            proc = subprocess.run(
                [mcp_client.BINARY, "serve", "--http", address, "--db", self.db],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=EXIT_DEADLINE)
            self.assertEqual(proc.returncode, 2, (address, proc.stderr))

    def test_token_options_need_http(self):
        for option in ("--auth-token-file", "--allow-origin"):
            proc = subprocess.run(
                [mcp_client.BINARY, "serve", "--db", self.db, option, "x"],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=EXIT_DEADLINE)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(b"serve --http", proc.stderr)

    def test_bad_token_file_refused_at_start(self):
        self.write_tokens("short\n")
        proc = subprocess.run(
            [mcp_client.BINARY, "serve", "--http", "127.0.0.1:0", "--db", self.db,
             "--auth-token-file", self.token_file],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=EXIT_DEADLINE)
        self.assertEqual(proc.returncode, 2)
        self.assertIn(b":1:", proc.stderr)
        self.assertNotIn(b"short", proc.stderr.split(b":1:")[1])


class AuthorizationTest(HttpTestCase):
    def test_token_required(self):
        server = self.start_with_tokens()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": VERSION}}
        for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789abcdef"},
                        {"Authorization": "Basic " + ADMIN_TOKEN},
                        {"Authorization": "Bearer " + ADMIN_TOKEN[:-1]}):
            status, response_headers, _ = server.request("POST", ping, headers)
            self.assertEqual(status, 401, headers)
            self.assertTrue(response_headers.get("www-authenticate", "").startswith("Bearer"))
        status, _, _ = server.request("DELETE", None, {"Mcp-Session-Id": "x"})
        self.assertEqual(status, 401)
        Session(server, ADMIN_TOKEN).request("ping")

    def test_session_belongs_to_its_token(self):
        server = self.start_with_tokens()
        admin = Session(server, ADMIN_TOKEN)
        status, _, _ = server.request(
            "POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"Authorization": "Bearer " + TEAM_A_TOKEN, "Mcp-Session-Id": admin.id})
        self.assertEqual(status, 404)

    def test_restricted_token_learns_nothing_of_other_workspaces(self):
        server = self.start_with_tokens()
        admin = Session(server, ADMIN_TOKEN)
        team = Session(server, TEAM_A_TOKEN)
        secret = admin.call_ok("remember", remember("plan", "launch codes alpha",
                                                    workspace="team-b"))
        admin.call_ok("remember", remember("plan", "launch plan for team a", workspace="team-a"))
        admin.call_ok("remember", remember("global", "launch party", workspace=None))

        # Reads and writes naming team-b fail alike, whether or not the key exists there.
        def both(name, extra):
            there = team.call_error(name, dict({"category": "notes", "key": "plan",
                                                "workspace": "team-b"}, **extra))
            absent = team.call_error(name, dict({"category": "notes", "key": "nothing",
                                                 "workspace": "team-b"}, **extra))
            self.assertEqual(there, absent, name)
            self.assertNotIn("launch", there)
            return there

        for name, extra in (("get", {}), ("history", {}), ("as_of", {"as_of": 1}),
                            ("valid_at", {"valid_at": 1}),
                            ("bitemporal", {"tx_at": 1, "valid_at": 1}), ("forget", {}),
                            ("purge", {}), ("remember", {"body": "overwrite"}),
                            ("embed", {})):
            self.assertIn("team-b", both(name, extra))
        # The global workspace is another workspace too.
        team.call_error("get", {"category": "notes", "key": "global"})
        team.call_error("remember", remember("global", "mine"))
        # Perseus Vault names and argument names are held to the same rule.
        team.call_error("perseus_vault_get_entity",
                        {"category": "notes", "key": "plan", "workspace_hash": "team-b"})
        # supersedes in another workspace.
        team.call_error("remember", dict(remember("p2", "x", workspace="team-a"),
                                         supersedes={"category": "notes", "key": "plan",
                                                     "workspace": "team-b"}))
        # A batch: the item in team-b fails alone.
        batch = team.call_ok("remember_batch", {"items": [
            remember("ok", "fine", workspace="team-a"), remember("no", "nope", workspace="team-b")]})
        self.assertEqual([r["ok"] for r in batch["results"]], [True, False])
        # get by id of team-b's memory looks like an id that does not exist.
        self.assertEqual(team.call_ok("get", {"id": secret["id"]}),
                         {"found": False, "id": secret["id"]})
        self.assertEqual(team.call_ok("get", {"id": 10 ** 12}), {"found": False, "id": 10 ** 12})
        # recall: naming team-b fails; naming nothing searches team-a only.
        team.call_error("recall", {"query": "launch", "workspace": "team-b"})
        found = team.call_ok("recall", {"query": "launch"})
        self.assertEqual({(i["key"], i.get("workspace")) for i in found["items"]},
                         {("plan", "team-a")})
        self.assertEqual(len(team.call_ok("recall", {"query": "launch", "workspace": "team-a"})
                             ["items"]), 1)
        # Counts over every workspace are not for it.
        team.call_error("stats", {})
        # Its own workspace works, and the writes it was refused never happened.
        self.assertTrue(team.call_ok("get", {"category": "notes", "key": "plan",
                                             "workspace": "team-a"})["found"])
        b = admin.call_ok("get", {"category": "notes", "key": "plan", "workspace": "team-b"})
        self.assertEqual(b["version"], 1)
        self.assertFalse(admin.call_ok("get", {"category": "notes", "key": "no",
                                               "workspace": "team-b"})["found"])
        self.assertEqual(admin.call_ok("stats", {})["active_memories"], 4)

    def test_sighup_reloads_tokens(self):
        server = self.start_with_tokens()
        Session(server, ADMIN_TOKEN)
        with self.assertRaises(AssertionError):
            Session(server, NEW_TOKEN)
        self.write_tokens("%s\n" % NEW_TOKEN)
        server.proc.send_signal(signal.SIGHUP)
        server.wait_stderr("re-read")
        Session(server, NEW_TOKEN).call_ok("stats", {})  # No list: every workspace.
        with self.assertRaises(AssertionError):
            Session(server, ADMIN_TOKEN)
        # A bad file keeps the tokens in use and says why.
        self.write_tokens("%s team-a,,team-b\n" % ADMIN_TOKEN)
        server.proc.send_signal(signal.SIGHUP)
        server.wait_stderr("keeping the tokens in use")
        self.assertIn(":1:", server.stderr())
        Session(server, NEW_TOKEN).request("ping")
        self.assertEqual(server.stop(), 0)


ISSUER = "https://auth.example.com/realms/team"
AUDIENCE = "https://memory.example.com/mcp"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class RsaKey:
    """An RSA key pair made by the openssl command, its JWK, and RS256 signing."""

    def __init__(self, tmp, kid):
        self.kid = kid
        self.pem = os.path.join(tmp, kid + ".pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", self.pem], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        modulus = subprocess.run(["openssl", "rsa", "-in", self.pem, "-noout", "-modulus"],
                                 check=True, capture_output=True).stdout.decode().strip()
        n = bytes.fromhex(modulus.split("=", 1)[1])
        self.jwk = {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64url(n),
                    "e": b64url((65537).to_bytes(3, "big"))}

    def token(self, **claims):
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "agent-1", "exp": int(time.time()) + 600,
                "scope": "workspace:team-a"}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        header = {"alg": "RS256", "typ": "at+jwt", "kid": self.kid}
        signed = (b64url(json.dumps(header).encode()) + "." +
                  b64url(json.dumps(body).encode())).encode()
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.pem],
                                   input=signed, check=True, capture_output=True).stdout
        return signed.decode() + "." + b64url(signature)


class JwtTest(HttpTestCase):
    def setUp(self):
        super().setUp()
        self.key = RsaKey(self.tmp, "key-1")
        self.jwks = os.path.join(self.tmp, "jwks.json")
        self.write_jwks(self.key)

    def write_jwks(self, *keys):
        with open(self.jwks + ".new", "w") as f:
            json.dump({"keys": [k.jwk for k in keys]}, f)
        os.replace(self.jwks + ".new", self.jwks)

    def start_with_jwt(self, *extra):
        return self.start("--auth-jwks", self.jwks, "--auth-issuer", ISSUER,
                          "--auth-audience", AUDIENCE, *extra)

    def test_token_grants_the_workspaces_of_its_scope(self):
        server = self.start_with_jwt()
        team = Session(server, self.key.token(scope="openid workspace:team-a"))
        team.call_ok("remember", remember("plan", "the launch plan", workspace="team-a"))
        self.assertIn("team-b", team.call_error("remember", remember("x", "y", workspace="team-b")))
        team.call_error("stats", {})
        admin = Session(server, self.key.token(sub="admin", scope="workspace:*"))
        self.assertEqual(admin.call_ok("stats", {})["active_memories"], 1)
        # A refreshed token of the same subject keeps the session; another subject's does not.
        later = self.key.token(scope="workspace:team-a", exp=int(time.time()) + 1200)
        status, _, _ = server.request("POST", {"jsonrpc": "2.0", "id": 9, "method": "ping"},
                                      {"Authorization": "Bearer " + later,
                                       "Mcp-Session-Id": team.id})
        self.assertEqual(status, 200)
        status, _, _ = server.request("POST", {"jsonrpc": "2.0", "id": 9, "method": "ping"},
                                      {"Authorization": "Bearer " + admin.token,
                                       "Mcp-Session-Id": team.id})
        self.assertEqual(status, 404)
        self.assertIn("JWTs from " + ISSUER, server.stderr())

    def test_refusals_point_at_the_resource_metadata(self):
        server = self.start_with_jwt()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": VERSION}}
        metadata_url = "https://memory.example.com/.well-known/oauth-protected-resource/mcp"
        status, headers, _ = server.request("POST", ping)
        self.assertEqual(status, 401)
        self.assertIn('resource_metadata="%s"' % metadata_url, headers["www-authenticate"])
        for claims, why in (({"exp": int(time.time()) - 3600}, "expired"),
                            ({"aud": "https://other.example.com/mcp"}, "another audience"),
                            ({"iss": "https://evil.example.com"}, "another issuer")):
            status, headers, body = server.request(
                "POST", ping, {"Authorization": "Bearer " + self.key.token(**claims)})
            self.assertEqual(status, 401, claims)
            self.assertIn('error="invalid_token"', headers["www-authenticate"])
            self.assertIn(why, json.loads(body)["error"]["message"])
        status, headers, _ = server.request(
            "POST", ping, {"Authorization": "Bearer " + self.key.token(scope="openid")})
        self.assertEqual(status, 403)
        self.assertIn('error="insufficient_scope"', headers["www-authenticate"])
        for path in ("/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-protected-resource"):
            status, _, body = server.request("GET", path=path)
            self.assertEqual(status, 200, path)
            metadata = json.loads(body)
            self.assertEqual(metadata["resource"], AUDIENCE)
            self.assertEqual(metadata["authorization_servers"], [ISSUER])

    def test_token_file_and_jwt_together(self):
        self.write_tokens("%s *\n" % ADMIN_TOKEN)
        server = self.start_with_jwt("--auth-token-file", self.token_file)
        Session(server, ADMIN_TOKEN).call_ok("stats", {})
        Session(server, self.key.token()).request("ping")
        with self.assertRaises(AssertionError):
            Session(server, "wrong-token-0123456789abcdef")

    def test_sighup_rotates_keys(self):
        server = self.start_with_jwt()
        old = self.key.token()
        Session(server, old).request("ping")
        new_key = RsaKey(self.tmp, "key-2")
        self.write_jwks(new_key)
        server.proc.send_signal(signal.SIGHUP)
        # Not "1 key": the line the server starts with says "(1 key(s))".
        server.wait_stderr("SIGHUP: re-read %s: 1 key" % self.jwks)
        with self.assertRaises(AssertionError):
            Session(server, old)
        Session(server, new_key.token()).request("ping")
        with open(self.jwks, "w") as f:
            f.write("{}")
        server.proc.send_signal(signal.SIGHUP)
        server.wait_stderr("keeping the JWKS keys in use")
        Session(server, new_key.token()).request("ping")

    def test_options_checked_at_start(self):
        for extra in (["--auth-jwks", self.jwks],
                      ["--auth-jwks", self.jwks, "--auth-issuer", ISSUER],
                      ["--auth-issuer", ISSUER, "--auth-audience", AUDIENCE]):
            p = subprocess.run([mcp_client.BINARY, "serve", "--http", "127.0.0.1:0", "--db",
                                self.db] + extra, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=EXIT_DEADLINE)
            self.assertEqual(p.returncode, 2, extra)
            self.assertIn("all three", p.stderr.decode())
        with open(self.jwks, "w") as f:
            f.write('{"keys": []}')
        p = subprocess.run([mcp_client.BINARY, "serve", "--http", "127.0.0.1:0", "--db", self.db,
                            "--auth-jwks", self.jwks, "--auth-issuer", ISSUER,
                            "--auth-audience", AUDIENCE], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=EXIT_DEADLINE)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no RS256 or ES256 signing key", p.stderr.decode())


if __name__ == "__main__":
    mcp_client.run_tests()
