#!/usr/bin/env python3
"""Generates benchmark/dedup/pairs.json: a labeled set of near-duplicate pairs for the write
path's dedup rule. Deterministic: the same WordNet files and SEED give the same file.

  python3 benchmark/dedup/make_pairs.py [--out benchmark/dedup/pairs.json]

Each pair is two memories of one category under different keys, `a` written first, then `b`,
with a label saying what the write of `b` must do:

- `merge`: b adds nothing to a, so merging it into a (an alias) loses nothing: an exact
  re-store, whitespace / punctuation / case changes, reordered sentences or JSON members, a
  stop or filler word added or removed, a content word or a JSON member removed (b's
  information is a subset of a's). Every merge pair's b has at least 8 distinct content words, above
  the rule's 6 value units, so the size floor does not decide it.
- `keep_similar`: b adds information and must be written, naming a in `similar`: one content
  word changed (a correction), one content word added, a number changed, an identifier
  changed, a negation added, one JSON value changed, one JSON member added.
- `distinct`: must be written and never merged: different subjects with the same short
  attribute (`{"title": "senior engineer"}` under hr/alice and hr/bob), and unrelated pairs.

Base texts: WordNet glosses (Debian's wordnet-base, read by benchmark/scale/natural_recall.py),
sentences of the kind agents store about a project (TEMPLATES, with numbers and identifiers),
and structured bodies (JSON objects of a few fields). Each pair records its `kind` (the edit
that made b from a) beside its label. Python standard library only.
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
from natural_recall import WORDNET, glosses  # noqa: E402

SEED = 12
PER_KIND = 24  # pairs of each kind that has one per base kind
DISTINCT_SAME_ATTRIBUTE = 60
DISTINCT_UNRELATED = 40

# Words that carry no information of their own for this benchmark's purposes: b may add or drop
# them and still add nothing. Negations and pronouns are deliberately absent (they count).
STOP = set("""a an the and or but of to in on at by for with from as into onto over under about
is are was were be been being it its this that these those which who whom whose what when where
how than then there here such also really very just quite some any each both either neither so
too only own same other more most can will would should could may might must do does did has
have had often usually""".split())
FILLERS = ["the", "really", "also", "very", "just"]
NEGATABLE = ["is", "are", "was", "were", "can", "should", "must", "will", "does", "do"]

NAMES = ["alice", "bob", "carol", "dmitri", "erin", "farid", "grace", "hiro", "ines", "jonas",
         "kemal", "lena", "marco", "nadia", "oscar", "priya", "quinn", "rosa", "sven", "tamar",
         "umar", "vera", "wei", "xenia", "yusuf", "zoe"]
SURNAMES = ["lang", "ito", "okafor", "novak", "silva", "berg", "kim", "haddad", "moreau", "rossi"]
TITLES = ["senior engineer", "staff engineer", "engineering manager", "product designer",
          "data scientist", "site reliability engineer", "technical writer", "principal engineer",
          "security analyst", "support lead"]
TEAMS = ["storage", "billing", "search", "identity", "payments", "ingest", "mobile", "platform",
         "observability", "growth"]
CITIES = ["Berlin", "Lisbon", "Toronto", "Osaka", "Nairobi", "Denver", "Warsaw", "Austin",
          "Dublin", "Seoul"]
LANGS = ["Go", "Rust", "Python", "Kotlin", "TypeScript", "Java", "Elixir", "Swift", "Haskell", "Zig"]
SERVICES = ["billing", "checkout", "ledger", "gateway", "scheduler", "indexer", "notifier",
            "exporter", "uploader", "resolver"]
DATABASES = ["postgres", "mysql", "cassandra", "redis", "clickhouse", "sqlite"]
REGIONS = ["eu-west-1", "us-east-2", "ap-south-1", "eu-central-1", "us-west-2", "sa-east-1"]
EDITORS = ["vim", "emacs", "helix", "vscode", "zed", "kakoune"]
SHORT_ATTRIBUTES = [  # (category, body) short bodies whose meaning lives in their key
    ("hr", lambda r: {"title": r.choice(TITLES)}),
    ("hr", lambda r: {"team": r.choice(TEAMS)}),
    ("hr", lambda r: {"title": r.choice(TITLES), "team": r.choice(TEAMS)}),
    ("preference", lambda r: {"editor": r.choice(EDITORS)}),
    ("preference", lambda r: "prefers dark mode"),
    ("preference", lambda r: {"language": r.choice(LANGS)}),
    ("location", lambda r: {"city": r.choice(CITIES)}),
    ("people", lambda r: f"works on the {r.choice(TEAMS)} team"),
]

# Project memories of the kind agents store, each with a number, an identifier and an
# auxiliary verb to negate. Slots: {svc} {db} {region} {team} {lang} {person} {n} {m} {ticket}
# {version} {path} {func} {host}.
TEMPLATES = [
    "The {svc} service retries failed requests {n} times with a {m} ms backoff before it opens the circuit breaker toward {host}",
    "Deploys of the {svc} service go out from the release branch every {n} days after the integration suite passes on staging in {region}",
    "Ticket {ticket} tracks the memory leak in the {svc} worker that appears after {n} hours of uptime on the {region} hosts",
    "{person} leads the {team} team and prefers {lang} for new services because its tooling catches mistakes early; ticket {ticket} has the rationale",
    "The nightly backup of the {db} database runs at {n}:00 UTC and keeps {m} daily snapshots in cold storage under {path}",
    "Version {version} of the client library fixed the timeout handling in the connection pool that {svc} uses to reach {db}",
    "The config file {path} sets the cache size to {n} megabytes on production hosts and the eviction window to {m} minutes",
    "Alerts for the {svc} service page the on-call engineer when the p99 latency stays above {n} ms for {m} minutes in {region}",
    "Code reviews for the {team} repository should wait for {n} approvals before merging, and {person} must sign off on schema changes",
    "The {db} replica in {region} lags behind the primary by about {n} seconds during the nightly batch jobs that {svc} schedules",
    "Function {func} in {path} parses the request body, validates {n} required fields and returns an error naming the offset",
    "The staging cluster in {region} runs {n} nodes with {m} gigabytes of memory each, and the {svc} pods are pinned to {host}",
    "Feature flag {ticket} is enabled for {n} percent of {team} customers while {person} watches the error budget of {svc}",
    "The {svc} importer can process {n} thousand rows per minute when the {db} connection pool holds {m} connections",
]


def content_words(text):
    return [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", text) if w.lower() not in STOP]


def distinct_stems(text):
    """Distinct content words by stem_key: what a merge pair's b must have at least 8 of."""
    return len({stem_key(w) for w in content_words(text)})


