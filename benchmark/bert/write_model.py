#!/usr/bin/env python3
"""Writes a random BERT of the all-MiniLM-L6-v2 shape as a sentence-transformers directory, for
`strata --embedder bert:dir=DIR` in the benchmarks (benchmark/scale/run.py --embedder).

Shape: vocabulary 30,522, hidden 384, 6 layers, 12 heads, intermediate 1,536, 512 positions,
mean pooling, max_seq_length 256 (as MiniLM's sentence_bert_config.json). Values are
offset + k * step for k uniform in [-128, 127], drawn from Python's generator: embeddings
k/256, LayerNorm weights 1 + k/1024, biases k/1024 (as tests/testing/bert_model.h), and the
Linear layers' weights of standard deviation --weight-std (default 0.04, of the order of a
trained sentence model's, whose Linear weights are a few hundredths). With the tests' k/256
(standard deviation 0.29) the model is chaotic (half of all attention rows put over 0.9 on
one token) and the int8 self-check fails (PERF.md, "The BERT encoder"); at 0.04 it holds, so
`int8=1` runs int8.

The vocabulary holds the special tokens, then the scale corpus's words (benchmark/scale/
corpus.py) and the digits, each one token, then fillers: a corpus text of N words is about
N tokens, where a real vocabulary would split some words.

  python3 benchmark/bert/write_model.py DIR [--weight-std 0.04]
"""
import argparse
import array
import json
import math
import os
import random
import string
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scale"))
import corpus  # noqa: E402

VOCAB, HIDDEN, LAYERS, INTERMEDIATE, POSITIONS = 30522, 384, 6, 1536, 512


def values(rng, count, scale, offset=0.0):
    """`count` floats offset + k * scale, k uniform in [-128, 127], as float32 bytes."""
    table = [offset + (b - 128) * scale for b in range(256)]
    return array.array("f", map(table.__getitem__, rng.randbytes(count))).tobytes()


def tensors(seed, weight_std):
    rng = random.Random(seed)
    out = []

    def add(name, shape, scale, offset=0.0):
        count = 1
        for d in shape:
            count *= d
        out.append((name, shape, values(rng, count, scale, offset)))

    add("embeddings.word_embeddings.weight", [VOCAB, HIDDEN], 1 / 256)
    add("embeddings.position_embeddings.weight", [POSITIONS, HIDDEN], 1 / 256)
    add("embeddings.token_type_embeddings.weight", [2, HIDDEN], 1 / 256)
    add("embeddings.LayerNorm.weight", [HIDDEN], 1 / 1024, 1.0)
    add("embeddings.LayerNorm.bias", [HIDDEN], 1 / 1024)
    for i in range(LAYERS):
        at = f"encoder.layer.{i}."
        for name, rows, cols in (("attention.self.query", HIDDEN, HIDDEN),
                                 ("attention.self.key", HIDDEN, HIDDEN),
                                 ("attention.self.value", HIDDEN, HIDDEN),
                                 ("attention.output.dense", HIDDEN, HIDDEN),
                                 ("intermediate.dense", INTERMEDIATE, HIDDEN),
                                 ("output.dense", HIDDEN, INTERMEDIATE)):
            # k uniform in [-128, 127] has a standard deviation of 256 / sqrt(12).
            add(at + name + ".weight", [rows, cols], weight_std * math.sqrt(12) / 256)
            add(at + name + ".bias", [rows], 1 / 1024)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            add(at + norm + ".weight", [HIDDEN], 1 / 1024, 1.0)
            add(at + norm + ".bias", [HIDDEN], 1 / 1024)
    return out


def write_safetensors(path, items):
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, data in items:
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, _, data in items:
            f.write(data)


def vocabulary():
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words += sorted(set(corpus.WORDS) | set(corpus.PERSEUS_CATEGORIES) | set(corpus.CATEGORIES))
    words += list(string.digits) + list(string.punctuation)
    words += [f"##{d}" for d in string.digits]
    words += [f"filler{i}" for i in range(VOCAB - len(words))]
    return words


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--weight-std", type=float, default=0.04,
                        help="standard deviation of the Linear layers' weights")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.makedirs(os.path.join(args.dir, "1_Pooling"), exist_ok=True)

    def write_json(name, value):
        with open(os.path.join(args.dir, name), "w") as f:
            json.dump(value, f)

    write_json("config.json", {"architectures": ["BertModel"], "model_type": "bert",
                               "vocab_size": VOCAB, "hidden_size": HIDDEN,
                               "num_hidden_layers": LAYERS, "num_attention_heads": 12,
                               "intermediate_size": INTERMEDIATE, "hidden_act": "gelu",
                               "max_position_embeddings": POSITIONS, "type_vocab_size": 2,
                               "layer_norm_eps": 1e-12, "position_embedding_type": "absolute"})
    write_json("modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])
    write_json("1_Pooling/config.json", {"word_embedding_dimension": HIDDEN,
                                         "pooling_mode_mean_tokens": True})
    write_json("sentence_bert_config.json", {"max_seq_length": 256, "do_lower_case": False})
    write_json("tokenizer_config.json", {"do_lower_case": True})
    with open(os.path.join(args.dir, "vocab.txt"), "w") as f:
        f.write("\n".join(vocabulary()) + "\n")
    write_safetensors(os.path.join(args.dir, "model.safetensors"),
                      tensors(args.seed, args.weight_std))


if __name__ == "__main__":
    main()
