"""Protocol eras end to end (docs/protocol.md): the session revisions 2024-11-05 to 2025-11-25
(initialize first), the stateless 2026-07-28 revision (no initialize; each request carries
its revision and the client's capabilities in params._meta; server/discover), a clean answer
to every request sent before initialize, and notifications/cancelled stopping a long
remember_batch or embed.

Run: python3 tests/e2e/test_eras.py <path-to-strata-binary>
With STRATA_TEST_STORE=postgresql (mcp_client.py) the store is a PostgreSQL database.
"""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase, sentence  # noqa: E402

SESSION_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
STATELESS = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_SERVER = "io.modelcontextprotocol/serverInfo"


def modern_meta(version=STATELESS, **extra):
    meta = {META_VERSION: version, META_CAPS: {},
            META_CLIENT: {"name": "strata-e2e", "version": "1"}}
    meta.update(extra)
    return meta


def memory(i, prefix="item"):
    """A memory whose words differ enough from every other's that dedup keeps it apart."""
    rng = random.Random("%s-%d" % (prefix, i))
    words = sentence(rng, 12)
    return {"category": "batch", "key": "%s-%d" % (prefix, i),
            "body": {"text": "batch note %d %s" % (i, words)}}


class SessionEras(StrataTestCase):
    def test_each_session_revision_serves_tools_without_stateless_fields(self):
        for version in SESSION_VERSIONS:
            with self.subTest(version=version):
                client = self.spawn("--embedder", "none")
                self.assertEqual(client.initialize(version)["protocolVersion"], version)
                listed = client.request("tools/list")["result"]
                self.assertNotIn("resultType", listed)
                self.assertNotIn("ttlMs", listed)
                self.call_ok(client, "remember", {"category": "c", "key": version,
                                                  "body": {"text": "era " + version}})
                found = self.call_ok(client, "recall", {"query": "era", "mode": "fts5"})
                self.assertGreaterEqual(len(found["items"]), 1)
                client.close()

    def test_initialize_asking_for_the_stateless_revision_gets_the_newest_session_one(self):
        client = self.spawn("--embedder", "none")
        self.assertEqual(client.initialize(STATELESS)["protocolVersion"], "2025-11-25")

    def test_every_request_before_initialize_gets_a_clean_answer(self):
        client = self.spawn("--embedder", "none")
        self.assertEqual(client.request("ping").get("result"), {})
        listed = client.request("tools/list")
        self.assertIn("remember", [t["name"] for t in listed["result"]["tools"]])
        written = self.call_ok(client, "remember", {"category": "c", "key": "early",
                                                    "body": {"text": "before initialize"}})
        self.assertTrue(written["ok"])
        unknown = client.request("resources/list")
        self.assertEqual(unknown["error"]["code"], -32601, unknown)
        discover = client.request("server/discover")  # Without _meta: malformed.
        self.assertEqual(discover["error"]["code"], -32602, discover)
        self.assertIn(META_VERSION, discover["error"]["message"])
        # initialize still works after all of that, and the write is there.
        self.assertEqual(client.initialize("2025-11-25")["protocolVersion"], "2025-11-25")
        got = self.call_ok(client, "get", {"category": "c", "key": "early"})
        self.assertEqual(got["body"]["text"], "before initialize")


