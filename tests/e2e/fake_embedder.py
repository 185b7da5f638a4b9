"""An embedder the test controls: an OpenAI-style embeddings endpoint on loopback
(`--embedder openai:url=...`) that answers with a vector derived from each text's hash.

Tests that race strata's background embedding worker use it to take the race away. The
worker is as fast as the machine lets it be, and a loaded CI machine once let it embed a
3,000-version backlog before the test's next request arrived. Here the test decides how long
the embedder takes, in wall-clock time rather than CPU: `slow_when(predicate, seconds)` delays
every request whose texts match, and `hold()` keeps every request waiting until `release()`.
"""

import hashlib
import http.server
import json
import struct
import threading
import time

DIMENSION = 8


def vector_of(text):
    """DIMENSION numbers in [-1, 1) from the text's SHA-256; never all zero in practice."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [v / 32768.0 for v in struct.unpack("<%dh" % DIMENSION, digest[:2 * DIMENSION])]


def openai_spec(port, dim, model="fake", **options):
    """The --embedder value for an OpenAI-style endpoint on loopback `port`, then `options`."""
    return "openai:url=http://127.0.0.1:%d/v1/embeddings,model=%s,dim=%d%s" % (
        port, model, dim, "".join(",%s=%s" % option for option in options.items()))


class FakeEmbedder:

    def __init__(self):
        self.answered = []  # The texts of each request answered so far, in order.
        self._condition = threading.Condition()
        self._released = threading.Event()
        self._released.set()
        self._slow = (lambda texts: False, 0.0)
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                texts = json.loads(body)["input"]
                fake._wait(texts)
                answer = json.dumps({"object": "list", "data": [
                    {"object": "embedding", "index": i, "embedding": vector_of(t)}
                    for i, t in enumerate(texts)]}).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                with fake._condition:
                    fake.answered.append(texts)
                    fake._condition.notify_all()

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # Polling every 50 ms, so that close() does not wait the default half second.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()

    @property
    def spec(self):
        """The --embedder value; a minute's timeout, so that a held request does not fail."""
        return openai_spec(self._server.server_address[1], DIMENSION, timeout_ms=60000)

    def slow_when(self, predicate, seconds):
        """Every later request whose list of texts satisfies `predicate` takes `seconds`."""
        self._slow = (predicate, seconds)

    def hold(self):
        self._released.clear()

    def release(self):
        self._released.set()

    def wait_answered(self, predicate, timeout):
        """Until a request whose texts satisfy `predicate` has been answered; False if
        `timeout` seconds pass first."""
        with self._condition:
            return self._condition.wait_for(
                lambda: any(predicate(texts) for texts in self.answered), timeout)

    def close(self):
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _wait(self, texts):
        self._released.wait()
        predicate, seconds = self._slow
        if seconds > 0 and predicate(texts):
            time.sleep(seconds)