def value_units(body):
    """Content words, numbers and identifiers among a JSON body's values (member names not
    counted), roughly as the rule counts its value units."""
    values = " ".join(str(v) for v in body.values())
    return distinct_stems(values) + len(set(re.findall(r"\d+", values)))


def stem_key(word):
    """A conservative stand-in for the server's stemmer: two words with the same first five
    letters are taken as one stem when choosing a word that must be new."""
    return word.lower()[:5]


class Maker:
    def __init__(self, rng, vocabulary):
        self.rng = rng
        self.vocabulary = vocabulary  # content words, for corrections and additions
        self.serial = 0

    def fill(self, template):
        r = self.rng
        first = r.choice(NAMES).capitalize()
        values = {
            "svc": r.choice(SERVICES), "db": r.choice(DATABASES), "region": r.choice(REGIONS),
            "team": r.choice(TEAMS), "lang": r.choice(LANGS), "person": first,
            "n": str(r.randint(2, 64)), "m": str(r.randint(100, 990)),
            "ticket": f"{r.choice(['STOR', 'BILL', 'OPS', 'SRCH'])}-{r.randint(1000, 9999)}",
            "version": f"v{r.randint(1, 4)}.{r.randint(0, 30)}.{r.randint(0, 9)}",
            "path": f"/etc/{r.choice(SERVICES)}/{r.choice(['main', 'cache', 'pool'])}.toml",
            "func": f"{r.choice(['parse', 'load', 'merge', 'check'])}_{r.choice(['body', 'config', 'batch', 'header'])}",
            "host": f"{r.choice(SERVICES)}-{r.randint(1, 40):02d}.internal",
        }
        return template.format(**values)

    def new_word(self, text):
        """A content word whose stem is not in text."""
        taken = {stem_key(w) for w in re.findall(r"[A-Za-z]+", text)}
        while True:
            word = self.rng.choice(self.vocabulary)
            if stem_key(word) not in taken and word.lower() not in STOP:
                return word

    def single_content_word(self, text):
        """The (start, end) of a content word that occurs once (by stem) in text, or None. Only
        whole words (not parts of identifiers such as main.toml or eu-west-1)."""
        spans = [(m.start(1), m.end(1)) for m in re.finditer(r"(?:^|(?<=[\s\"(]))([A-Za-z]+)(?=[\s,;:.\")]|$)(?![.\w-]\w)", text)]
        counts = {}
        for s, e in spans:
            counts[stem_key(text[s:e])] = counts.get(stem_key(text[s:e]), 0) + 1
        choices = [(s, e) for s, e in spans if text[s:e].lower() not in STOP and counts[stem_key(text[s:e])] == 1
                   and len(text[s:e]) >= 4]
        return self.rng.choice(choices) if choices else None