class StatelessEra(StrataTestCase):
    def test_discover_names_versions_capabilities_server_and_tools(self):
        client = self.spawn("--embedder", "none")
        result = client.request("server/discover", {"_meta": modern_meta()})["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["supportedVersions"][0], STATELESS)
        self.assertEqual(sorted(result["supportedVersions"][1:]), SESSION_VERSIONS)
        self.assertIn("tools", result["capabilities"])
        self.assertEqual(result["serverInfo"]["name"], "strata")
        self.assertEqual(result["_meta"][META_SERVER]["name"], "strata")
        self.assertIsInstance(result["instructions"], str)
        names = [t["name"] for t in result["tools"]]
        listed = client.request("tools/list", {"_meta": modern_meta()})["result"]
        self.assertEqual(names, [t["name"] for t in listed["tools"]])
        self.assertIn("recall", names)

    def test_requests_without_initialize_carry_their_revision(self):
        client = self.spawn("--embedder", "none")
        listed = client.request("tools/list", {"_meta": modern_meta()})["result"]
        self.assertEqual(listed["resultType"], "complete")
        self.assertGreater(listed["ttlMs"], 0)
        self.assertIn(listed["cacheScope"], ("public", "private"))
        self.assertEqual(listed["_meta"][META_SERVER]["name"], "strata")
        for t in listed["tools"]:
            self.assertIn("outputSchema", t)
        call = client.request("tools/call", {
            "name": "remember", "_meta": modern_meta(),
            "arguments": {"category": "prefs", "key": "tea",
                          "body": {"text": "She drinks green tea after lunch"}}})["result"]
        self.assertEqual(call["resultType"], "complete")
        self.assertFalse(call["isError"])
        self.assertTrue(call["structuredContent"]["ok"])
        found = client.request("tools/call", {
            "name": "recall", "_meta": modern_meta(),
            "arguments": {"query": "green tea", "mode": "fts5"}})["result"]
        self.assertEqual(found["structuredContent"]["items"][0]["key"], "tea")
        # A tool failure is a result, shaped for the revision too.
        bad = client.request("tools/call", {"name": "get", "_meta": modern_meta(),
                                            "arguments": {"category": "prefs"}})["result"]
        self.assertTrue(bad["isError"])
        self.assertEqual(bad["resultType"], "complete")

    def test_an_unsupported_revision_is_refused_with_the_supported_list(self):
        client = self.spawn("--embedder", "none")
        for method in ("tools/list", "server/discover"):
            with self.subTest(method=method):
                response = client.request(method, {"_meta": modern_meta("1900-01-01")})
                error = response["error"]
                self.assertEqual(error["code"], -32022, response)
                self.assertEqual(error["data"]["requested"], "1900-01-01")
                self.assertIn(STATELESS, error["data"]["supported"])
                self.assertIn("2025-11-25", error["data"]["supported"])
        self.assertAlive(client)

    def test_malformed_meta_is_invalid_params(self):
        client = self.spawn("--embedder", "none")
        no_caps = client.request("tools/list", {"_meta": {META_VERSION: STATELESS}})
        self.assertEqual(no_caps["error"]["code"], -32602)
        self.assertIn(META_CAPS, no_caps["error"]["message"])
        not_string = client.request("tools/list", {"_meta": modern_meta(20260728)})
        self.assertEqual(not_string["error"]["code"], -32602)
        self.assertIn(META_VERSION, not_string["error"]["message"])

    def test_both_eras_on_one_process(self):
        client = self.serve("--embedder", "none", version="2025-06-18")
        modern = client.request("tools/list", {"_meta": modern_meta()})["result"]
        legacy = client.request("tools/list")["result"]
        self.assertEqual(modern["resultType"], "complete")
        self.assertNotIn("resultType", legacy)
        self.assertEqual(modern["tools"], legacy["tools"])

    def test_progress_notifications_in_the_stateless_revision(self):
        client = self.spawn("--embedder", "none")
        client.request("tools/call", {"name": "remember_batch", "_meta": modern_meta(),
                                      "arguments": {"items": [memory(i) for i in range(300)]}})
        client.send({"jsonrpc": "2.0", "id": "b", "method": "tools/call",
                     "params": {"name": "remember_batch",
                                "_meta": modern_meta(progressToken="p1"),
                                "arguments": {"items": [memory(i, "more")
                                                        for i in range(300)]}}})
        progress = []
        while True:
            message = client.read_message()
            if message.get("id") == "b":
                break
            self.assertEqual(message["method"], "notifications/progress", message)
            progress.append(message["params"]["progress"])
        self.assertEqual(message["result"]["resultType"], "complete")
        self.assertGreaterEqual(len(progress), 2)
        self.assertEqual(progress, sorted(progress))
        self.assertEqual(progress[-1], 300)


class Cancellation(StrataTestCase):
    def written_in(self, client, category, prefix):
        """How many memories of `prefix` the store holds in `category`."""
        found = self.call_ok(client, "recall", {"query": "batch note", "category": category,
                                                "mode": "fts5", "limit": 100})
        return sum(1 for item in found["items"] if item["key"].startswith(prefix))

    def read_until(self, client, id):
        """Messages until the response to `id`; fails if a response to another request
        comes first."""
        seen = []
        while True:
            message = client.read_message()
            seen.append(message)
            if message.get("id") == id:
                return seen

    def test_a_queued_request_cancelled_before_it_starts_gets_no_response(self):
        client = self.serve("--embedder", "none")
        batch = {"jsonrpc": "2.0", "id": "batch-1", "method": "tools/call",
                 "params": {"name": "remember_batch",
                            "arguments": {"items": [memory(i, "q") for i in range(50)]}}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": "batch-1", "reason": "test"}}
        ping = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
        # One write: the reader sees the cancellation before the batch reaches its turn, or
        # while it runs; either way it must not answer it or keep its writes.
        client.send_bytes(("\n".join(json.dumps(m) for m in (batch, cancel, ping)) + "\n")
                          .encode())
        seen = self.read_until(client, "after")
        self.assertEqual([m.get("id") for m in seen], ["after"], seen)
        self.assertEqual(self.written_in(client, "batch", "q-"), 0)

    def test_a_batch_cancelled_in_flight_stops_and_writes_nothing(self):
        client = self.serve("--embedder", "none")
        items = [memory(i, "big") for i in range(10000)]
        client.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                     "params": {"name": "remember_batch", "_meta": {"progressToken": "t"},
                                "arguments": {"items": items}}})
        first = client.read_message(timeout=120)
        self.assertEqual(first.get("method"), "notifications/progress", first)
        # The batch is running (it reported progress): cancel it.
        client.notify("notifications/cancelled", {"requestId": 77})
        client.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        seen = self.read_until(client, "after")
        responses = [m for m in seen if "id" in m]
        self.assertEqual([m["id"] for m in responses], ["after"],
                         "the cancelled batch was answered: %r" % responses[:1])
        self.assertTrue(all(m.get("method") == "notifications/progress"
                            for m in seen if "id" not in m))
        self.assertEqual(self.written_in(client, "batch", "big-"), 0)
        stats = self.call_ok(client, "stats")
        self.assertEqual(stats["total_memories"], 0, stats)

    def test_an_embed_cancelled_in_flight_gets_no_response(self):
        # A backlog written without an embedder, then a server with one.
        # On PostgreSQL a third of it: writes there take longer, and the worker, whose embedder
        # is the same, is as far from done when the embed call comes.
        backlog = 2000 if mcp_client.ON_POSTGRES else 6000
        writer = self.serve("--embedder", "none")
        for start in range(0, backlog, 2000):
            self.call_ok(writer, "remember_batch",
                         {"items": [dict(memory(i, "e"), dedup=False)
                                    for i in range(start, start + 2000)]})
        writer.close()
        client = self.serve()
        client.send({"jsonrpc": "2.0", "id": "embed-1", "method": "tools/call",
                     "params": {"name": "embed", "_meta": {"progressToken": 1},
                                "arguments": {"limit": 100000}}})
        message = client.read_message(timeout=120)
        if message.get("id") == "embed-1":
            # The worker had embedded nearly everything already; nothing was left to cancel.
            self.skipTest("the background worker embedded the backlog first")
        self.assertEqual(message.get("method"), "notifications/progress", message)
        client.notify("notifications/cancelled", {"requestId": "embed-1"})
        client.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        seen = self.read_until(client, "after")
        self.assertEqual([m["id"] for m in seen if "id" in m], ["after"], seen[-3:])
        # The server goes on serving, and the vectors stored before the cancel are kept.
        stats = self.call_ok(client, "stats")
        self.assertGreater(stats["embeddings"]["vectors"], 0, stats)

    def test_a_cancellation_after_the_response_does_not_touch_a_later_request(self):
        client = self.serve("--embedder", "none")
        self.assertEqual(client.request("ping", id=5).get("result"), {})
        # Late cancellation of 5, then a new request that reuses id 5, in one write.
        late = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        again = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
        client.send_bytes((json.dumps(late) + "\n" + json.dumps(again) + "\n").encode())
        self.assertEqual(client.read_message().get("id"), 5)
        # Unknown ids and malformed cancellations are ignored.
        client.notify("notifications/cancelled", {"requestId": "never-sent"})
        client.notify("notifications/cancelled", {"reason": "no id"})
        client.notify("notifications/cancelled", "not an object")
        self.assertAlive(client)

    def test_initialize_is_never_cancelled(self):
        client = self.spawn("--embedder", "none")
        init = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": "init"}}
        client.send_bytes((json.dumps(init) + "\n" + json.dumps(cancel) + "\n").encode())
        self.assertEqual(client.read_message()["result"]["protocolVersion"], "2025-11-25")


if __name__ == "__main__":
    mcp_client.run_tests()
