#!/usr/bin/env python3
"""Golden vectors for the BERT encoder's tests (tests/embed/bert_encoder_test.cc).

An independent reference: BERT written out plainly in double precision with the Python
standard library alone (no numpy, no torch), one text at a time, no padding. It builds the
same tiny random models the test writes to disk and records, for a few token-id sequences,
the pooled unit vectors the encoder must reproduce (to 1e-5 per component).

The weight generator (the test's RandomBertTensor implements the same; keep them equal):
  - splitmix64: state += 0x9E3779B97F4A7C15; z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
    return z ^ (z >> 31)   (all modulo 2**64)
  - each tensor has its own stream, seeded with FNV-1a-64(name) XOR model seed, where name is
    the Hugging Face name without the "bert." prefix ("encoder.layer.0.output.dense.weight");
    FNV-1a-64: h = 0xcbf29ce484222325; for each byte: h = (h ^ byte) * 0x100000001b3 mod 2**64
  - values in row-major order; each draws k = (next() >> 56) - 128, an integer in [-128, 128):
      LayerNorm weight:               1 + k / 1024
      LayerNorm bias, Linear bias:    k / 1024
      everything else (embeddings, Linear weights):  k / 256
    so every value is exact in F16 as well as F32: an F16 file holds the same model.

Usage: tools/golden/bert_reference/make_golden.py > tests/embed/testdata/bert_golden.json
"""

import json
import math
import sys

MASK = (1 << 64) - 1

MODELS = [
    {
        "name": "mean_4heads",
        "seed": 1,
        "pooling": "mean",
        "config": {
            "vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 32,
            "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        },
    },
    {
        "name": "cls_2heads",
        "seed": 2,
        "pooling": "cls",
        "config": {
            "vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 2,
            "num_attention_heads": 2, "intermediate_size": 32,
            "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-5,
        },
    },
]

# Token-id sequences: one token, short, repeated ids, every position up to the maximum.
INPUTS = [
    [7],
    [2, 5, 9, 3],
    [2, 17, 33, 41, 8, 63, 3],
    [2, 10, 10, 10, 10, 3],
    [2, 0, 1, 62, 63, 3, 4, 5, 6, 11, 12, 13, 3],
    [(i * 37 + 5) % 64 for i in range(32)],
]


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def tensor(name, shape, model_seed):
    """The tensor `name` of `shape` as nested lists (a vector or a matrix)."""
    rng = SplitMix64(fnv1a64(name) ^ model_seed)
    is_norm = ".LayerNorm." in name
    count = 1
    for d in shape:
        count *= d
    values = []
    for _ in range(count):
        k = (rng.next() >> 56) - 128
        if is_norm and name.endswith(".weight"):
            values.append(1 + k / 1024)
        elif name.endswith(".bias"):
            values.append(k / 1024)
        else:
            values.append(k / 256)
    if len(shape) == 1:
        return values
    cols = shape[1]
    return [values[r * cols:(r + 1) * cols] for r in range(shape[0])]


def linear(x, weight, bias):
    """x [n][in] times weight [out][in] transposed, plus bias [out]."""
    return [[sum(a * b for a, b in zip(row, w)) + bj for w, bj in zip(weight, bias)] for row in x]


def layer_norm(x, weight, bias, eps):
    out = []
    for row in x:
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        inv = 1 / math.sqrt(var + eps)
        out.append([(v - mean) * inv * g + b for v, g, b in zip(row, weight, bias)])
    return out


def gelu(v):
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def encode(ids, model):
    cfg = model["config"]
    seed = model["seed"]
    hidden = cfg["hidden_size"]
    inner = cfg["intermediate_size"]
    heads = cfg["num_attention_heads"]
    head = hidden // heads
    eps = cfg["layer_norm_eps"]

    def t(name, shape):
        return tensor(name, shape, seed)

    word = t("embeddings.word_embeddings.weight", [cfg["vocab_size"], hidden])
    pos = t("embeddings.position_embeddings.weight", [cfg["max_position_embeddings"], hidden])
    typ = t("embeddings.token_type_embeddings.weight", [cfg["type_vocab_size"], hidden])
    x = [[word[i][d] + pos[p][d] + typ[0][d] for d in range(hidden)] for p, i in enumerate(ids)]
    x = layer_norm(x, t("embeddings.LayerNorm.weight", [hidden]),
                   t("embeddings.LayerNorm.bias", [hidden]), eps)

    def dense(x, name, out, inp):
        return linear(x, t(name + ".weight", [out, inp]), t(name + ".bias", [out]))

    n = len(ids)
    for layer in range(cfg["num_hidden_layers"]):
        at = "encoder.layer.%d." % layer
        q = dense(x, at + "attention.self.query", hidden, hidden)
        k = dense(x, at + "attention.self.key", hidden, hidden)
        v = dense(x, at + "attention.self.value", hidden, hidden)
        context = [[0.0] * hidden for _ in range(n)]
        for h in range(heads):
            cols = range(h * head, (h + 1) * head)
            for i in range(n):
                scores = [sum(q[i][c] * k[j][c] for c in cols) / math.sqrt(head) for j in range(n)]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = sum(weights)
                for c in cols:
                    context[i][c] = sum(w * v[j][c] for j, w in enumerate(weights)) / total
        attn = dense(context, at + "attention.output.dense", hidden, hidden)
        x = layer_norm([[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(attn, x)],
                       t(at + "attention.output.LayerNorm.weight", [hidden]),
                       t(at + "attention.output.LayerNorm.bias", [hidden]), eps)
        up = [[gelu(u) for u in row] for row in dense(x, at + "intermediate.dense", inner, hidden)]
        down = dense(up, at + "output.dense", hidden, inner)
        x = layer_norm([[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(down, x)],
                       t(at + "output.LayerNorm.weight", [hidden]),
                       t(at + "output.LayerNorm.bias", [hidden]), eps)

    if model["pooling"] == "cls":
        pooled = x[0]
    else:
        pooled = [sum(row[d] for row in x) / n for d in range(hidden)]
    norm = math.sqrt(sum(p * p for p in pooled))
    return [p / norm for p in pooled]


def main():
    out = {
        "generated_by": "tools/golden/bert_reference/make_golden.py",
        "models": [],
    }
    for model in MODELS:
        entry = dict(model)
        entry["inputs"] = INPUTS
        entry["vectors"] = [[round(v, 12) for v in encode(ids, model)] for ids in INPUTS]
        out["models"].append(entry)
    # One model field, input or vector a line, so a change reads well in a diff.
    lines = ['{"generated_by": %s,' % json.dumps(out["generated_by"]), ' "models": [']
    for m, entry in enumerate(out["models"]):
        lines.append('  {')
        for key in ("name", "seed", "pooling", "config"):
            lines.append('   %s: %s,' % (json.dumps(key), json.dumps(entry[key])))
        for key in ("inputs", "vectors"):
            rows = [json.dumps(row) for row in entry[key]]
            lines.append('   %s: [\n    %s\n   ]%s' % (json.dumps(key), ',\n    '.join(rows),
                                                     ',' if key == "inputs" else ''))
        lines.append('  }' + (',' if m + 1 < len(out["models"]) else ''))
    lines.append(' ]}')
    sys.stdout.write('\n'.join(lines) + '\n')

if __name__ == "__main__":
    main()
