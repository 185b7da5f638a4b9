"""`strata model` against a fake model hub on 127.0.0.1: a redirect to a "CDN", a connection
cut mid-file and the resume by Range, a wrong digest (nothing installed), a 404, a server that
stalls (the timeout), an unconfirmed card, import from a directory, and verify. The model is a
tiny random BERT written here; no network, no real weights.

Run: python3 tests/e2e/test_model.py <path-to-strata-binary>
"""

import hashlib
import http.server
import json
import os
import random
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import StrataTestCase  # noqa: E402

RUN_TIMEOUT = 60  # only against hangs
HIDDEN, LAYERS, INTERMEDIATE, POSITIONS = 16, 1, 32, 32
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "strata", "."]
VOCAB += ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]


def safetensors(tensors):
    """The bytes of a .safetensors file of F32 `tensors` [(name, shape, values)]."""
    header, body, offset = {}, b"", 0
    for name, shape, values in tensors:
        data = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        body += data
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + body


def tiny_model():
    """{repository path: bytes} of a one-layer random BERT with a 35-token vocabulary."""
    rng = random.Random(15)
    tensors = []

    def add(name, *shape, norm=False):
        count = 1
        for d in shape:
            count *= d
        values = [1.0] * count if norm else [rng.uniform(-0.2, 0.2) for _ in range(count)]
        tensors.append((name, list(shape), values))

    add("embeddings.word_embeddings.weight", len(VOCAB), HIDDEN)
    add("embeddings.position_embeddings.weight", POSITIONS, HIDDEN)
    add("embeddings.token_type_embeddings.weight", 2, HIDDEN)
    add("embeddings.LayerNorm.weight", HIDDEN, norm=True)
    add("embeddings.LayerNorm.bias", HIDDEN)
    for i in range(LAYERS):
        at = "encoder.layer.%d." % i
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            add(at + part + ".weight", HIDDEN, HIDDEN)
            add(at + part + ".bias", HIDDEN)
        add(at + "attention.output.LayerNorm.weight", HIDDEN, norm=True)
        add(at + "attention.output.LayerNorm.bias", HIDDEN)
        add(at + "intermediate.dense.weight", INTERMEDIATE, HIDDEN)
        add(at + "intermediate.dense.bias", INTERMEDIATE)
        add(at + "output.dense.weight", HIDDEN, INTERMEDIATE)
        add(at + "output.dense.bias", HIDDEN)
        add(at + "output.LayerNorm.weight", HIDDEN, norm=True)
        add(at + "output.LayerNorm.bias", HIDDEN)
    config = {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(VOCAB),
              "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": 4,
              "intermediate_size": INTERMEDIATE, "max_position_embeddings": POSITIONS,
              "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
              "position_embedding_type": "absolute"}
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    pooling = {"word_embedding_dimension": HIDDEN, "pooling_mode_cls_token": False,
               "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False}
    return {
        "config.json": json.dumps(config).encode(),
        "vocab.txt": "".join(t + "\n" for t in VOCAB).encode(),
        "tokenizer_config.json": b'{"do_lower_case": true}',
        "modules.json": json.dumps(modules).encode(),
        "1_Pooling/config.json": json.dumps(pooling).encode(),
        "model.safetensors": safetensors(tensors),
    }


MODEL = tiny_model()


def card(name, repository, confirmed=True, files=None):
    files = files if files is not None else MODEL
    entries = []
    for path, data in files.items():
        entry = {"path": path}
        if confirmed:
            entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
        entries.append(entry)
    return {"name": name, "repository": repository, "revision": "rev1", "dimension": HIDDEN,
            "pooling": "mean", "files": entries, "confirmed": confirmed}


class FakeHub(http.server.ThreadingHTTPServer):
    """/<repo>/resolve/rev1/<path>: repo "test/tiny" redirects model.safetensors to /cdn/ and
    cuts the first answer for it halfway; "test/norange" cuts it, then ignores Range;
    "test/flaky" cuts its first three answers (each halfway through what was asked);
    "test/slow" sends headers, then nothing."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests = []  # (path, Range header or None)
        self.cut_next = True
        self.flaky_cuts = 3  # one fetch's attempts
        self.lock = threading.Lock()
        self.stop_slow = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):

    def log_message(self, *args):
        pass

    def send_bytes(self, data, cut=False):
        start = 0
        ranged = self.headers.get("Range")
        if ranged and ranged.startswith("bytes="):
            start = int(ranged[len("bytes="):].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if cut:
            self.wfile.write(data[start:start + (len(data) - start) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(data[start:])

    def do_GET(self):
        hub = self.server
        with hub.lock:
            hub.requests.append((self.path, self.headers.get("Range")))
        parts = self.path.lstrip("/").split("/")
        if parts[:1] == ["cdn"]:
            path = "/".join(parts[1:])
            with hub.lock:
                cut, hub.cut_next = hub.cut_next, False
            return self.send_bytes(MODEL[path], cut=cut) if path in MODEL else self.send_error(404)
        if len(parts) < 5 or parts[2:4] != ["resolve", "rev1"]:
            return self.send_error(404)
        repo, path = "/".join(parts[:2]), "/".join(parts[4:])
        if path not in MODEL:
            return self.send_error(404)
        if repo == "test/slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(MODEL[path])))
            self.end_headers()
            self.wfile.flush()
            hub.stop_slow.wait(30)
            return
        if repo == "test/flaky" and path == "model.safetensors":
            with hub.lock:
                cut = hub.flaky_cuts > 0
                hub.flaky_cuts -= 1
            return self.send_bytes(MODEL[path], cut=cut)
        if repo == "test/norange" and path == "model.safetensors":
            with hub.lock:
                cut, hub.cut_next = hub.cut_next, False
            if not cut:
                del self.headers["Range"]  # answers as a server without ranges does: 200
            return self.send_bytes(MODEL[path], cut=cut)
        if repo in ("test/tiny", "test/wrong") and path == "model.safetensors":
            self.send_response(302)
            self.send_header("Location", "/cdn/" + path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_bytes(MODEL[path])


class ModelCommand(StrataTestCase):

    def setUp(self):
        super().setUp()
        self.hub = FakeHub()
        self.thread = threading.Thread(target=self.hub.serve_forever, daemon=True)
        self.thread.start()
        self.cache = os.path.join(self.tmp, "cache")
        wrong = card("wrong", "test/wrong")
        wrong["files"][-1]["sha256"] = "0" * 64
        self.manifest = os.path.join(self.tmp, "manifest.json")
        with open(self.manifest, "w") as f:
            json.dump([card("tiny", "test/tiny"), wrong,
                       card("missing", "test/tiny", files={"absent.bin": b"x"}),
                       card("slow", "test/slow"),
                       card("norange", "test/norange"),
                       card("flaky", "test/flaky"),
                       card("loose", "test/loose", confirmed=False),
                       dict(card("prefixed", "test/tiny"), query_prefix="query: ",
                            document_prefix="passage: ")], f)

    def tearDown(self):
        self.hub.stop_slow.set()
        self.hub.shutdown()
        self.hub.server_close()
        super().tearDown()

    def run_model(self, *args, endpoint=True):
        env = {k: v for k, v in os.environ.items() if k != "STRATA_MODEL_ENDPOINT"}
        env.update(XDG_CACHE_HOME=self.cache, STRATA_MODEL_MANIFEST=self.manifest,
                   STRATA_MODEL_TIMEOUT="1")
        if endpoint:
            env["STRATA_MODEL_ENDPOINT"] = "http://127.0.0.1:%d/" % self.hub.server_address[1]
        p = subprocess.run([mcp_client.BINARY] + list(args), stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=RUN_TIMEOUT, env=env, cwd=self.tmp)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def installed(self, name):
        return os.path.join(self.cache, "strata", "models", name)

    def write_download(self):
        """The model's files as a user downloaded them by hand; returns their folder."""
        source = os.path.join(self.tmp, "download")
        for path, data in MODEL.items():
            os.makedirs(os.path.dirname(os.path.join(source, path)), exist_ok=True)
            with open(os.path.join(source, path), "wb") as f:
                f.write(data)
        return source

    def assertInstalledAsServed(self, name):
        for path, data in MODEL.items():
            with open(os.path.join(self.installed(name), path), "rb") as f:
                self.assertEqual(f.read(), data, path)

    def test_fetch_follows_the_redirect_and_resumes_after_a_cut(self):
        code, out, err = self.run_model("model", "fetch", "tiny")
        self.assertEqual(code, 0, err)
        self.assertIn("installed tiny in " + self.installed("tiny"), out)
        self.assertInstalledAsServed("tiny")
        self.assertFalse(os.path.exists(self.installed("tiny.partial")))
        cdn = [r for r in self.hub.requests if r[0] == "/cdn/model.safetensors"]
        half = len(MODEL["model.safetensors"]) // 2
        self.assertEqual(cdn, [("/cdn/model.safetensors", None),
                               ("/cdn/model.safetensors", "bytes=%d-" % half)])
        self.assertIn("resuming", err)

        code, out, err = self.run_model("model", "verify", "tiny")
        self.assertEqual(code, 0, err)
        self.assertIn("dimension 16", out)
        self.assertIn("no known-answer vector recorded", out)
        code, out, err = self.run_model("model", "list")
        self.assertEqual(code, 0, err)
        self.assertIn("tiny  dim 16, mean pooling, test/tiny@rev1, confirmed, installed", out)
        self.assertIn("loose  dim 16, mean pooling, test/loose@rev1, UNCONFIRMED", out)
        code, out, err = self.run_model("encode", "--embedder", "bert:model=tiny", "hello world")
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out)["dim"], 16)

        # An installed model is never written over.
        code, _, err = self.run_model("model", "fetch", "tiny")
        self.assertEqual(code, 1)
        self.assertIn("already installed", err)
        self.assertInstalledAsServed("tiny")

    def test_a_server_that_ignores_the_range_restarts_the_file(self):
        code, out, err = self.run_model("model", "fetch", "norange")
        self.assertEqual(code, 0, err)
        self.assertInstalledAsServed("norange")
        ranges = [r[1] for r in self.hub.requests if r[0].endswith("/model.safetensors")]
        self.assertEqual(ranges, [None, "bytes=%d-" % (len(MODEL["model.safetensors"]) // 2)])

    def test_the_next_fetch_resumes_what_an_interrupted_one_left(self):
        code, _, err = self.run_model("model", "fetch", "flaky")
        self.assertEqual(code, 1)
        self.assertFalse(os.path.exists(self.installed("flaky")))
        partial = os.path.join(self.installed("flaky.partial"), "model.safetensors")
        size = len(MODEL["model.safetensors"])
        have = os.path.getsize(partial)
        self.assertEqual(have, size - size // 8)  # three halvings of what was left
        code, _, err = self.run_model("model", "fetch", "flaky")
        self.assertEqual(code, 0, err)
        self.assertInstalledAsServed("flaky")
        self.assertEqual(self.hub.requests[-1][1], "bytes=%d-" % have)

    def test_a_wrong_digest_installs_nothing(self):
        code, _, err = self.run_model("model", "fetch", "wrong")
        self.assertEqual(code, 1)
        self.assertIn("model.safetensors: SHA-256 "
                      + hashlib.sha256(MODEL["model.safetensors"]).hexdigest(), err)
        self.assertFalse(os.path.exists(self.installed("wrong")))
        self.assertFalse(os.path.exists(os.path.join(self.installed("wrong.partial"),
                                                     "model.safetensors")))

    def test_a_404_installs_nothing(self):
        code, _, err = self.run_model("model", "fetch", "missing")
        self.assertEqual(code, 1)
        self.assertIn("HTTP 404", err)
        self.assertIn("absent.bin", err)
        self.assertFalse(os.path.exists(self.installed("missing")))

    def test_a_stalled_server_times_out(self):
        code, _, err = self.run_model("model", "fetch", "slow")
        self.assertEqual(code, 1)
        self.assertIn("timed out", err)
        self.assertFalse(os.path.exists(self.installed("slow")))

    def test_an_unconfirmed_card_needs_consent_and_prints_the_digests(self):
        code, _, err = self.run_model("model", "fetch", "loose")
        self.assertEqual(code, 1)
        self.assertIn("--allow-unconfirmed", err)
        self.assertFalse(os.path.exists(self.installed("loose")))
        code, out, err = self.run_model("model", "fetch", "loose", "--allow-unconfirmed")
        self.assertEqual(code, 0, err)
        self.assertIn("WARNING", err)
        self.assertIn("UNCONFIRMED", err)
        self.assertInstalledAsServed("loose")
        # What a maintainer compares with the hub's listing to confirm the card.
        for path, data in MODEL.items():
            self.assertIn("  %s  %d  %s\n" % (path, len(data), hashlib.sha256(data).hexdigest()),
                          out)

    def test_import_installs_checked_files_and_unconfirmed_ones_on_consent(self):
        source = self.write_download()
        code, out, err = self.run_model("model", "import", "tiny", source)
        self.assertEqual(code, 0, err)
        self.assertInstalledAsServed("tiny")
        code, out, err = self.run_model("model", "import", "loose", source, "--allow-unconfirmed")
        self.assertEqual(code, 0, err)
        self.assertIn("WARNING", err)
        weights = MODEL["model.safetensors"]
        self.assertIn("model.safetensors  %d  %s"
                      % (len(weights), hashlib.sha256(weights).hexdigest()), out)
        code, _, err = self.run_model("model", "import", "wrong", source)
        self.assertEqual(code, 1)
        self.assertFalse(os.path.exists(self.installed("wrong")))

    def test_a_cards_prefixes_go_before_queries_and_documents(self):
        source = self.write_download()
        code, _, err = self.run_model("model", "import", "prefixed", source)
        self.assertEqual(code, 0, err)

        def encode(spec, text, role="document"):
            code, out, err = self.run_model("encode", "--embedder", spec, "--role", role, text)
            self.assertEqual(code, 0, err)
            return json.loads(out)

        text = "hello world"
        query = encode("bert:model=prefixed", text, role="query")
        document = encode("bert:model=prefixed", text)
        plain = "bert:dir=" + source
        self.assertEqual(query["vectors"], encode(plain, "query: " + text)["vectors"])
        self.assertEqual(document["vectors"], encode(plain, "passage: " + text)["vectors"])
        self.assertNotEqual(query["vectors"], encode(plain, text)["vectors"])
        # The document prefix changes stored vectors, so it is part of the fingerprint.
        self.assertTrue(document["embedder"].endswith(",document_prefix=passage: "),
                        document["embedder"])
        # A spec's own prefixes win over the card's.
        mine = encode("bert:model=prefixed,query_prefix=find: ", text, role="query")
        self.assertEqual(mine["vectors"], encode(plain, "find: " + text)["vectors"])
        code, _, err = self.run_model("encode", "--role", "other", text)
        self.assertEqual(code, 2)
        self.assertIn("--role must be document or query", err)

    def test_usage_errors(self):
        for args in (["model"], ["model", "fetch"], ["model", "remove", "tiny"],
                     ["model", "import", "tiny"]):
            code, _, err = self.run_model(*args)
            self.assertEqual(code, 2, args)
            self.assertIn("strata model: give list", err)
        code, _, err = self.run_model("model", "fetch", "tiny", endpoint=False)
        self.assertEqual(code, 2)
        self.assertIn("STRATA_MODEL_ENDPOINT", err)
        self.assertFalse(self.hub.requests)
        code, _, err = self.run_model("model", "fetch", "nonesuch")
        self.assertEqual(code, 2)
        self.assertIn("strata model list", err)
        code, _, err = self.run_model("model", "verify", "tiny")
        self.assertEqual(code, 1)
        self.assertIn("not installed", err)


if __name__ == "__main__":
    mcp_client.run_tests()
