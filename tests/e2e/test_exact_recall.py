"""Recall that never loses an exact match, in any language (docs/design.md §5): identifiers of
every shape, adjacent words, Chinese, Japanese, Korean and German, and an unrelated query, in
the fts5, dense, hybrid and default modes, under the canonical and the perseus_vault_* names.

One store per dialect holds the NOTES below, among distractors that share words, parts of
identifiers or topics with them, so that an item can only come first by the rule under test.

Run: python3 tests/e2e/test_exact_recall.py <path-to-strata-binary>
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase  # noqa: E402

# Only against hangs: how long the background worker may take to embed and index the notes.
WORKER_DEADLINE = 60.0

NOTES = [
    ("cve", "Fixed CVE-2023-5678: a heap overflow in the TLS record parser."),
    ("version", "Upgraded openssl to 3.0.11-1~deb12u2 on every build host."),
    ("host", "db-prod-07 ran out of disk space during the nightly backup."),
    ("bug", "Closes: #1002301, the installer no longer hangs on slow mirrors."),
    ("path", "The rank fusion rule lives in src/recall/fusion.cc and has unit tests."),
    ("sha", "Reverted commit 3f2a9c1e4b7d0c2a because it broke the release build."),
    ("phrase", "Invoice storage moved to the archive bucket last spring."),
    ("zh", "我们决定使用数据库来存储发票"),
    ("ja", "請求書はデータベースに保存します"),
    ("ko", "청구서는 데이터베이스에 저장합니다"),
    ("ko-log", "서버에서 로그를 확인했습니다"),  # "checked the logs on the server"
    ("de", "Die Rechnungen werden im Archiv gespeichert."),
]

DISTRACTORS = [
    ("cve-parts", "The 2023 security audit listed CVE numbers; 5678 lines were reviewed."),
    ("openssl", "openssl 3.0 is the default TLS library on Debian 12 build hosts."),
    ("db-prod", "The prod database db cluster has 07 replicas in the east region."),
    ("bug-number", "Bug 1002 was a duplicate; the mirror list is refreshed every 301 seconds."),
    ("recall", "Recall fusion merges the keyword and the dense results by rank."),
    ("commit", "Every commit to the release branch runs the full build and the tests."),
    ("invoice", "Each invoice is checked by finance; cold storage is cheaper, the archive too."),
    ("backup", "The nightly backup copies every database to the archive bucket."),
    ("tls", "TLS certificates are renewed sixty days before they expire."),
    ("mirrors", "Slow mirrors are dropped from the installer's list after three timeouts."),
    ("disk", "Disk space alerts fire at ninety percent on every host."),
    ("parser", "The JSON parser rejects bodies nested deeper than 128 levels."),
    # "data, base": most character pairs of 데이터베이스를, the particle's among them.
    ("ko-pairs", "데이터 베이스를"),
]

# (query, the note it must find first).
EXACT = [
    ("CVE-2023-5678", "cve"),
    ("3.0.11-1~deb12u2", "version"),
    ("db-prod-07", "host"),
    ("#1002301", "bug"),
    ("1002301", "bug"),
    ("src/recall/fusion.cc", "path"),
    ("fusion.cc", "path"),
    ("3f2a9c1", "sha"),
    ("invoice storage", "phrase"),
    ("数据库", "zh"),
    ("如何存储发票", "zh"),  # "how are invoices stored": a sentence shares some of its words.
    ("データベース", "ja"),
    ("데이터베이스", "ko"),
    # Korean words with another particle than the note's (조사: 를, 가, 의).
    ("데이터베이스를", "ko"),
    ("청구서가", "ko"),
    ("서버의 로그", "ko-log"),
    ("Rechnung", "de"),
]

UNRELATED = "quantum chromodynamics lattice"


class CanonicalDialect:
    """The tools under docs/design.md's names; results from structuredContent."""

    def __init__(self, test, client):
        self.test, self.client = test, client

    def call(self, verb, arguments):
        return self.test.call_ok(self.client, verb, arguments)

    def remember(self, key, text):
        return self.call("remember", {"category": "notes", "key": key, "body": {"text": text},
                                      "dedup": False})


class PerseusDialect(CanonicalDialect):
    """perseus_vault_* with docs/compat.md's argument names; results read as its clients do,
    from json.loads(content[0].text)."""

    def call(self, verb, arguments):
        structured, is_error, raw = self.client.call_tool("perseus_vault_" + verb, arguments)
        self.test.assertIs(is_error, False, "%s(%r): %r" % (verb, arguments, raw))
        return json.loads(raw["content"][0]["text"])

    def remember(self, key, text):
        return self.call("remember", {"category": "notes", "key": key,
                                      "body_json": json.dumps({"text": text}),
                                      "skip_dedup": True})


class ExactRecallMixin:
    dialect = None  # Set by the concrete class.

    def setUp(self):
        super().setUp()
        self.client = self.serve()
        self.d = self.dialect(self, self.client)
        for key, text in NOTES + DISTRACTORS:
            self.d.remember(key, text)
        self.embeddings = self.wait_indexed()

    def wait_indexed(self):
        return mcp_client.wait_indexed(lambda: self.d.call("stats", {})["embeddings"],
                                       WORKER_DEADLINE, floor=True)

    def recall(self, query, mode=None):
        arguments = {"query": query, "limit": 10}
        if mode is not None:
            arguments["mode"] = mode
        return self.d.call("recall", arguments)

    def keys(self, query, mode=None):
        return [item["key"] for item in self.recall(query, mode)["items"]]

    def test_exact_matches_come_first_in_every_keyword_mode(self):
        for query, key in EXACT:
            for mode in ("fts5", "hybrid", None):
                with self.subTest(query=query, mode=mode or "default"):
                    keys = self.keys(query, mode)
                    self.assertTrue(keys, "nothing found")
                    self.assertEqual(keys[0], key, keys)

    def test_default_mode_is_hybrid_once_indexed(self):
        self.assertEqual(self.recall("invoice storage")["mode"], "hybrid")

    def test_dense_returns_only_matches_above_the_floor(self):
        floor = self.embeddings["similarity_floor"]
        self.assertGreaterEqual(floor, 0)
        for query, _ in EXACT:
            with self.subTest(query=query):
                for item in self.recall(query, "dense")["items"]:
                    self.assertGreater(item["score"], floor, item)

    def test_an_unrelated_query_gets_an_empty_answer(self):
        for mode in ("fts5", "dense", "hybrid", None):
            with self.subTest(mode=mode or "default"):
                self.assertEqual(self.keys(UNRELATED, mode), [])

    def test_adjacent_words_rank_above_scattered_ones(self):
        # "invoice" note has both words too, apart; the phrase note has them together.
        keys = self.keys("invoice storage", "fts5")
        self.assertLess(keys.index("phrase"), keys.index("invoice"), keys)

    def test_an_identifier_is_also_found_by_its_parts(self):
        self.assertIn("cve", self.keys("5678", "fts5"))
        self.assertIn("host", self.keys("prod 07", "fts5"))
        self.assertIn("version", self.keys("deb12u2", "fts5"))


class CanonicalExactRecall(ExactRecallMixin, StrataTestCase):
    dialect = CanonicalDialect


class PerseusExactRecall(ExactRecallMixin, StrataTestCase):
    dialect = PerseusDialect


if __name__ == "__main__":
    mcp_client.run_tests()
