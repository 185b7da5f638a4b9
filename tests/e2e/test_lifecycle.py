"""Lifecycle (docs/design.md §7): the server exits when stdin closes, exits when the process that
started it dies, and never exits because the host is quiet.

The parent-death tests put a small Python parent between the test and strata. strata inherits
the parent's stdin and stdout, whose other ends the test holds, so killing the parent does not
close strata's stdin: only the parent watch can end the server. The test process makes itself
a child subreaper, so the orphaned strata is handed to it and its exit status can be read.

Run: python3 tests/e2e/test_lifecycle.py <path-to-strata-binary>
With STRATA_TEST_STORE=postgresql (mcp_client.py) the store is a PostgreSQL database.
"""

import ctypes
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import McpClient, StrataTestCase, stdout_problems  # noqa: E402

# Bounds only against hangs, never asserted as timings.
EXIT_DEADLINE = 20.0
POLL_INTERVAL = 0.05
# Longer than every periodic wake-up inside strata (the checkpointer's is 5 s).
IDLE_SECONDS = 7.0

PR_SET_CHILD_SUBREAPER = 36

# The intermediate parent: spawns `argv` (strata) with its own stdin and stdout, writes the
# child's pid to `pid_file`, then sleeps until killed. With PARENT_SPAWN=thread it spawns from
# a thread that ends once `pid_file`.release exists, as a host's pooled thread retires while
# the host lives on (and writes `pid_file`.spawner-gone after it has).
PARENT = r"""
import os, subprocess, sys, threading, time
pid_file, argv = sys.argv[1], sys.argv[2:]
def spawn():
    child = subprocess.Popen(argv)
    with open(pid_file + ".tmp", "w") as f:
        f.write(str(child.pid))
    os.rename(pid_file + ".tmp", pid_file)
def spawn_and_retire():
    spawn()
    while not os.path.exists(pid_file + ".release"):
        time.sleep(0.01)
if os.environ.get("PARENT_SPAWN") == "thread":
    spawner = threading.Thread(target=spawn_and_retire)
    spawner.start()
    spawner.join()
    open(pid_file + ".spawner-gone", "w").close()
else:
    spawn()
while True:
    time.sleep(60)
"""


