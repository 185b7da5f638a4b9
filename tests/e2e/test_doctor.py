"""strata doctor: a healthy SQLite store, a corrupt one, a missing one, and PostgreSQL stores
(fresh, of a newer schema, unreachable). Run by tests/pg/with_cluster, which starts a throwaway
cluster and passes its URI in STRATA_TEST_PG_URI.

Run: tests/pg/with_cluster tools/pg-cluster python3 tests/e2e/test_doctor.py <strata-binary>
"""

import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase, fresh_pg_database, psql, restart_pg_cluster  # noqa: E402

RUN_TIMEOUT = 60  # only against hangs
LINE = re.compile(r"^(ok     |warning|error  )  ([a-z ]+): (.*)$")


class Doctor(StrataTestCase):

    def strata(self, *args):
        return subprocess.run([mcp_client.BINARY, "--db", self.db] + list(args),
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=RUN_TIMEOUT, cwd=self.tmp)

    def doctor(self, *args):
        """(exit code, {check: (level, detail)}); every line of stdout is a check's."""
        p = self.strata("doctor", *args)
        checks = {}
        for line in p.stdout.decode().splitlines():
            m = LINE.match(line)
            self.assertIsNotNone(m, "not a check's line: %r" % line)
            checks[m.group(2)] = (m.group(1).strip(), m.group(3))
        return p.returncode, checks

    def remember(self, n):
        for i in range(n):
            p = self.strata("remember", "--category", "people", "--key", "k%d" % i,
                            "--body", "person %d drinks tea at %d" % (i, i))
            self.assertEqual(p.returncode, 0, p.stderr)

    def test_healthy_store(self):
        self.remember(5)
        self.assertEqual(self.strata("embed").returncode, 0)
        code, checks = self.doctor()
        self.assertEqual(code, 0, checks)
        self.assertEqual(checks["integrity"], ("ok", "PRAGMA integrity_check: ok"))
        self.assertEqual(checks["schema"][0], "ok")
        self.assertEqual(checks["counts"],
                         ("ok", "5 memories (5 current), 5 versions, 0 aliases"))
        self.assertEqual(checks["dedup signatures"], ("ok", "complete"))
        self.assertEqual(checks["embedding backlog"][0], "ok")
        self.assertIn("vector index file", checks)
        self.assertFalse(any(level == "error" for level, _ in checks.values()))

    def test_backlog_is_a_warning(self):
        self.remember(3)
        code, checks = self.doctor()
        self.assertEqual(code, 0)
        self.assertEqual(checks["embedding backlog"][0], "warning")
        self.assertIn("3 versions without a vector", checks["embedding backlog"][1])

    def test_corrupt_store(self):
        self.remember(30)
        with sqlite3.connect(self.db) as c:
            root = c.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'versions'")
            page = root.fetchone()[0]
            page_size = c.execute("PRAGMA page_size").fetchone()[0]
        self.assertFalse(os.path.exists(self.db + "-wal") and os.path.getsize(self.db + "-wal"))
        with open(self.db, "r+b") as f:  # The versions table's cell pointers, out of range.
            f.seek((page - 1) * page_size + 12)
            f.write(b"\x00\x05" * 16)
        code, checks = self.doctor()
        self.assertEqual(code, 1, checks)
        self.assertEqual(checks["integrity"][0], "error")
        self.assertIn("out of range", checks["integrity"][1])

    def test_not_a_database(self):
        with open(self.db, "wb") as f:
            f.write(b"not a database, " * 512)
        code, checks = self.doctor()
        self.assertEqual(code, 1)
        self.assertEqual(checks["database"][0], "error")

    def test_missing_store_is_not_created(self):
        code, checks = self.doctor()
        self.assertEqual(code, 1)
        self.assertEqual(checks["database"], ("error", self.db + ": no such file"))
        self.assertFalse(os.path.exists(self.db))


class DoctorPostgres(StrataTestCase):

    def setUp(self):
        super().setUp()
        self.uri = fresh_pg_database(self.id().rsplit(".", 1)[-1])

    def psql(self, uri, sql):
        psql(uri, sql, timeout=RUN_TIMEOUT)

    def doctor(self, uri):
        """Doctor.doctor on the store `uri` (--db takes a URI as --store does)."""
        self.db = uri
        return Doctor.doctor(self)

    strata = Doctor.strata

    def test_fresh_database_has_migrations_pending(self):
        code, checks = self.doctor(self.uri)
        self.assertEqual(code, 0, checks)
        self.assertEqual(checks["reachable"], ("ok", "connected"))
        self.assertEqual(checks["server version"][0], "ok")
        self.assertTrue(checks["server version"][1].startswith("PostgreSQL 15."))
        self.assertEqual(checks["schema"][0], "warning")
        self.assertIn("0 migrations applied", checks["schema"][1])

    def test_versions_without_keyword_rows_are_a_warning(self):
        self.db = self.uri
        self.remember(3)
        code, checks = self.doctor(self.uri)
        self.assertEqual(code, 0, checks)
        self.assertEqual(checks["keyword index"], ("ok", "every version indexed"))
        # A few memories fit the test cluster's buffers (PostgreSQL's default, 128 MB).
        self.assertEqual(checks["memory"][0], "ok", checks)
        self.assertRegex(checks["memory"][1],
                         r"^database \d+ MiB, shared_buffers 128 MiB$")
        # As a node stopped between a write's commit and its keyword rows' leaves it.
        self.psql(self.uri, "DELETE FROM text_documents WHERE version_id = "
                            "(SELECT min(id) FROM versions)")
        code, checks = self.doctor(self.uri)
        self.assertEqual(code, 0, checks)
        self.assertEqual(checks["keyword index"][0], "warning")
        self.assertIn("1 versions without keyword rows", checks["keyword index"][1])

    remember = Doctor.remember

    def test_a_database_larger_than_shared_buffers_is_a_warning(self):
        self.db = self.uri
        self.remember(3)
        # This program's own cluster (tests/pg/with_cluster), restarted with 1 MB of buffers
        # and then with its own again.
        def restart_with(setting):
            self.psql(self.uri, "ALTER SYSTEM " + setting)
            restart_pg_cluster(timeout=RUN_TIMEOUT)

        restart_with("SET shared_buffers = '1MB'")
        try:
            code, checks = self.doctor(self.uri)
        finally:
            restart_with("RESET shared_buffers")
        self.assertEqual(code, 0, checks)
        self.assertEqual(checks["memory"][0], "warning", checks)
        self.assertRegex(checks["memory"][1],
                         r"^database \d+ MiB, larger than shared_buffers \(1 MiB\): ")

    def test_newer_schema_is_an_error(self):
        self.psql(self.uri, "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
                            "applied_at_unix_ms BIGINT NOT NULL DEFAULT 0); "
                            "INSERT INTO schema_migrations (version) VALUES (1), (999)")
        code, checks = self.doctor(self.uri)
        self.assertEqual(code, 1)
        self.assertEqual(checks["schema"][0], "error")
        self.assertIn("version 999", checks["schema"][1])

    def test_unreachable_and_malformed(self):
        code, checks = self.doctor("postgresql:///strata?host=/nonexistent-strata&port=1")
        self.assertEqual(code, 1)
        self.assertEqual(checks["reachable"][0], "error")
        code, checks = self.doctor("postgresql://[::1")
        self.assertEqual(code, 1)
        self.assertIn("malformed PostgreSQL URI", checks["reachable"][1])


if __name__ == "__main__":
    mcp_client.run_tests()