# Each edit takes (maker, text) and returns the edited text or None when it does not apply.
def edit_exact(mk, t):
    return t


def edit_whitespace(mk, t):
    words = t.split(" ")
    i = mk.rng.randrange(1, len(words))
    return "  " + " ".join(words[:i]) + "\n  " + "   ".join(words[i:i + 2]) + " " + " ".join(words[i + 2:]) + " \n"


def edit_punctuation(mk, t):
    if "," in t or ";" in t:
        return t.replace(",", "").replace(";", ",") + "."
    words = t.split(" ")
    i = mk.rng.randrange(2, len(words) - 1)
    return " ".join(words[:i]) + ", " + " ".join(words[i:]) + "!"


def edit_case(mk, t):
    for edited in ((t.upper(), t.lower(), t.title()) if mk.rng.random() < 0.3 else (t.lower(), t.title(), t.upper())):
        if edited != t:
            return edited
    return None


def edit_reorder(mk, t):
    """Swaps the clauses of a text (split at ';' or ', and')."""
    head, sep, rest = t.partition(": ")
    body = rest if sep else t
    parts = [p.strip() for p in body.split(";") if p.strip()]
    if len(parts) >= 2:
        mk.rng.shuffle(parts) if len(parts) > 2 else parts.reverse()
        return (head + sep if sep else "") + "; ".join(parts)
    if ", and " in t:
        left, right = t.split(", and ", 1)
        return right[0].upper() + right[1:] + ". " + left + "."
    return None


def edit_filler_added(mk, t):
    words = t.split(" ")
    i = mk.rng.randrange(1, len(words))
    return " ".join(words[:i] + [mk.rng.choice(FILLERS)] + words[i:])


def edit_filler_removed(mk, t):
    words = t.split(" ")
    stops = [i for i, w in enumerate(words) if w.lower() in STOP and i > 0]
    if not stops:
        return None
    i = mk.rng.choice(stops)
    return " ".join(words[:i] + words[i + 1:])


def edit_content_removed(mk, t):
    span = mk.single_content_word(t)
    if not span:
        return None
    s, e = span
    return re.sub(r"  +", " ", t[:s] + t[e:]).strip()


SLOT_POOLS = [LANGS, DATABASES, TEAMS, SERVICES, CITIES, [n.capitalize() for n in NAMES]]


def edit_word_changed(mk, t):
    """A correction: a slot value (a language, a database, a team, ...) replaced by another of
    its kind when the text has one, else a content word by an unrelated one."""
    words = t.split(" ")
    slots = [(i, pool) for i, w in enumerate(words) for pool in SLOT_POOLS if w in pool]
    if slots:
        i, pool = mk.rng.choice(slots)
        taken = {stem_key(w) for w in re.findall(r"[A-Za-z]+", t)}
        options = [p for p in pool if stem_key(p) not in taken]
        if options:
            return " ".join(words[:i] + [mk.rng.choice(options)] + words[i + 1:])
    span = mk.single_content_word(t)
    if not span:
        return None
    s, e = span
    return t[:s] + mk.new_word(t) + t[e:]


def edit_word_added(mk, t):
    words = t.split(" ")
    i = mk.rng.randrange(1, len(words))
    return " ".join(words[:i] + [mk.new_word(t)] + words[i:])


def edit_number_changed(mk, t):
    numbers = list(re.finditer(r"(?<![\w.-])\d+(?![\w.])", t))
    if not numbers:
        return None
    m = mk.rng.choice(numbers)
    value = int(m.group())
    value += mk.rng.choice([1, 2, 10, -1]) if value > 2 else 3
    return t[:m.start()] + str(value) + t[m.end():]


