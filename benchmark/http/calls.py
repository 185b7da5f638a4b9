"""Tool calls per second over `strata serve --http` (PERF.md, "MCP over HTTP").

Starts the binary on 127.0.0.1 port 0 with a fresh database (--embedder none), then for
remember and recall, with 1 and 4 clients (each its own keep-alive connection and session),
makes 1000 calls in all and prints the rate. Python standard library only; the client's own
cost is included, as an agent's would be.

Run: python3 benchmark/http/calls.py build/src/strata
"""

import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

CALLS = 1000
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def start(binary, tmp):
    err_path = os.path.join(tmp, "stderr")
    err = open(err_path, "wb")
    proc = subprocess.Popen([binary, "serve", "--http", "127.0.0.1:0", "--embedder", "none",
                             "--db", os.path.join(tmp, "memory.db")],
                            stdin=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(err_path) as f:
            match = re.search(r"127\.0\.0\.1:(\d+)/mcp", f.read())
        if match:
            return proc, int(match.group(1))
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


def client(port, n, count, kind):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                             "params": {"protocolVersion": "2025-06-18"}}),
                 HEADERS)
    response = conn.getresponse()
    response.read()
    headers = dict(HEADERS, **{"Mcp-Session-Id": response.getheader("Mcp-Session-Id")})
    for i in range(count):
        if kind == "remember":
            call = {"name": "remember", "arguments": {
                "category": "bench", "key": "k%d-%d" % (n, i),
                "body": "note %d from client %d about topic %d" % (i, n, i % 50)}}
        else:
            call = {"name": "recall", "arguments": {"query": "topic note", "limit": 5}}
        conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": i + 1,
                                                 "method": "tools/call", "params": call}),
                     headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
    conn.close()


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start(binary, tmp)
        try:
            for kind in ("remember", "recall"):
                for clients in (1, 4):
                    count = CALLS // clients
                    threads = [threading.Thread(target=client, args=(port, n, count, kind))
                               for n in range(clients)]
                    began = time.perf_counter()
                    for t in threads:
                        t.start()
                    for t in threads:
                        t.join()
                    elapsed = time.perf_counter() - began
                    print("%-8s %d client(s): %4d calls in %.2f s, %5.0f calls/s"
                          % (kind, clients, count * clients, elapsed, count * clients / elapsed))
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
