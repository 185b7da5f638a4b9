#!/usr/bin/env python3
"""Checks benchmark/recall_quality/dataset.json: its shape and its overlap labels.

  python3 benchmark/recall_quality/check_dataset.py [--dataset path] [--verbose]

Shape: unique (category, key) memories with kebab-case keys and a string body "text"; every
query's relevant memories exist; at least half the queries are labeled "low".

Overlap: a query's content words are compared with the words of its relevant memory's body
(every string value), key and category, the way the keyword index sees them: split on
anything that is not a letter or digit, lowercased, diacritics dropped, Porter-stemmed (the
original 1980 algorithm, which SQLite FTS5's porter tokenizer implements), function words
removed. A "low" query may share at most one stem with each of its relevant memories; a
"high" query must share at least two with one of them. Exits 1 when any check fails.
"""
import argparse
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))

# Function words only: pronouns, articles, auxiliaries, prepositions, conjunctions, question
# words. Content verbs ("use", "get", "make") and nouns are deliberately not here, so the
# check counts them as overlap.
STOP_WORDS = set("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each either even
ever few for from further had has have having he her here hers herself him himself his how i
if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up us very was we
were what when where which while who whom whose why will with would you your yours yourself
yourselves s t d ll m re ve don doesn didn isn aren wasn weren can't won shan may might must
shall etc eg e g i.e
""".split())


# ---- Porter stemmer (M.F. Porter, "An algorithm for suffix stripping", 1980) -------------

def _is_consonant(word, i):
    c = word[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem):
    """m in [C](VC){m}[V]."""
    m, i, n = 0, 0, len(stem)
    while i < n and _is_consonant(stem, i):
        i += 1
    while i < n:
        while i < n and not _is_consonant(stem, i):
            i += 1
        if i >= n:
            break
        while i < n and _is_consonant(stem, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem):
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word):
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word):
    if len(word) < 3:
        return False
    return (_is_consonant(word, len(word) - 3) and not _is_consonant(word, len(word) - 2)
            and _is_consonant(word, len(word) - 1) and word[-1] not in "wxy")


def _replace(word, suffix, replacement, condition):
    """(matched, new word): matched when word ends with suffix; replaced if condition(stem)."""
    if not word.endswith(suffix):
        return False, word
    stem = word[:len(word) - len(suffix)]
    if condition(stem):
        return True, stem + replacement
    return True, word


STEP2 = [("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
         ("izer", "ize"), ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
         ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
         ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
         ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")]
STEP3 = [("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
         ("ful", ""), ("ness", "")]
STEP4 = ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
         "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"]


def stem(word):
    if len(word) <= 2:
        return word
    # Step 1a
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("ss"):
        pass
    elif word.endswith("s"):
        word = word[:-1]
    # Step 1b
    step1b_extra = False
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[:-len(suffix)]):
                word = word[:-len(suffix)]
                step1b_extra = True
                break
    if step1b_extra:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _ends_double_consonant(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    # Step 1c
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    # Step 2
    for suffix, replacement in STEP2:
        matched, word = _replace(word, suffix, replacement, lambda s: _measure(s) > 0)
        if matched:
            break
    # Step 3
    for suffix, replacement in STEP3:
        matched, word = _replace(word, suffix, replacement, lambda s: _measure(s) > 0)
        if matched:
            break
    # Step 4
    for suffix in STEP4:
        if word.endswith(suffix):
            s = word[:-len(suffix)]
            if _measure(s) > 1:
                if suffix != "ion" or s.endswith(("s", "t")):
                    word = s
            break
    # Step 5a
    if word.endswith("e"):
        s = word[:-1]
        m = _measure(s)
        if m > 1 or (m == 1 and not _cvc(s)):
            word = s
    # Step 5b
    if _measure(word) > 1 and _ends_double_consonant(word) and word.endswith("l"):
        word = word[:-1]
    return word


# ---- overlap -------------------------------------------------------------------------------

def strip_diacritics(text):
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def content_stems(text):
    words = re.findall(r"[a-z0-9]+", strip_diacritics(text).lower())
    return {stem(w) for w in words if w not in STOP_WORDS}


def string_values(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from string_values(v)
    elif isinstance(value, list):
        for v in value:
            yield from string_values(v)


def memory_stems(memory):
    return content_stems(" ".join([*string_values(memory["body"]), memory["key"],
                                   memory["category"]]))


def shared_stems(query, memory):
    return sorted(content_stems(query) & memory_stems(memory))


# ---- checks --------------------------------------------------------------------------------

def check(dataset, verbose=False):
    problems = []
    memories = {}
    for i, m in enumerate(dataset["memories"]):
        ident = (m.get("category"), m.get("key"))
        if ident in memories:
            problems.append(f"memory {i}: duplicate {ident}")
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", m.get("key", "")):
            problems.append(f"memory {i}: key {m.get('key')!r} is not kebab-case")
        body = m.get("body")
        if not isinstance(body, dict) or not isinstance(body.get("text"), str) or \
                not all(isinstance(v, str) for v in body.values()):
            problems.append(f"memory {i}: body must be an object of strings with a \"text\"")
        memories[ident] = m
    low = 0
    for i, q in enumerate(dataset["queries"]):
        label = q.get("overlap")
        if label not in ("low", "high"):
            problems.append(f"query {i}: overlap must be low or high, not {label!r}")
            continue
        relevant = [(r["category"], r["key"]) for r in q.get("relevant", [])]
        if not relevant:
            problems.append(f"query {i}: no relevant memory")
        missing = [r for r in relevant if r not in memories]
        if missing:
            problems.append(f"query {i} {q['query']!r}: unknown relevant memories {missing}")
            continue
        shared = {r: shared_stems(q["query"], memories[r]) for r in relevant}
        if verbose:
            print(f"{label:4} {max(len(s) for s in shared.values())} {q['query']!r} "
                  + "; ".join(f"{r[1]}: {s}" for r, s in shared.items()))
        if label == "low":
            low += 1
            for r, s in shared.items():
                if len(s) > 1:
                    problems.append(f"query {i} {q['query']!r} is labeled low but shares "
                                    f"{s} with {r[0]}/{r[1]}")
        elif max(len(s) for s in shared.values()) < 2:
            problems.append(f"query {i} {q['query']!r} is labeled high but shares only "
                            f"{max(shared.values(), key=len)} with its memories")
    total = len(dataset["queries"])
    if low * 2 < total:
        problems.append(f"only {low} of {total} queries are labeled low (need at least half)")
    return problems, low


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=os.path.join(HERE, "dataset.json"))
    parser.add_argument("--verbose", action="store_true", help="print each query's shared stems")
    args = parser.parse_args()
    with open(args.dataset, encoding="utf-8") as f:
        dataset = json.load(f)
    problems, low = check(dataset, args.verbose)
    categories = {}
    for m in dataset["memories"]:
        categories[m["category"]] = categories.get(m["category"], 0) + 1
    print(f"{len(dataset['memories'])} memories "
          f"({', '.join(f'{c} {n}' for c, n in sorted(categories.items()))}); "
          f"{len(dataset['queries'])} queries ({low} low, {len(dataset['queries']) - low} high)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