def running(pid):
    """Whether process `pid` exists and has not exited (a zombie has)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            # The state follows the command name, which is in parentheses.
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for_file(test, path):
    deadline = time.monotonic() + EXIT_DEADLINE
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            test.fail("%s did not appear" % path)
        time.sleep(POLL_INTERVAL)


class LifecycleCase(StrataTestCase):

    def note(self, client):
        """A remember whose acknowledgement the test keeps; returns (key, body)."""
        key = "note-%d" % client.new_id()
        body = {"text": "acknowledged just before the end, %s" % key}
        r = self.call_ok(client, "remember", {"category": "life", "key": key, "body": body,
                                              "dedup": False})
        self.assertEqual(r["action"], "created")
        return key, body

    def assert_intact(self, acknowledged):
        """The store is intact (assertFileIntact) and a new server reads every acknowledged
        (key, body)."""
        self.assertFileIntact()
        again = self.serve()
        for key, body in acknowledged:
            got = self.call_ok(again, "get", {"category": "life", "key": key})
            self.assertIs(got["found"], True, "acknowledged write %s lost" % key)
            self.assertEqual(got["body"], body)
        self.assertEqual(again.close(), 0)
        self.assertFileIntact()


class StdinCloses(LifecycleCase):

    def test_exits_zero_when_stdin_closes(self):
        client = self.serve()
        written = [self.note(client) for _ in range(3)]
        self.assertEqual(client.close(), 0)
        self.assertEqual(client.proc.poll(), 0)
        self.assertIn("strata", client.stderr_text())
        self.assertNotIn("parent process", client.stderr_text())
        self.assert_intact(written)

    def test_stdin_closing_behind_a_batch_answers_it_first(self):
        # The batch is still being written (and then embedded) when stdin closes: the server
        # answers it, then exits 0, and a later server embeds whatever is left.
        client = self.serve()
        items = [{"category": "life", "key": "b%04d" % i, "dedup": False,
                  "body": {"text": "batch note %d written as stdin closes" % i}}
                 for i in range(2000)]
        client.send({"jsonrpc": "2.0", "id": "batch", "method": "tools/call",
                     "params": {"name": "remember_batch", "arguments": {"items": items}}})
        self.assertEqual(client.close(), 0)
        lines = client.stdout_lines()
        response = json.loads(lines[-1])
        self.assertEqual(response["id"], "batch")
        self.assertEqual(response["result"]["structuredContent"]["created"], 2000)
        again = self.serve()
        deadline = time.monotonic() + EXIT_DEADLINE * 3
        while True:
            e = self.call_ok(again, "stats", {})["embeddings"]
            if e["pending"] == 0:
                break
            if time.monotonic() > deadline:
                self.fail("the backlog was not embedded after the restart: %r" % e)
            time.sleep(POLL_INTERVAL)
        self.assertEqual(e["vectors"], 2000)
        self.assertEqual(again.close(), 0)
        self.assertFileIntact()


class QuietHost(LifecycleCase):

    def test_idle_server_keeps_answering(self):
        client = self.spawn()
        # A host may start the server well before it says anything.
        time.sleep(IDLE_SECONDS / 2)
        self.assertIsNone(client.proc.poll(), "the server exited before initialize")
        client.initialize()
        written = [self.note(client) for _ in range(5)]
        # Let the embedding worker finish and go idle, then say nothing for longer than any
        # of strata's own periodic wake-ups.
        deadline = time.monotonic() + EXIT_DEADLINE
        while self.call_ok(client, "stats", {})["embeddings"]["pending"]:
            if time.monotonic() > deadline:
                self.fail("the worker did not embed 5 notes")
            time.sleep(POLL_INTERVAL)
        time.sleep(IDLE_SECONDS)
        self.assertIsNone(client.proc.poll(), "the server exited while the host was quiet")
        self.assertAlive(client)
        items = self.call_ok(client, "recall", {"query": written[0][1]["text"],
                                                "mode": "dense"})["items"]
        self.assertEqual(items[0]["key"], written[0][0])
        written.append(self.note(client))
        self.assertEqual(client.close(), 0)
        self.assert_intact(written)


class ParentDies(LifecycleCase):
    """strata under an intermediate parent that the test kills."""

    check_stdout = False  # The sessions here are checked by hand (the parent is not strata).

    @classmethod
    def setUpClass(cls):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")

    def setUp(self):
        super().setUp()
        self.parent = None
        self.strata_pid = None

    def tearDown(self):
        # Before the temporary directory goes: the parent, then strata if a failure left it.
        if self.parent is not None:
            self.parent.kill()
        if self.strata_pid is not None:
            try:
                os.kill(self.strata_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + EXIT_DEADLINE
            while running(self.strata_pid) and time.monotonic() < deadline:
                try:
                    os.waitpid(self.strata_pid, os.WNOHANG)
                except ChildProcessError:
                    pass
                time.sleep(POLL_INTERVAL)
        super().tearDown()

    def spawn_under_parent(self, spawn_from="main"):
        """Starts the parent, which starts strata; returns (client, strata pid). The client
        talks to strata through the pipes the parent handed down."""
        pid_file = os.path.join(self.tmp, "strata.pid")
        env = dict(os.environ, PARENT_SPAWN=spawn_from)
        parent = McpClient(sys.executable,
                           ["-c", PARENT, pid_file, mcp_client.BINARY]
                           + mcp_client.store_args(self.db, self.tmp),
                           env=env, stderr_path=os.path.join(self.tmp, "parent-stderr.log"))
        self.parent = parent
        wait_for_file(self, pid_file)
        with open(pid_file) as f:
            self.strata_pid = int(f.read())
        self.pid_file = pid_file
        return parent, self.strata_pid

    def wait_exit(self, pid):
        """strata's exit status, waiting (bounded) for it to end; fails if it does not."""
        deadline = time.monotonic() + EXIT_DEADLINE
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                self.fail("strata (pid %d) is not our child: the subreaper did not take it"
                          % pid)
            if done == pid:
                self.strata_pid = None  # Reaped: the pid is no longer ours to signal.
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                self.fail("strata (pid %d) still runs %.0f s after its parent died"
                          % (pid, EXIT_DEADLINE))
            time.sleep(POLL_INTERVAL)

    def kill_parent(self):
        self.parent.proc.kill()
        self.parent.proc.wait(EXIT_DEADLINE)

    def assert_stopped_by_the_watch(self):
        """strata's stderr (the parent's, which it inherited) says why it stopped."""
        with open(os.path.join(self.tmp, "parent-stderr.log"), errors="replace") as f:
            self.assertRegex(f.read(), r"the parent process \d+ has exited; stopping")

    def test_exits_when_parent_dies(self):
        client, pid = self.spawn_under_parent()
        client.initialize()
        written = [self.note(client) for _ in range(3)]
        # A backlog for the embedding worker, so the parent dies while strata is busy.
        items = [{"category": "life", "key": "b%04d" % i, "dedup": False,
                  "body": {"text": "batch note %d before the parent dies" % i}}
                 for i in range(500)]
        self.assertEqual(self.call_ok(client, "remember_batch", {"items": items})["created"], 500)
        written.append(self.note(client))
        self.kill_parent()
        self.assertEqual(self.wait_exit(pid), 0)
        self.assert_stopped_by_the_watch()
        client.close()  # Reads stdout to its end (strata's is closed now).
        self.assertEqual(stdout_problems(client.stdout_bytes), [])
        self.assert_intact(written)

    def test_spawning_thread_ending_does_not_stop_the_server(self):
        # PR_SET_PDEATHSIG would stop strata here: it fires when the spawning thread ends.
        client, pid = self.spawn_under_parent(spawn_from="thread")
        client.initialize()  # strata is serving (and watching its parent) from here on
        open(self.pid_file + ".release", "w").close()
        wait_for_file(self, self.pid_file + ".spawner-gone")
        time.sleep(1.0)
        self.assertTrue(running(pid), "strata exited when the thread that spawned it ended")
        written = [self.note(client)]
        self.assertAlive(client)
        # The parent itself dying still ends it.
        self.kill_parent()
        self.assertEqual(self.wait_exit(pid), 0)
        self.assert_stopped_by_the_watch()
        client.close()
        self.assertEqual(stdout_problems(client.stdout_bytes), [])
        self.assert_intact(written)


if __name__ == "__main__":
    mcp_client.run_tests()
