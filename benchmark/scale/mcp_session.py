"""A minimal MCP stdio client for the benchmarks (Python standard library only)."""
import json
import os
import subprocess
import time


class Session:
    """One strata process; requests are sent one at a time and answered in order."""

    def __init__(self, binary, db, extra_args=()):
        self.proc = subprocess.Popen(
            [binary, "--db", db, *extra_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            bufsize=1 << 20)
        self.next_id = 0

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"strata exited (code {self.proc.poll()}) during {method}")
        response = json.loads(line)
        if "error" in response:
            raise RuntimeError(f"{method}: {response['error']}")
        return response["result"]

    def raw_call(self, line):
        """Sends a pre-serialized tools/call line (with its newline); returns the parsed result."""
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        response = json.loads(self.proc.stdout.readline())
        if "error" in response or response["result"].get("isError"):
            raise RuntimeError(f"call failed: {response}")
        return response["result"]

    def call_line(self, tool, arguments):
        """The bytes of a tools/call request, for raw_call."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"

    def initialize(self):
        result = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "strata-bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        return result

    def call(self, tool, arguments):
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result['content'][0]['text']}")
        return result["structuredContent"]

    def peak_rss_bytes(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return None

    def cpu_seconds(self):
        """User + system CPU time the strata process (all its threads) has used so far, or None.
        On a machine shared with other work, wall-clock latency stretches with the load; this
        does not (to the clock tick, 10 ms: divide a block's difference by its calls)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
