"""strata export / import / backup / restore through the real binary: a round trip gives the
same bytes, a second import reports every memory unchanged, bad lines are reported by number
on stderr (and stop the import, or are skipped), a backup taken while a server writes holds
every acknowledged write, and restore refuses while a server has the file open. Import from
other memories (server-memory JSONL, a Markdown folder, CSV, JSONL) is found by recall, and
an --as-of export imported elsewhere exports the same file.

With STRATA_TEST_STORE=postgresql (mcp_client.py) the stores are PostgreSQL databases: a store
exported from one goes into a SQLite file and back into another database, byte for byte, and
backup and restore are refused with the way to do it there.

Run: python3 tests/e2e/test_transfer.py <path-to-strata-binary>
"""

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase  # noqa: E402

RUN_TIMEOUT = 120  # only against hangs


def across_engines(export):
    """An export without its header's schema_version, which each engine numbers its own way:
    what a store on the other engine exports byte for byte."""
    header, rest = export.split(b"\n", 1)
    return re.sub(rb',"schema_version":\d+', b"", header, count=1) + b"\n" + rest


class Transfer(StrataTestCase):

    def run_cli(self, db, *args, input=None):
        argv = [mcp_client.BINARY, "--db", db] + list(args)
        return subprocess.run(argv, input=input, capture_output=True, timeout=RUN_TIMEOUT,
                              cwd=self.tmp)

    def ok(self, db, *args, input=None):
        p = self.run_cli(db, *args, input=input)
        self.assertEqual(p.returncode, 0, "strata %s: exit %d, stderr %r"
                         % (" ".join(args), p.returncode, p.stderr.decode()))
        return p

    def fill(self, db):
        """Several versions of one key (out of order in valid time), a forget and a revival,
        a supersedes link, an alias and two workspaces."""
        r = lambda *a: self.ok(db, "remember", *a)  # noqa: E731
        r("--category", "people", "--key", "alice", "--body", "senior engineer",
          "--valid-from", "2025-01-01", "--valid-to", "2025-10-01")
        r("--category", "people", "--key", "alice", "--body", "staff engineer",
          "--valid-from", "2025-10-01")
        r("--category", "models", "--key", "current", "--body", "opus-4-8",
          "--valid-from", "2026-02-20")
        r("--category", "models", "--key", "current", "--body", "opus-4-7",
          "--valid-from", "2025-12-01", "--valid-to", "2026-02-20")
        r("--category", "projects", "--key", "x", "--body", "on track")
        client = self.serve(db=db)
        self.call_ok(client, "forget", {"category": "projects", "key": "x"})
        client.close()
        r("--category", "projects", "--key", "x", "--body", "revived")
        notes = ("The storage service keeps every segment on three replicas across two "
                 "zones and compacts them nightly")
        r("--category", "notes", "--key", "storage", "--body", notes)
        merged = r("--category", "notes", "--key", "storage-copy", "--body", notes)
        self.assertIn("deduped", merged.stdout.decode())
        r("--category", "prefs", "--key", "go", "--body", "Maria prefers Go",
          "--valid-from", "2025-06-01")
        r("--category", "prefs", "--key", "rust", "--body", "Maria prefers Rust",
          "--valid-from", "2026-01-01", "--supersedes", "prefs/go")
        r("--category", "team", "--key", "lead", "--body", "bob")
        r("--category", "team", "--key", "lead", "--body", "carol", "--workspace", "w2")

    def test_round_trip_and_reimport(self):
        self.fill(self.db)
        first = self.ok(self.db, "export").stdout
        lines = first.decode("utf-8").splitlines()
        header = json.loads(lines[0])
        self.assertEqual(header["format"], "strata-export")
        self.assertEqual(header["format_version"], 1)
        self.assertEqual(header["counts"]["memories"], len(lines) - 1)
        alice = json.loads(lines[1])
        self.assertEqual([v["version"] for v in alice["versions"]], [1, 2])

        path = os.path.join(self.tmp, "export.jsonl")
        self.ok(self.db, "export", "--out", path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), first)

        fresh = os.path.join(self.tmp, "fresh.db")  # a SQLite file on either leg
        same = across_engines if mcp_client.ON_POSTGRES else (lambda export: export)
        p = self.ok(fresh, "import", path)
        self.assertIn("created %d" % (len(lines) - 1), p.stderr.decode())
        self.assertEqual(same(self.ok(fresh, "export").stdout), same(first))
        copies = [self.db, fresh]
        if mcp_client.ON_POSTGRES:
            # And from the SQLite file back into a new PostgreSQL database.
            back = self.new_store("back")
            p = self.ok(back, "import", "-", input=self.ok(fresh, "export").stdout)
            self.assertIn("created %d" % (len(lines) - 1), p.stderr.decode())
            self.assertEqual(self.ok(back, "export").stdout, first)
            copies.append(back)
        # The time-axis reads agree: history of the out-of-order key, and valid_at recall.
        for db in copies:
            out = self.ok(db, "recall", "opus", "--valid-at", "2026-01-15", "--mode", "fts5",
                          "--json").stdout
            items = json.loads(out)["items"]
            self.assertEqual([i["body"] for i in items], ["opus-4-7"])

        p = self.ok(fresh, "import", "-", input=first)
        self.assertIn("created 0, unchanged %d" % (len(lines) - 1), p.stderr.decode())
        self.assertEqual(same(self.ok(fresh, "export").stdout), same(first))

    def test_bad_lines_are_reported_by_number(self):
        self.fill(self.db)
        lines = self.ok(self.db, "export").stdout.split(b"\n")
        lines[2] = lines[2][:len(lines[2]) // 2]                          # truncated
        lines[3] = lines[3].replace(b'"type":"insight"', b'"type":7', 1)  # wrong type
        lines[4] = lines[4].replace(b'"key":"', b'"key":"\xc3\x28', 1)    # invalid UTF-8
        bad = b"\n".join(lines)

        fresh = self.new_store("stop.db")
        p = self.run_cli(fresh, "import", "-", input=bad)
        self.assertNotEqual(p.returncode, 0)
        err = p.stderr.decode("utf-8", "replace")
        self.assertIn("line 3:", err)
        self.assertNotIn("line 4:", err)
        counts = json.loads(self.ok(fresh, "stats", "--json").stdout)
        self.assertEqual(counts["active_memories"] + counts["forgotten_memories"], 0)

        fresh = self.new_store("skip.db")
        p = self.run_cli(fresh, "import", "-", "--on-error", "skip", input=bad)
        self.assertNotEqual(p.returncode, 0)  # something failed, and the summary says so
        err = p.stderr.decode("utf-8", "replace")
        for n in (3, 4, 5):
            self.assertIn("line %d:" % n, err)
        self.assertIn("type: expected a string, got number", err)
        good = len([l for l in lines[1:] if l]) - 3
        self.assertIn("created %d" % good, err)
        self.assertIn("failed 3", err)

        p = self.run_cli(fresh, "import", "-", input=b'{"format":"strata-export","format_version":9}\n')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("line 1: format_version", p.stderr.decode())

    @unittest.skipIf(mcp_client.ON_POSTGRES, "backup and restore copy a SQLite file "
                     "(test_backup_and_restore_refuse_postgresql)")
    def test_backup_during_writes_and_restore(self):
        server = self.serve()
        acknowledged = []
        stop = threading.Event()
        rng = random.Random(16)

        def write():
            i = 0
            while not stop.is_set() or i < 300:
                key = "k%05d" % i
                self.call_ok(server, "remember", {"category": "load", "key": key,
                                                  "body": mcp_client.sentence(rng, 12),
                                                  "dedup": False})
                acknowledged.append(key)
                i += 1

        writer = threading.Thread(target=write)
        writer.start()
        while len(acknowledged) < 150:
            threading.Event().wait(0.01)
        before = list(acknowledged)
        backup = os.path.join(self.tmp, "backup.db")
        self.ok(self.db, "backup", backup)
        stop.set()
        writer.join()

        p = self.run_cli(self.db, "backup", backup)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--force", p.stderr.decode())

        self.assertEqual(mcp_client.integrity(backup), "ok")
        self.assertFalse(os.path.exists(backup + "-wal"))
        db = sqlite3.connect(backup)
        keys = {row[0] for row in db.execute("SELECT key FROM memories WHERE category='load'")}
        db.close()
        self.assertTrue(set(before) <= keys, "acknowledged before the backup, missing from it")

        # The server still has the file open: restore refuses and changes nothing.
        p = self.run_cli(self.db, "restore", backup)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("open in another process", p.stderr.decode())
        total = len(acknowledged)
        server.close()
        stats = json.loads(self.ok(self.db, "stats", "--json").stdout)
        self.assertEqual(stats["active_memories"], total)

        self.ok(self.db, "restore", backup)
        self.assertEqual(mcp_client.integrity(self.db), "ok")
        stats = json.loads(self.ok(self.db, "stats", "--json").stdout)
        self.assertEqual(stats["active_memories"], len(keys))
        # Recall works on the restored store.
        out = self.ok(self.db, "recall", mcp_client.WORDS[0], "--json").stdout
        self.assertIsInstance(json.loads(out)["items"], list)

    @unittest.skipUnless(mcp_client.ON_POSTGRES, "a PostgreSQL store")
    def test_backup_and_restore_refuse_postgresql(self):
        self.ok(self.db, "remember", "--category", "notes", "--key", "kept",
                "--body", "written before the refusals")
        backup = os.path.join(self.tmp, "backup.db")
        p = self.run_cli(self.db, "backup", backup)
        self.assertEqual(p.returncode, 1)
        self.assertIn("strata backup: backup copies a SQLite file; back a PostgreSQL store up "
                      "with pg_dump or `strata export`", p.stderr.decode())
        self.assertFalse(os.path.exists(backup))
        # A SQLite backup is not restored over the database, which keeps what it had.
        other = os.path.join(self.tmp, "other.db")
        self.ok(other, "remember", "--category", "notes", "--key", "other",
                "--body", "only in the SQLite backup")
        self.ok(other, "backup", backup)
        p = self.run_cli(self.db, "restore", backup)
        self.assertEqual(p.returncode, 2)
        self.assertIn("strata restore: replaces a SQLite file; bring a backup into a PostgreSQL "
                      "store with `strata import` (from an export) or pg_restore",
                      p.stderr.decode())
        self.assertEqual(self.recall_keys(self.db, "written"), ["kept"])
        self.assertEqual(self.recall_keys(self.db, "backup"), [])

    def count_memories(self):
        """How many memories self.db holds; None before the import has created its tables."""
        try:
            if mcp_client.ON_POSTGRES:
                return int(mcp_client.psql(self.db, "SELECT count(*) FROM memories"))
            with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5) as conn:
                return conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        except (AssertionError, sqlite3.Error):
            return None

    def test_an_import_killed_midway_leaves_whole_indexed_batches(self):
        """SIGKILL during an import: the store opens clean and holds whole batches of 1,000,
        each memory found by keyword and deduplicated against; importing the file again
        brings in the rest and the store exports the file's lines."""
        # Killed once `kill_at` memories are in, while a later batch is being written. An
        # import into PostgreSQL is slower (12,000 memories took 2 minutes here): its leg
        # imports 2,000 and kills the second batch.
        n, kill_at = (2000, 1000) if mcp_client.ON_POSTGRES else (12000, 2000)
        rng = random.Random(7)
        lines = []
        for i in range(n):
            t = 1760000000000 + i * 1000
            text = " ".join(rng.choice(mcp_client.WORDS) for _ in range(30))
            body = json.dumps({"text": f"{text} marker{i}q"}, separators=(",", ":"))
            lines.append(json.dumps({
                "id": i + 1, "category": "notes", "key": f"note-{i}", "workspace": "",
                "created_at": t, "last_event_at": t,
                "versions": [{"version": 1, "recorded_at": t, "superseded_at": None,
                              "valid_from": t, "valid_to": None, "type": "insight",
                              "tags": [], "source": None, "importance": None,
                              "body_json": body}],
                "retractions": [], "aliases": [], "supersedes": [], "superseded_by": []},
                separators=(",", ":")))
        header = {"format": "strata-export", "format_version": 1, "strata_version": "test",
                  "schema_version": 0, "scope": {"workspace": None, "category": None,
                                                 "as_of": None},
                  "counts": {"memories": n, "versions": n, "retractions": 0, "aliases": 0,
                             "supersessions": 0}}
        path = self.write("big.jsonl",
                          json.dumps(header, separators=(",", ":")) + "\n" +
                          "\n".join(lines) + "\n")
        proc = subprocess.Popen([mcp_client.BINARY, "--db", self.db, "import", path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=self.tmp)
        try:
            while proc.poll() is None and (self.count_memories() or 0) < kill_at:
                pass
            proc.kill()
        finally:
            proc.wait()
        self.assertFileIntact()
        exported = self.ok(self.db, "export").stdout.decode("utf-8").splitlines()[1:]
        count = len(exported)
        self.assertGreaterEqual(count, 1000)
        self.assertTrue(count % 1000 == 0 or count == n, count)
        self.assertEqual(exported, lines[:count])
        for i in (0, count - 1):
            self.assertEqual(self.recall_keys(self.db, f"marker{i}q"), [f"note-{i}"])
        p = self.ok(self.db, "import", path)
        self.assertIn(f"created {n - count}, unchanged {count},", p.stderr.decode())
        # Every memory has the file's id: those the killed batch took were no memory's (on
        # PostgreSQL too, whose sequence moved on: README's "Ids").
        final = self.ok(self.db, "export").stdout.decode("utf-8").splitlines()[1:]
        self.assertEqual(final, lines)
        # The last memory of the killed import got its band keys: a copy merges into it.
        last = json.loads(lines[count - 1])["versions"][0]["body_json"]
        copy = self.ok(self.db, "remember", "--category", "notes", "--key", "copy",
                       "--body-json", last)
        self.assertIn("deduped", copy.stdout.decode())

    # ---- import from other memories, and export --as-of ----

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return path

    def recall_keys(self, db, query):
        out = self.ok(db, "recall", query, "--mode", "fts5", "--json").stdout
        return [item["key"] for item in json.loads(out)["items"]]

    def test_server_memory_import(self):
        graph = "\n".join(json.dumps(line) for line in [
            {"type": "relation", "from": "Alice Smith", "to": "Bob", "relationType": "works_with"},
            {"type": "entity", "name": "Alice Smith", "entityType": "person",
             "observations": ["Speaks fluent Portuguese"]},
            {"type": "entity", "name": "Bob", "entityType": "Person",
             "observations": ["Prefers morning meetings"]},
        ]) + "\n"
        path = self.write("memory.jsonl", graph)
        p = self.ok(self.db, "import", path)
        err = p.stderr.decode()
        self.assertIn("importing %s as server-memory JSONL" % path, err)
        self.assertIn("created 2", err)
        self.assertNotIn("\r", err)  # no progress line when stderr is not a terminal
        # Found by an observation word, and by the name of an entity it is related to.
        self.assertEqual(self.recall_keys(self.db, "Portuguese"), ["Alice Smith"])
        self.assertEqual(sorted(self.recall_keys(self.db, "Bob")), ["Alice Smith", "Bob"])
        bob = json.loads(self.ok(self.db, "history", "person", "Bob", "--json").stdout)
        self.assertEqual(json.loads(bob["versions"][0]["body_json"])["relations"],
                         [{"from": "Alice Smith", "relationType": "works_with", "to": "Bob"}])

        p = self.ok(self.db, "import", path, "--from", "server-memory")
        self.assertIn("created 0, unchanged 2, updated 0", p.stderr.decode())
        self.write("memory.jsonl", graph.replace("Prefers morning meetings",
                                                 "Prefers afternoon meetings"))
        p = self.ok(self.db, "import", path)
        self.assertIn("created 0, unchanged 1, updated 1", p.stderr.decode())

    def test_markdown_folder_import(self):
        self.write("vault/people/ana.md",
                   "---\ncategory: people\ntags: [team]\n---\nAna maintains the billing ledger.\n")
        self.write("vault/ideas.md", "A plain note about zeppelins.\n")
        self.write("vault/bad.md", "---\nauthor:\n  name: x\n---\ntext\n")
        vault = os.path.join(self.tmp, "vault")
        p = self.run_cli(self.db, "import", vault, "--category", "notes", "--on-error", "skip")
        self.assertEqual(p.returncode, 1)  # one note failed, and the exit status says so
        err = p.stderr.decode()
        self.assertIn("as Markdown", err)
        self.assertIn("%s:3: front matter: an indented line" % os.path.join(vault, "bad.md"), err)
        self.assertIn("created 2", err)
        self.assertEqual(self.recall_keys(self.db, "ledger"), ["people/ana"])
        self.assertEqual(self.recall_keys(self.db, "zeppelins"), ["ideas"])

    def test_csv_and_jsonl_import(self):
        csv = self.write("m.csv", 'category,key,body,tags\r\n'
                                  'notes,a,"quoted, with a comma\nand a newline",x\r\n'
                                  'notes,b\r\n'
                                  'notes,c,"she said ""hi""",\r\n')
        p = self.run_cli(self.db, "import", csv, "--on-error", "skip")
        err = p.stderr.decode()
        self.assertIn("as CSV", err)
        self.assertIn("m.csv:4: expected 4 fields", err)
        self.assertIn("created 2", err)
        self.assertEqual(self.recall_keys(self.db, "newline"), ["a"])

        jsonl = self.write("m.data", json.dumps({"category": "notes", "key": "d",
                                                 "body": {"text": "a zeppelin hangar"},
                                                 "valid_from": "2026-01-01"}) + "\n")
        p = self.ok(self.db, "import", jsonl, "--from", "jsonl")
        self.assertIn("as JSONL", p.stderr.decode())
        self.assertEqual(self.recall_keys(self.db, "hangar"), ["d"])

        p = self.run_cli(self.db, "import", self.write("notes.txt", "hello\n"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("strata, server-memory, markdown, csv, jsonl", p.stderr.decode())
        p = self.run_cli(self.db, "import", csv, "--from", "yaml")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--from must be", p.stderr.decode())

    def test_progress_line_only_on_a_terminal(self):
        import pty
        path = self.write("m.jsonl", "".join(
            json.dumps({"category": "notes", "key": "k%d" % i, "body": "text %d" % i}) + "\n"
            for i in range(3)))
        master, slave = pty.openpty()
        try:
            p = subprocess.run([mcp_client.BINARY, "--db", self.db, "import", path],
                               stdout=subprocess.PIPE, stderr=slave, timeout=RUN_TIMEOUT,
                               cwd=self.tmp)
        finally:
            os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO once the terminal's other side is closed and drained
                break
            if not chunk:
                break
            err += chunk
        os.close(master)
        self.assertEqual(p.returncode, 0)
        err = err.decode()
        self.assertIn("\rimported 3/3 (100%)", err)  # drawn in place on a terminal...
        self.assertIn("\r\x1b[Kimport done: read 3, created 3", err)  # ...and erased

    def test_export_as_of(self):
        self.fill(self.db)
        lines = self.ok(self.db, "export").stdout.decode().splitlines()
        times = sorted({v["recorded_at"] for line in lines[1:]
                        for v in json.loads(line)["versions"]})
        t = times[len(times) // 2]
        as_of = self.ok(self.db, "export", "--as-of", str(t)).stdout
        header = json.loads(as_of.decode().splitlines()[0])
        self.assertEqual(header["scope"]["as_of"], t)
        self.assertLess(header["counts"]["versions"], json.loads(lines[0])["counts"]["versions"])
        for line in as_of.decode().splitlines()[1:]:
            record = json.loads(line)
            self.assertTrue(all(v["recorded_at"] <= t for v in record["versions"]))
        fresh = self.new_store("as-of.db")
        self.ok(fresh, "import", "-", input=as_of)
        self.assertEqual(self.ok(fresh, "export", "--as-of", str(t)).stdout, as_of)
        p = self.run_cli(self.db, "export", "--as-of", "last tuesday")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--as-of", p.stderr.decode())


if __name__ == "__main__":
    mcp_client.run_tests()
