"""The command line for people: --version, remember/recall/history/stats, --json, errors and
how the database path is chosen (--db, $STRATA_DB, $XDG_DATA_HOME, $HOME).

Run: python3 tests/e2e/test_cli.py <path-to-strata-binary>
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase  # noqa: E402

RUN_TIMEOUT = 60  # only against hangs


class Cli(StrataTestCase):

    def setUp(self):
        super().setUp()
        self.home = os.path.join(self.tmp, "home")
        self.xdg = os.path.join(self.tmp, "xdg")
        os.makedirs(self.home)
        os.makedirs(self.xdg)

    def env(self, **overrides):
        env = {k: v for k, v in os.environ.items()
               if k not in ("STRATA_DB", "XDG_DATA_HOME", "HOME")}
        env["HOME"] = self.home
        env["XDG_DATA_HOME"] = self.xdg
        for k, v in overrides.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def run_cli(self, *args, env=None, db=True):
        argv = [mcp_client.BINARY]
        if db:
            argv += ["--db", self.db]
        argv += list(args)
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=RUN_TIMEOUT, env=env or self.env(), cwd=self.tmp)

    def ok(self, *args, **kw):
        p = self.run_cli(*args, **kw)
        self.assertEqual(p.returncode, 0, "strata %s: exit %d, stderr %r"
                         % (" ".join(args), p.returncode, p.stderr.decode()))
        return p.stdout.decode("utf-8")

    def assertNotJson(self, text):
        try:
            json.loads(text)
        except ValueError:
            return
        self.fail("expected readable text, got JSON: %r" % text[:200])

    def test_version(self):
        p = self.run_cli("--version", db=False)
        self.assertEqual(p.returncode, 0)
        out = p.stdout.decode()
        self.assertRegex(out.strip(), r"^strata \d+\.\d+\.\d+")
        # The same version the server reports in initialize.
        client = self.spawn()
        info = client.initialize("2025-06-18")["serverInfo"]
        self.assertIn(info["version"], out)

    def test_help(self):
        out = self.ok("--help", db=False)
        for word in ("remember", "recall", "history", "stats", "encode", "--db"):
            self.assertIn(word, out)

    def test_remember_recall_history_stats(self):
        out = self.ok("remember", "--category", "project", "--key", "codename",
                      "--body", "The project codename is bluebird")
        self.assertIn("created", out)
        self.assertIn("project/codename", out)
        self.assertNotJson(out)

        out = self.ok("recall", "codename", "bluebird")
        self.assertIn("project/codename", out)
        self.assertIn("The project codename is bluebird", out)
        self.assertNotJson(out)

        out = self.ok("recall", "bluebird", "--json")
        r = json.loads(out)
        self.assertEqual([i["key"] for i in r["items"]], ["codename"])
        self.assertEqual(r["items"][0]["body"], "The project codename is bluebird")

        # No keyword matches. (Dense and hybrid rank every memory by meaning, so this is
        # about the keyword mode.)
        out = self.ok("recall", "nothing-matches-this", "--mode", "fts5")
        self.assertIn("no memories", out.lower())

        self.ok("remember", "--category", "project", "--key", "codename",
                "--body", "The project codename is now kestrel")
        out = self.ok("history", "project", "codename")
        self.assertIn("project/codename", out)
        self.assertIn("2 version", out)
        self.assertIn("kestrel", out)
        self.assertIn("bluebird", out)
        self.assertLess(out.index("kestrel"), out.index("bluebird"), "newest first")
        self.assertNotJson(out)
        h = json.loads(self.ok("history", "project", "codename", "--json"))
        self.assertEqual(h["total"], 2)

        out = self.ok("stats")
        self.assertRegex(out, r"memories: 1 active")
        self.assertIn("project", out)
        self.assertNotJson(out)
        s = json.loads(self.ok("--json", "stats"))
        self.assertEqual(s["total_memories"], 1)
        self.assertEqual(s["by_category"], {"project": 1})

    def test_remember_options(self):
        out = self.ok("remember", "--category", "pref", "--key", "editor",
                      "--body-json", '{"text": "helix with a light theme"}',
                      "--type", "preference", "--tags", "tools,editor",
                      "--valid-from", "2026-03-01T12:00:00Z", "--json")
        r = json.loads(out)
        self.assertEqual(r["action"], "created")
        self.assertEqual(r["valid_from"], 1772366400000)
        r = json.loads(self.ok("recall", "helix", "--tags", "editor", "--type", "preference",
                               "--json"))
        self.assertEqual(len(r["items"]), 1)
        self.assertEqual(r["items"][0]["body"], {"text": "helix with a light theme"})
        self.assertEqual(r["items"][0]["tags"], ["tools", "editor"])
        r = json.loads(self.ok("recall", "helix", "--tags", "nope", "--json"))
        self.assertEqual(r["items"], [])
        r = json.loads(self.ok("recall", "helix", "--valid-at", "2026-02-01", "--json"))
        self.assertEqual(r["items"], [])

    def test_cli_and_mcp_share_the_database(self):
        self.ok("remember", "--category", "c", "--key", "k", "--body", "shared between both")
        client = self.serve()
        got = self.call_ok(client, "get", {"category": "c", "key": "k"})
        self.assertEqual(got["body"], "shared between both")
        self.assertEqual(client.close(), 0)

    def test_unknown_command(self):
        p = self.run_cli("frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertIn("frobnicate", p.stderr.decode())
        self.assertEqual(p.stdout, b"")

    def test_unknown_option(self):
        p = self.run_cli("recall", "x", "--frobnicate", "1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--frobnicate", p.stderr.decode())
        self.assertEqual(p.stdout, b"")
        p = self.run_cli("--no-such-flag=1", db=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no-such-flag", p.stderr.decode())
        # An option that needs a value and has none.
        p = self.run_cli("--db", db=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--db", p.stderr.decode())
        # Bad values of known options.
        for args in (["--durability", "sometimes"], ["--compat", "mem0"],
                     ["--max-line-bytes", "ten"]):
            with self.subTest(args=args):
                p = self.run_cli(*args)
                self.assertEqual(p.returncode, 2)
                self.assertIn(args[0], p.stderr.decode())

    def test_bad_arguments_fail_with_a_message(self):
        p = self.run_cli("remember", "--category", "c", "--body", "no key")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("key", p.stderr.decode())
        self.assertEqual(p.stdout, b"")
        p = self.run_cli("history", "only-category")
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.strip())
        p = self.run_cli("recall", "x", "--limit", "0")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("limit", p.stderr.decode())
        p = self.run_cli("remember", "--category", "c", "--key", "k", "--body", "x",
                         "--valid-from", "someday")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("valid_from", p.stderr.decode())

    def test_encode(self):
        # The embedder alone: no database is opened or created.
        out = self.ok("encode", "--embedder", "builtin", "hello", "world")
        self.assertEqual(out.count("\n"), 1)
        got = json.loads(out)
        self.assertTrue(got["embedder"].startswith("builtin/"), got["embedder"])
        self.assertEqual(got["dim"], 384)
        self.assertEqual(len(got["vectors"]), 2)
        for v in got["vectors"]:
            self.assertEqual(len(v), 384)
            self.assertAlmostEqual(sum(x * x for x in v), 1.0, places=4)
        self.assertNotEqual(got["vectors"][0], got["vectors"][1])
        self.assertFalse(os.path.exists(self.db))
        for spec, word in (("frobnicate", "frobnicate"), ("bert", "dir"),
                           ("bert:dir=" + os.path.join(self.tmp, "nowhere"), "nowhere")):
            with self.subTest(spec=spec):
                p = self.run_cli("encode", "--embedder", spec, "hello")
                self.assertEqual(p.returncode, 1)
                self.assertIn(word, p.stderr.decode())
                self.assertEqual(p.stdout, b"")

    def test_strata_db_env(self):
        env_db = os.path.join(self.tmp, "from-env", "env.db")
        os.makedirs(os.path.dirname(env_db))
        env = self.env(STRATA_DB=env_db)
        self.ok("remember", "--category", "c", "--key", "k", "--body", "via env",
                env=env, db=False)
        self.assertTrue(os.path.exists(env_db))
        self.assertFalse(os.path.exists(os.path.join(self.xdg, "strata", "memory.db")))
        r = json.loads(self.ok("recall", "env", "--json", env=env, db=False))
        self.assertEqual([i["key"] for i in r["items"]], ["k"])
        # --db wins over the environment.
        r = json.loads(self.ok("recall", "env", "--json", env=env))
        self.assertEqual(r["items"], [])

    def test_xdg_data_home_default(self):
        env = self.env()
        self.ok("remember", "--category", "c", "--key", "k", "--body", "via xdg",
                env=env, db=False)
        path = os.path.join(self.xdg, "strata", "memory.db")
        self.assertTrue(os.path.exists(path))
        r = json.loads(self.ok("recall", "xdg", "--json", env=env, db=False))
        self.assertEqual([i["key"] for i in r["items"]], ["k"])
        self.assertFalse(os.path.exists(os.path.join(self.home, ".local", "share", "strata")))

    def test_home_default_without_xdg(self):
        env = self.env(XDG_DATA_HOME=None)
        self.ok("stats", env=env, db=False)
        self.assertTrue(os.path.exists(
            os.path.join(self.home, ".local", "share", "strata", "memory.db")))

    def test_server_uses_the_default_path_too(self):
        client = self.spawn(use_db=False, env=self.env())
        client.initialize("2025-06-18")
        self.call_ok(client, "remember", {"category": "c", "key": "k", "body": "served"})
        self.assertEqual(client.close(), 0)
        self.assertTrue(os.path.exists(os.path.join(self.xdg, "strata", "memory.db")))
        r = json.loads(self.ok("recall", "served", "--json", env=self.env(), db=False))
        self.assertEqual(len(r["items"]), 1)


if __name__ == "__main__":
    mcp_client.run_tests()
