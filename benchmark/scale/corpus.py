"""The seeded benchmark corpora: deterministic memories of the kind the scale harness loads.

Two profiles, the same shape: memory i has category CATEGORIES[i % 8], key "scale-<i>", type
"insight" and body
  {"text": "[i] <40-120 words>", "detail": "entity i in group i%977", "nonce": <16 hex>}

- `perseus` (the corpus of record): Perseus Vault's scale harness's corpus. Its
  categories (PERSEUS_CATEGORIES), words drawn uniformly with replacement from its small
  vocabulary (WORDS), nonce = the first 16 hex digits of SHA-1 of "scale-<i>". The word count
  (uniform in 40..120) and the words come from Python's random.Random seeded with
  PERSEUS_SEED * 1_000_003 + i (count = randint(40, 120), words = choices(WORDS, k=count)):
  Perseus Vault's own RNG cannot be reproduced, so the exact draws differ from its harness's
  while their distribution is the same.
- `pseudo`: strata's earlier corpus, words from 4,096 seeded pseudo-English words, nonce from
  the same seeded RNG.

Python standard library only.
"""
import hashlib
import json
import random

CATEGORIES = ["decision", "convention", "person", "preference", "fact", "project", "incident", "todo"]
GROUPS = 977

_ONSETS = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
           "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "rk"]


def vocabulary(size: int = 4096, seed: int = 1977) -> list:
    """`size` distinct pseudo-words of two or three syllables, the same for every run."""
    rng = random.Random(seed)
    words, seen = [], set()
    while len(words) < size:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.choice((2, 2, 3))))
        word += rng.choice(_CODAS)
        if word not in seen and word not in ("entity", "group", "in"):
            seen.add(word)
            words.append(word)
    return words


VOCABULARY = vocabulary()


def body(i: int, seed: int = 42) -> dict:
    rng = random.Random(seed * 1_000_003 + i)
    words = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(40, 120)))
    return {
        "text": f"[{i}] {words}",
        "detail": f"entity {i} in group {i % GROUPS}",
        "nonce": "%016x" % rng.getrandbits(64),
    }


def memory(i: int, seed: int = 42) -> dict:
    """The remember arguments of memory i."""
    return {
        "category": CATEGORIES[i % len(CATEGORIES)],
        "key": f"scale-{i}",
        "type": "insight",
        "body": body(i, seed),
    }


# Perseus Vault's harness's corpus. Its description calls WORDS "60 words" but lists these 47; the
# list is what is reproduced.
PERSEUS_CATEGORIES = ["decision", "architecture", "convention", "insight", "fact", "infrastructure",
                      "reference", "conversation"]
WORDS = ("service latency schema deploy index queue worker retry cache shard vault memory recall "
         "decay layer topic entity journal replica merge postgres sqlite onnx embedding vector "
         "keyword hybrid ranking fusion timeout breaker fallback config workspace scope audit "
         "chain commit release binary stdio transport tool argument budget threshold gate").split()
PERSEUS_SEED = 60


def perseus_body(i: int, seed: int = PERSEUS_SEED) -> dict:
    rng = random.Random(seed * 1_000_003 + i)
    words = " ".join(rng.choices(WORDS, k=rng.randint(40, 120)))
    return {
        "text": f"[{i}] {words}",
        "detail": f"entity {i} in group {i % GROUPS}",
        "nonce": hashlib.sha1(f"scale-{i}".encode()).hexdigest()[:16],
    }


def perseus_memory(i: int, seed: int = PERSEUS_SEED) -> dict:
    """The canonical remember arguments of memory i of the perseus profile."""
    return {
        "category": PERSEUS_CATEGORIES[i % len(PERSEUS_CATEGORIES)],
        "key": f"scale-{i}",
        "type": "insight",
        "body": perseus_body(i, seed),
    }


def perseus_remember_args(i: int, seed: int = PERSEUS_SEED) -> dict:
    """The perseus_vault_remember arguments of memory i, as Perseus Vault's harness sends them:
    the body as a JSON text in body_json."""
    m = perseus_memory(i, seed)
    body = m.pop("body")
    m["body_json"] = json.dumps(body, separators=(",", ":"))
    return m


# profile name -> the canonical remember arguments of memory i.
PROFILES = {"perseus": perseus_memory, "pseudo": memory}


if __name__ == "__main__":
    import sys
    make = PROFILES[sys.argv[1] if len(sys.argv) > 1 else "perseus"]
    for i in range(3):
        print(json.dumps(make(i)))