def edit_identifier_changed(mk, t):
    ident = list(re.finditer(r"\b[A-Z]+-\d+\b|\bv\d+\.\d+\.\d+\b|/[\w/.-]+|\b\w+_\w+\b|\b[\w]+-\d+\.internal\b", t))
    if not ident:
        return None
    m = mk.rng.choice(ident)
    old = m.group()
    digits = [i for i, c in enumerate(old) if c.isdigit()]
    if digits:
        i = digits[-1]
        new = old[:i] + str((int(old[i]) + 1) % 10) + old[i + 1:]
    else:
        new = old.replace("_", "_" + mk.rng.choice(["raw", "safe", "all"]) + "_", 1)
    return t[:m.start()] + new + t[m.end():]


def edit_negation(mk, t):
    words = t.split(" ")
    aux = [i for i, w in enumerate(words) if w in NEGATABLE]
    if aux:
        i = aux[0]
        return " ".join(words[:i + 1] + ["not"] + words[i + 1:])
    head, sep, rest = t.partition(": ")
    if sep:
        return head + sep + "not " + rest
    return None


MERGE_TEXT_EDITS = {"exact": edit_exact, "whitespace": edit_whitespace, "punctuation": edit_punctuation,
                    "case": edit_case, "reordered": edit_reorder, "filler_added": edit_filler_added,
                    "filler_removed": edit_filler_removed, "content_word_removed": edit_content_removed}
KEEP_TEXT_EDITS = {"content_word_changed": edit_word_changed, "content_word_added": edit_word_added,
                   "number_changed": edit_number_changed, "identifier_changed": edit_identifier_changed,
                   "negation_added": edit_negation}


