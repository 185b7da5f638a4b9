"""A small MCP client for strata's end-to-end tests (Python standard library only).

It spawns the real binary with pipes, writes newline-delimited JSON-RPC messages and reads
exactly one response line at a time, with a timeout (select) so that a hung server fails the
test instead of blocking it. Every byte the server writes on stdout is kept, so a test can
check that each line is a JSON-RPC 2.0 message. stderr goes to a file (never a pipe that could
fill up and stall the server).

The test files share `StrataTestCase`: a temporary directory per test, every process it
starts killed and waited for in tearDown, and stdout discipline checked for every session.
"""

import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

# Set by run_tests() from argv[1]: the strata binary under test.
BINARY = None

# Timeouts only to avoid hangs; tests never assert on timing.
READ_TIMEOUT = 20.0
EXIT_TIMEOUT = 20.0

PSQL = os.path.join(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"), "psql")
# STRATA_TEST_STORE=postgresql runs a test file's stores on the throwaway PostgreSQL cluster
# whose URI tests/pg/with_cluster passes in STRATA_TEST_PG_URI, a fresh database per test.
ON_POSTGRES = os.environ.get("STRATA_TEST_STORE") == "postgresql"
_databases = 0


def psql(uri, sql, timeout=60):
    """Runs `sql` on `uri` with psql; returns its stdout (text, unaligned, no headers)."""
    p = subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", uri, "-c", sql],
                       capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("psql %r: %s" % (sql, p.stderr.decode(errors="replace")))
    return p.stdout.decode()


def fresh_pg_database(label):
    """A new, empty database on the cluster STRATA_TEST_PG_URI names; returns its URI."""
    global _databases
    base = os.environ.get("STRATA_TEST_PG_URI")
    if not base:
        raise AssertionError("STRATA_TEST_PG_URI is unset: run through tests/pg/with_cluster")
    _databases += 1
    name = "t%d_%d_%s" % (os.getpid(), _databases,
                          "".join(c for c in label.lower() if c.isalnum() or c == "_")[-40:])
    psql(base, "CREATE DATABASE %s" % name)
    return base + "&dbname=" + name


def restart_pg_cluster(timeout=120):
    """Restarts the cluster tests/pg/with_cluster started for this program (its tool and
    directory in STRATA_TEST_PG_CLUSTER)."""
    tool, cluster_dir = os.environ["STRATA_TEST_PG_CLUSTER"].split(" ", 1)
    subprocess.run([tool, "restart", cluster_dir], check=True, timeout=timeout,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def store_args(db, tmp):
    """The arguments naming the store `db`: `--db db`, and on PostgreSQL an `--index-dir` in
    `tmp` (a node keeps its vector index in a local directory, not in the database)."""
    args = ["--db", db]
    if ON_POSTGRES:
        args += ["--index-dir", os.path.join(tmp, "index")]
    return args


def index_file(db, tmp):
    """Where a server on the store `db`, started with store_args(db, tmp), saves its vector
    index (its `.meta` beside it): beside a SQLite file, or in the --index-dir under the
    PostgreSQL database's store id, which the first node to open the database gave it."""
    if not ON_POSTGRES:
        return db + ".hnsw"
    store_id = psql(db, "SELECT value FROM meta WHERE name = 'store_id'").strip()
    if not store_id:
        raise AssertionError("the database has no store id: no node opened it yet")
    return os.path.join(tmp, "index", store_id + ".hnsw")


class ServerError(AssertionError):
    """The server did not answer as a well-behaved MCP server must (hang, EOF, bad line)."""


class McpClient:
    """One strata process speaking MCP over pipes.

    `argv` is the full argument list after the binary (e.g. ["--db", path]).
    """

    def __init__(self, binary, argv, env=None, stderr_path=None, cwd=None):
        self.argv = [binary] + list(argv)
        self._stderr_file = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file,
            env=env,
            cwd=cwd,
        )
        self._in_fd = self.proc.stdin.fileno()
        self._out_fd = self.proc.stdout.fileno()
        os.set_blocking(self._in_fd, False)
        self._buffer = b""       # stdout bytes read but not yet returned as a line
        self.stdout_bytes = b""  # everything the server ever wrote on stdout
        self._eof = False
        self._next_id = 1000
        self.exit_code = None

    # ----- low level -------------------------------------------------------------------

    def _pump(self, timeout):
        """Reads what stdout has within `timeout` seconds; False on timeout."""
        if self._eof:
            return False
        ready, _, _ = select.select([self._out_fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        chunk = os.read(self._out_fd, 1 << 16)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        self.stdout_bytes += chunk
        return True

    def send_bytes(self, data, timeout=READ_TIMEOUT * 3):
        """Writes all of `data` to stdin, reading stdout meanwhile so neither side blocks."""
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ServerError("timed out writing to the server's stdin")
            _, writable, _ = select.select([], [self._in_fd], [], min(remaining, 0.5))
            if writable:
                try:
                    n = os.write(self._in_fd, view[: 1 << 16])
                except BlockingIOError:
                    n = 0
                except BrokenPipeError:
                    raise ServerError(
                        "the server closed stdin (exit code %r)" % self.proc.poll())
                view = view[n:]
            # Keep stdout flowing while a large message goes in.
            self._pump(0)

    def send(self, message, newline=True):
        """Sends a dict/list (as JSON), a str or bytes (raw), followed by a newline."""
        if isinstance(message, (dict, list)):
            data = json.dumps(message).encode("utf-8")
        elif isinstance(message, str):
            data = message.encode("utf-8")
        else:
            data = bytes(message)
        if newline:
            data += b"\n"
        self.send_bytes(data)

    def read_line(self, timeout=READ_TIMEOUT):
        """Returns exactly one stdout line (without its newline); fails on timeout or EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if self._eof:
                raise ServerError("server closed stdout (exit code %r) while a response was "
                                  "expected; partial: %r" % (self.proc.poll(), self._buffer[:200]))
            if remaining <= 0:
                raise ServerError("no response within %.0fs; partial: %r"
                                  % (timeout, self._buffer[:200]))
            self._pump(remaining)
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def read_message(self, timeout=READ_TIMEOUT):
        line = self.read_line(timeout)
        try:
            return json.loads(line)
        except ValueError as e:
            raise ServerError("stdout line is not JSON (%s): %r" % (e, line[:200]))

    def new_id(self):
        self._next_id += 1
        return self._next_id

    # ----- MCP -------------------------------------------------------------------------

    def request(self, method, params=None, id=None):
        """Sends a request and returns its response (the whole JSON-RPC object)."""
        if id is None:
            id = self.new_id()
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        response = self.read_message()
        if not isinstance(response, dict) or response.get("id") != id:
            raise ServerError("expected the response to id %r, got %r" % (id, response))
        return response

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def initialize(self, version="2025-06-18", initialized=True):
        """initialize (+ notifications/initialized); returns the initialize result."""
        response = self.request("initialize", {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "strata-e2e", "version": "1"},
        })
        if "result" not in response:
            raise ServerError("initialize failed: %r" % response)
        if initialized:
            self.notify("notifications/initialized")
        return response["result"]

    def ping(self):
        """True when the server answers ping with an empty result."""
        response = self.request("ping")
        return response.get("result") == {}

    def list_tools(self):
        response = self.request("tools/list")
        if "result" not in response:
            raise ServerError("tools/list failed: %r" % response)
        return response["result"]["tools"]

    def call_tool_raw(self, name, arguments=None):
        """The whole JSON-RPC response of a tools/call."""
        params = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params)

    def call_tool(self, name, arguments=None):
        """Returns (structuredContent, isError, raw result) of a tools/call.

        A JSON-RPC error (not a tool result) raises ServerError.
        """
        response = self.call_tool_raw(name, arguments)
        if "result" not in response:
            raise ServerError("tools/call %s answered with a JSON-RPC error: %r"
                              % (name, response))
        result = response["result"]
        return result.get("structuredContent"), result.get("isError"), result

    def close(self, timeout=EXIT_TIMEOUT):
        """Closes stdin (EOF), reads the rest of stdout and waits; returns the exit code."""
        if self.exit_code is not None:
            return self.exit_code
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + timeout
        while not self._eof and time.monotonic() < deadline:
            self._pump(deadline - time.monotonic())
        try:
            self.exit_code = self.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            raise ServerError("server did not exit within %.0fs of stdin EOF" % timeout)
        finally:
            self._cleanup_fds()
        return self.exit_code

    def terminate(self, sig=signal.SIGTERM, timeout=EXIT_TIMEOUT):
        """Sends `sig` and waits; returns the exit code (negative when killed by a signal)."""
        self.proc.send_signal(sig)
        deadline = time.monotonic() + timeout
        while not self._eof and time.monotonic() < deadline:
            self._pump(deadline - time.monotonic())
        try:
            self.exit_code = self.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            raise ServerError("server did not exit within %.0fs of signal %d" % (timeout, sig))
        finally:
            self._cleanup_fds()
        return self.exit_code

    def kill(self):
        """Last resort: SIGKILL and reap (idempotent)."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        if self.exit_code is None:
            self.exit_code = self.proc.returncode
        self._cleanup_fds()

    def _cleanup_fds(self):
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        if self._stderr_file is not subprocess.DEVNULL:
            try:
                self._stderr_file.close()
            except OSError:
                pass

    def stderr_text(self):
        if not self.stderr_path:
            return ""
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stdout_lines(self):
        """Every complete line the server wrote on stdout so far."""
        data = self.stdout_bytes
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        return lines


# ----- JSON-RPC 2.0 message shape ------------------------------------------------------

def jsonrpc_message_problem(obj):
    """None when `obj` is a JSON-RPC 2.0 message object, else what is wrong with it."""
    if not isinstance(obj, dict):
        return "not an object"
    if obj.get("jsonrpc") != "2.0":
        return "jsonrpc is not \"2.0\""
    if "method" in obj:
        if not isinstance(obj["method"], str):
            return "method is not a string"
        return None
    if "id" not in obj:
        return "a response without id"
    if not (obj["id"] is None or isinstance(obj["id"], (str, int, float))) \
            or isinstance(obj["id"], bool):
        return "id is not a string, number or null"
    if ("result" in obj) == ("error" in obj):
        return "a response must have exactly one of result and error"
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, dict):
            return "error is not an object"
        if not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
            return "error.code is not an integer"
        if not isinstance(error.get("message"), str):
            return "error.message is not a string"
    return None


def stdout_problems(data):
    """Every problem with a session's whole stdout (bytes): each line must be a JSON-RPC 2.0
    message or a non-empty batch of them, and the output must end with a newline."""
    problems = []
    if data and not data.endswith(b"\n"):
        problems.append("stdout does not end with a newline: %r" % data[-80:])
    for n, line in enumerate(data.split(b"\n")[:-1] if data else [], 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            problems.append("line %d is not UTF-8: %r" % (n, line[:120]))
            continue
        try:
            obj = json.loads(text)
        except ValueError:
            problems.append("line %d is not JSON: %r" % (n, line[:120]))
            continue
        items = obj if isinstance(obj, list) else [obj]
        if isinstance(obj, list) and not obj:
            problems.append("line %d is an empty batch" % n)
        for item in items:
            problem = jsonrpc_message_problem(item)
            if problem:
                problems.append("line %d: %s: %r" % (n, problem, line[:120]))
    return problems


# ----- JSON Schema (the subset tool schemas use) ---------------------------------------

_JSON_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_problems(schema, value, path="$"):
    """What in `value` violates `schema` (type, enum, required, properties, items,
    additionalProperties); [] when it conforms."""
    problems = []
    if not isinstance(schema, dict):
        return problems
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        if not any(_JSON_TYPES.get(t, lambda v: True)(value) for t in types):
            return ["%s: expected type %s, got %r" % (path, "/".join(types), value)]
    if "enum" in schema and value not in schema["enum"]:
        problems.append("%s: %r is not one of %r" % (path, value, schema["enum"]))
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                problems.append("%s: required member %r missing" % (path, name))
        properties = schema.get("properties", {})
        for name, member in value.items():
            if name in properties:
                problems += schema_problems(properties[name], member, "%s.%s" % (path, name))
            elif isinstance(schema.get("additionalProperties"), dict):
                problems += schema_problems(schema["additionalProperties"], member,
                                            "%s.%s" % (path, name))
            elif schema.get("additionalProperties") is False:
                problems.append("%s: unexpected member %r" % (path, name))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems += schema_problems(schema["items"], item, "%s[%d]" % (path, i))
    return problems


# ----- test base -----------------------------------------------------------------------

class StrataTestCase(unittest.TestCase):
    """A temporary directory per test; every spawned process is reaped in tearDown."""

    check_stdout = True  # every session's stdout must be JSON-RPC 2.0 lines only

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="strata-e2e-")
        self.tmp = self._tmp.name
        self.db = os.path.join(self.tmp, "memory.db")
        if ON_POSTGRES:
            self.db = fresh_pg_database(self.id().rsplit(".", 1)[-1])
        self._clients = []

    def tearDown(self):
        problems = []
        for client in self._clients:
            if client.exit_code is None:
                try:
                    client.close()
                except ServerError as e:
                    problems.append(str(e))
                client.kill()
            if self.check_stdout:
                for p in stdout_problems(client.stdout_bytes):
                    problems.append("%s: %s" % (" ".join(client.argv[1:]), p))
        self._clients = []
        self._tmp.cleanup()
        if problems:
            self.fail("\n".join(problems))

    def new_store(self, name):
        """Another new, empty store for this test: the file `name` in its directory, or on
        PostgreSQL a new database."""
        if ON_POSTGRES:
            return fresh_pg_database("%s_%s" % (self._testMethodName, name))
        return os.path.join(self.tmp, name)

    def spawn(self, *extra, db=None, env=None, use_db=True, cwd=None):
        """Starts `strata --db <db> <extra...>` and registers it for cleanup."""
        argv = []
        if use_db:
            argv += store_args(db or self.db, self.tmp)
        argv += list(extra)
        stderr_path = os.path.join(self.tmp, "stderr-%d.log" % len(self._clients))
        client = McpClient(BINARY, argv, env=env, stderr_path=stderr_path, cwd=cwd)
        self._clients.append(client)
        return client

    def serve(self, *extra, version="2025-06-18", **kw):
        """A spawned server that has been initialized."""
        client = self.spawn(*extra, **kw)
        client.initialize(version)
        return client

    def call_ok(self, client, name, arguments=None):
        """structuredContent of a successful tool call (asserts isError false)."""
        structured, is_error, raw = client.call_tool(name, arguments)
        self.assertFalse(is_error, "%s(%r) failed: %r" % (name, arguments, raw))
        self.assertIsInstance(structured, dict, "%s: no structuredContent: %r" % (name, raw))
        return structured

    def call_error(self, client, name, arguments, *must_mention):
        """The error text of a tool call that must fail with isError true, mentioning each of
        `must_mention` (case-insensitive)."""
        structured, is_error, raw = client.call_tool(name, arguments)
        self.assertIs(is_error, True, "%s(%r) should fail, got %r" % (name, arguments, raw))
        text = error_text(raw)
        for word in must_mention:
            self.assertIn(word.lower(), text.lower(),
                          "%s(%r): error %r does not mention %r"
                          % (name, arguments, text, word))
        return text

    def assertAlive(self, client):
        self.assertTrue(client.ping(), "server stopped answering ping")

    def assertFileIntact(self, db=None):
        """A SQLite store's file (default: this test's) passes PRAGMA integrity_check. A
        PostgreSQL store has no file of ours to check: the server's own recovery keeps it."""
        if not ON_POSTGRES:
            self.assertEqual(integrity(db or self.db), "ok")


def error_text(result):
    """The message of a tool result (content[0].text)."""
    content = result.get("content") or []
    if content and isinstance(content[0], dict):
        return str(content[0].get("text", ""))
    return ""


DAY_MS = 86400 * 1000


def now_ms():
    return int(time.time() * 1000)


def days(offset, base=None):
    """Unix ms `offset` days from `base` (default: now)."""
    return (now_ms() if base is None else base) + int(offset * DAY_MS)


def wait_indexed(embeddings, deadline_s, floor=False):
    """Polls `embeddings()` (stats' "embeddings" object) until every stored vector is in the
    ready index (and, with `floor`, the similarity floor is measured); returns it then.
    Raises AssertionError past `deadline_s` seconds, a bound against hangs only."""
    deadline = time.monotonic() + deadline_s
    while True:
        e = embeddings()
        if (e["index_state"] == "ready" and e["pending"] == 0 and e["indexed"] == e["vectors"]
                and (not floor or e["similarity_floor"] is not None)):
            return e
        if time.monotonic() > deadline:
            raise AssertionError("the index did not catch up: %r" % e)
        time.sleep(0.05)


def run_tests():
    """unittest.main for a test file run as `python3 test_x.py <strata-binary>`."""
    global BINARY
    if len(sys.argv) < 2:
        sys.stderr.write("usage: %s <path-to-strata-binary> [unittest args]\n" % sys.argv[0])
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv.pop(1))
    if not os.access(BINARY, os.X_OK):
        sys.stderr.write("not an executable: %s\n" % BINARY)
        sys.exit(2)
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)


