"""The seeded benchmark corpus: deterministic memories of the kind the scale harness loads.

Memory i has category CATEGORIES[i % 8], key "scale-<i>", type "insight" and body
  {"text": "[i] <40-120 words>", "detail": "entity i in group i%977", "nonce": <16 hex>}
with words drawn from a fixed vocabulary of pseudo-English words. Python standard library only.
"""
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


if __name__ == "__main__":
    for i in range(3):
        print(json.dumps(memory(i)))