def structured(mk):
    r = mk.rng
    first, last = r.choice(NAMES), r.choice(SURNAMES)
    kind = r.randrange(3)
    if kind == 0:
        key = f"{first}-{last}"
        body = {"name": f"{first.capitalize()} {last.capitalize()}", "title": r.choice(TITLES),
                "team": r.choice(TEAMS), "city": r.choice(CITIES), "languages": ", ".join(r.sample(LANGS, 2)),
                "manager": f"{r.choice(NAMES).capitalize()} {r.choice(SURNAMES).capitalize()}"}
        return "people", key, body
    if kind == 1:
        svc = r.choice(SERVICES)
        key = f"{svc}-deploy"
        body = {"service": svc, "owner team": r.choice(TEAMS), "database": r.choice(DATABASES),
                "region": r.choice(REGIONS), "replicas": r.randint(2, 12), "language": r.choice(LANGS),
                "runbook": f"/runbooks/{svc}/deploy.md"}
        return "infrastructure", key, body
    key = f"adr-{r.randint(10, 99)}"
    body = {"decision": f"use {r.choice(DATABASES)} for the {r.choice(SERVICES)} queue",
            "reason": r.choice(["it keeps ordering per shard", "the team already operates it",
                                "replication is simpler to monitor", "it survives a zone outage"]),
            "status": r.choice(["accepted", "proposed"]), "decided by": f"{first.capitalize()} {last.capitalize()}",
            "ticket": f"ARCH-{r.randint(100, 999)}", "review date": f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"}
    return "decision", key, body


def json_edit(mk, body, kind):
    """The structured variant of b for `kind`, or None."""
    r = mk.rng
    items = list(body.items())
    if kind == "exact":
        return dict(items)
    if kind == "reordered":
        shuffled = items[:]
        while shuffled == items:
            r.shuffle(shuffled)
        return dict(shuffled)
    if kind == "case":
        return {k: (v.lower() if isinstance(v, str) and not v.startswith("/") else v) for k, v in items}
    if kind == "whitespace":
        return {k: (f" {v}  " if isinstance(v, str) else v) for k, v in items}
    if kind == "member_removed":
        drop = r.randrange(len(items))
        return dict(items[:drop] + items[drop + 1:])
    if kind == "value_changed":
        people = [f"{n.capitalize()} {s.capitalize()}" for n in NAMES[:8] for s in SURNAMES[:3]]
        pools = {"title": TITLES, "team": TEAMS, "city": CITIES, "owner team": TEAMS, "database": DATABASES,
                 "region": REGIONS, "language": LANGS, "status": ["rejected", "superseded"],
                 "manager": people, "decided by": people}
        i = r.choice([i for i, (k, _) in enumerate(items) if k in pools])
        k, v = items[i]
        new = r.choice([p for p in pools[k] if p != v and stem_key(p) != stem_key(v)])
        return dict(items[:i] + [(k, new)] + items[i + 1:])
    if kind == "number_changed":
        nums = [i for i, (_, v) in enumerate(items) if isinstance(v, int)]
        if not nums:
            return None
        k, v = items[nums[0]]
        return dict(items[:nums[0]] + [(k, v + 1)] + items[nums[0] + 1:])
    if kind == "member_added":
        extra = r.choice([("pager", f"{r.choice(TEAMS)}-oncall"), ("office", r.choice(CITIES)),
                          ("backup", r.choice(DATABASES)), ("deadline", "2027-03-01")])
        if extra[0] in body:
            return None
        return dict(items + [extra])
    raise ValueError(kind)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(HERE, "pairs.json"))
    args = parser.parse_args()
    if not os.path.isdir(WORDNET):
        sys.exit(f"no {WORDNET}: run tools/bootstrap (Debian package wordnet-base)")
    rng = random.Random(SEED)
    every = glosses(10 ** 9)
    usable = [(k, t) for k, t in every if 9 <= distinct_stems(t) and len(t) <= 240]
    vocabulary = sorted({w.lower() for _, t in rng.sample(usable, 3000) for w in content_words(t)
                         if len(w) >= 5 and w.isalpha()})
    mk = Maker(rng, vocabulary)
    pairs = []

    def add(label, kind, base, category, key_a, body_a, key_b, body_b):
        pair = {"id": len(pairs), "label": label, "kind": kind, "base": base, "category": category,
                "a": {"key": key_a, "body": body_a}, "b": {"key": key_b, "body": body_b}}
        pairs.append(pair)

    def text_bases():
        """Endless (base, category, key, text): glosses and filled templates, alternating."""
        while True:
            key, text = rng.choice(usable)
            yield "gloss", "glossary", key, text
            template = rng.randrange(len(TEMPLATES))
            yield "template", "project", f"note-{template}-{rng.randrange(10 ** 6)}", mk.fill(TEMPLATES[template])

    bases = text_bases()
    for label, edits in (("merge", MERGE_TEXT_EDITS), ("keep_similar", KEEP_TEXT_EDITS)):
        for kind, edit in edits.items():
            made = 0
            while made < PER_KIND:
                base, category, key, text = next(bases)
                edited = edit(mk, text)
                if edited is None or (kind != "exact" and edited == text):
                    continue
                if label == "merge" and distinct_stems(edited) < 8:
                    continue
                add(label, kind, base, category, key, {"text": text}, key + "-2", {"text": edited})
                made += 1

    json_kinds = [("merge", "exact"), ("merge", "reordered"), ("merge", "case"), ("merge", "whitespace"),
                  ("merge", "member_removed"), ("keep_similar", "value_changed"),
                  ("keep_similar", "number_changed"), ("keep_similar", "member_added")]
    for label, kind in json_kinds:
        made = 0
        while made < PER_KIND // 2:
            category, key, body = structured(mk)
            edited = json_edit(mk, body, kind)
            if edited is None or (label == "merge" and value_units(edited) < 8):
                continue
            add(label, "json_" + kind, "structured", category, key, body, key + "-2", edited)
            made += 1

    for _ in range(DISTINCT_SAME_ATTRIBUTE):
        category, make = rng.choice(SHORT_ATTRIBUTES)
        body = make(rng)
        a, b = rng.sample(NAMES, 2)
        add("distinct", "same_attribute", "short", category, a, body, b, json.loads(json.dumps(body)))
    for i in range(DISTINCT_UNRELATED):
        if i % 2:
            (ka, ta), (kb, tb) = rng.sample(usable, 2)
            add("distinct", "unrelated", "gloss", "glossary", ka, {"text": ta}, kb, {"text": tb})
        else:
            category, key, body = structured(mk)
            while True:
                category_b, key_b, body_b = structured(mk)
                if category_b == category and key_b != key:
                    break
            add("distinct", "unrelated", "structured", category, key, body, key_b, body_b)

    with open(args.out, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(p, ensure_ascii=False, separators=(",", ":")) for p in pairs) + "\n]\n")
    counts = {}
    for p in pairs:
        counts[p["label"]] = counts.get(p["label"], 0) + 1
    print(f"wrote {len(pairs)} pairs to {args.out} ({os.path.getsize(args.out):,} bytes): {counts}")


if __name__ == "__main__":
    main()