def pipeline(client, messages):
    """Sends the requests `messages` in one write, so the server reads each as soon as it has
    answered the previous, and returns their responses in arrival order (notifications in
    between are skipped)."""
    client.send_bytes(b"".join(json.dumps(m).encode("utf-8") + b"\n" for m in messages))
    wanted = {m["id"] for m in messages}
    out = []
    while len(out) < len(messages):
        message = client.read_message()
        if isinstance(message, dict) and "method" not in message and message.get("id") in wanted:
            out.append(message)
    return out


# ----- Shared by the tests that write many memories ----------------------------------------

# Words for generated memories: texts of a dozen random words differ enough that
# near-duplicate merging keeps them apart.
WORDS = """
amber anchor apple arrow autumn badge basket beacon berry blanket bottle breeze bridge bucket
button cabin candle canyon carpet castle cedar chalk cherry circle cliff clock cloud cobalt
copper coral cotton crane crystal daisy desert dolphin dragon eagle ember engine falcon feather
fern forest fossil garden garnet ginger glacier granite harbor hazel helmet honey horizon iris
island ivory jacket jasmine jungle kettle ladder lantern lemon library lilac lizard magnet
maple marble meadow mirror monsoon mosaic needle nectar oasis ocean olive orchard otter paddle
panther pebble pepper pillow pine planet pocket pumpkin quartz quiver rabbit radish raven
ribbon river rocket saddle salmon sandal scarlet shadow shell silver sparrow spruce summit
tangle thistle thunder timber tulip tunnel turtle velvet violet walnut willow window winter
yarrow zephyr
""".split()


def sentence(rng, n=10):
    """`n` words drawn with `rng` (a random.Random)."""
    return " ".join(rng.choice(WORDS) for _ in range(n))


def integrity(path):
    """PRAGMA integrity_check of the database at `path` (with its WAL, if any)."""
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()
