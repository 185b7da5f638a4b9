#!/usr/bin/env python3
"""Makes (or checks) queries.json: identifier and phrase queries over the changelog corpus.

  python3 benchmark/recall_quality/identifiers/make_queries.py [--seed 17] [--out queries.json]
  python3 benchmark/recall_quality/identifiers/make_queries.py --check [queries.json]

Every query is something an agent could have typed exactly, taken from one corpus entry:

  cve      CVE-2023-38545
  bug      #1002301 (form "hash") and 1002301 (form "bare")
  version  3.0.11-1~deb12u2 (a Debian version, form "debian") or 4.2.0 (form "upstream")
  package  openssl 3.0.11 (a source package and an upstream version of it)
  path     debian/patches/fix-foo.patch, /usr/bin/md5sum
  host     sourceware.org, keys.openpgp.org
  sha      the first 7 to 12 hex digits of a commit hash
  phrase   two adjacent uncommon words (form "2") or three adjacent words (form "3")

A query's relevant entries are ALL the corpus entries that contain it, by the rules of
`matcher()` (case-insensitive; an identifier must stand alone: "#12345" does not match inside
"#123456", nor "1.2.3" inside "1.2.3.4"; "3.0.11" does match in "3.0.11-1", a version of
3.0.11; a package query needs both the name and the version; a sha query matches every hash
that starts with the prefix; a phrase matches its words with only white space between them).
Only queries with 1 to MAX_RELEVANT relevant entries are kept, at most a few per source
package and kind, so no single changelog dominates.

The file records the corpus's entry count and digest (make_corpus.corpus_digest). --check
rebuilds the corpus and verifies every label against it: the entries labeled must be exactly
the entries that contain the query. It exits 1 on any difference, and says first whether this
machine's corpus is the one the labels were made on.

Python standard library only; the choice of queries depends only on the corpus and the seed.
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import make_corpus  # noqa: E402

QUERIES = os.path.join(HERE, "queries.json")
SEED = 17
MAX_RELEVANT = 3

# (kind, form): how many queries of it.
QUOTAS = {
    ("cve", None): 40,
    ("bug", "hash"): 25,
    ("bug", "bare"): 25,
    ("version", "debian"): 25,
    ("version", "upstream"): 20,
    ("package", None): 35,
    ("path", None): 40,
    ("host", None): 20,
    ("sha", None): 30,
    ("phrase", "2"): 35,
    ("phrase", "3"): 25,
}
# At most this share of a kind's queries may come from one source package.
PER_SOURCE_SHARE = 0.2

STOPWORDS = set("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing done down during each few for from
further had has have having he her here hers him his how i if in into is it its itself just
me more most my no nor not now of off on once only or other our out over own same she should
so some such than that the their them then there these they this those through to too under
until up upon very was we were what when where which while who whom why will with would you
your new now use used uses using fix fixed fixes fixing add added adds adding remove removed
update updated updates bump release released version debian upstream patch patches closes
changes change changed file files thanks""".split())


# ---- what "contains" means ------------------------------------------------------------------

def _pattern(query):
    """A case-insensitive regex for one query's text, or a list of them (all must match)."""
    kind, text = query["kind"], query["query"]
    e = re.escape
    if kind == "cve":
        return rf"(?<![A-Za-z0-9]){e(text)}(?![0-9])"
    if kind == "bug":
        if text.startswith("#"):
            return rf"(?<![A-Za-z0-9&]){e(text)}(?![0-9])"
        return rf"(?<![A-Za-z0-9.]){e(text)}(?![0-9]|\.[0-9])"
    if kind == "version":
        return rf"(?<![A-Za-z0-9.+~]){e(text)}(?![A-Za-z0-9]|[.~+][A-Za-z0-9])"
    if kind == "package":
        name, version = query["package"], query["version"]
        return [rf"(?<![A-Za-z0-9.+-]){e(name)}(?![A-Za-z0-9+]|[.-][A-Za-z])",
                rf"(?<![A-Za-z0-9.+~]){e(version)}(?![A-Za-z0-9]|[.~+][A-Za-z0-9])"]
    if kind == "path":
        return rf"(?<![A-Za-z0-9_./-]){e(text)}(?![A-Za-z0-9_/-]|\.[A-Za-z0-9])"
    if kind == "host":
        return rf"(?<![A-Za-z0-9.-]){e(text)}(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
    if kind == "sha":
        return rf"(?<![A-Za-z0-9]){e(text)}[0-9a-f]*(?![A-Za-z0-9])"
    if kind == "phrase":
        words = text.split()
        return r"(?<![\w/.-])" + r"\s+".join(e(w) for w in words) + r"(?![\w/-]|\.\w)"
    raise ValueError(f"unknown kind {kind!r}")


def _needles(query):
    """Lower-case strings every matching text contains (a quick filter before the regex)."""
    if query["kind"] == "package":
        return [query["package"].lower(), query["version"].lower()]
    if query["kind"] == "phrase":
        return query["query"].lower().split()
    return [query["query"].lower()]


def matcher(query):
    """A function text -> bool: does this text contain the query (see the module docstring)."""
    patterns = _pattern(query)
    if isinstance(patterns, str):
        patterns = [patterns]
    compiled = [re.compile(p, re.I) for p in patterns]
    needles = _needles(query)

    def contains(text, lowered=None):
        lowered = lowered if lowered is not None else text.lower()
        return all(n in lowered for n in needles) and all(c.search(text) for c in compiled)
    return contains


class Index:
    """The corpus with its lower-cased texts, for finding which entries contain a query."""

    def __init__(self, corpus):
        self.entries = corpus
        self.lowered = [e["text"].lower() for e in corpus]
        self.text_of = {e["key"]: e["text"] for e in corpus}

    def relevant(self, query):
        contains = matcher(query)
        return sorted(e["key"] for e, low in zip(self.entries, self.lowered)
                      if contains(e["text"], low))


# ---- candidates -----------------------------------------------------------------------------

CVE = re.compile(r"CVE-\d{4}-\d{4,7}", re.I)
BUG = re.compile(r"(?<![A-Za-z0-9&])#(\d{5,7})(?![0-9])")
UPSTREAM_VERSION = re.compile(r"(?<![A-Za-z0-9.+~-])\d+\.\d+\.\d+(?:\.\d+)?(?![A-Za-z0-9]|\.\d)")
PATH = re.compile(r"(?<![\w./:@-])(?:/?[A-Za-z0-9_+][A-Za-z0-9_.+-]*/)+"
                  r"[A-Za-z0-9_.+-]*[A-Za-z0-9_+]")
HOST = re.compile(r"(?<![\w.@/-])(?:https?://|ftp://)?((?:[a-z0-9][a-z0-9-]*\.)+"
                  r"(?:org|com|net|edu|de|fr|uk|io|jp|fi|ch|nl|cz|it|be|dk|no|ru|se))(?![\w-])")
HEX = re.compile(r"(?<![A-Za-z0-9])[0-9a-f]{7,40}(?![A-Za-z0-9])")
PHRASE_FIRST = re.compile(r"^[(\"'`]*[A-Za-z]+$")
PHRASE_INNER = re.compile(r"^[A-Za-z]+$")
PHRASE_LAST = re.compile(r"^[A-Za-z]+[)\"'`,;:!?]*\.?$")
WORD = re.compile(r"[A-Za-z]+")


def upstream_of(debian_version):
    """3.0.11 of 1:3.0.11-1~deb12u2."""
    version = debian_version.split(":", 1)[-1]
    return version.rsplit("-", 1)[0] if "-" in version else version


def good_path(path):
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2 or len(path) < 8 or "//" in path:
        return False
    if not all(re.search("[A-Za-z]", s) for s in segments):
        return False  # PR/24991, 2022/01/02
    if re.match(r"(www\.|[a-z0-9-]+\.(org|com|net)$)", segments[0]):
        return False  # a URL without its scheme
    return path.startswith("/") or re.search(r"\.[a-z][a-z0-9]{0,5}$", segments[-1]) is not None


def candidates(corpus):
    """{(kind, form): [(query dict, source)]}, each list sorted, without repeats."""
    found = {k: {} for k in QUOTAS}

    def add(kind, form, source, text, **extra):
        found[(kind, form)].setdefault(text, (dict(kind=kind, form=form, query=text, **extra),
                                              source))

    for e in corpus:
        text, source = e["text"], e["source"]
        for m in CVE.finditer(text):
            add("cve", None, source, m.group(0).upper())
        for m in BUG.finditer(text):
            add("bug", "hash", source, "#" + m.group(1))
            add("bug", "bare", source, m.group(1))
        if e["format"] == "debian":
            add("version", "debian", source, e["version"].split(":", 1)[-1])
            upstream = upstream_of(e["version"])
            if re.search(r"\d", upstream) and "." in upstream:
                add("package", None, source, f"{source} {upstream}", package=source,
                    version=upstream)
        for m in UPSTREAM_VERSION.finditer(text):
            add("version", "upstream", source, m.group(0))
        for m in PATH.finditer(text):
            if good_path(m.group(0)):
                add("path", None, source, m.group(0))
        for m in HOST.finditer(text):
            add("host", None, source, m.group(1))
        for m in HEX.finditer(text):
            h = m.group(0)
            if re.search("[a-f]", h) and len(re.findall("[0-9]", h)) >= 2:
                add("sha", None, source, h)
    return {k: [v[t] for t in sorted(v)] for k, v in found.items()}


def document_frequencies(corpus):
    df = {}
    for e in corpus:
        for w in set(WORD.findall(e["text"].lower())):
            df[w] = df.get(w, 0) + 1
    return df


def phrase_candidates(entry, n, df, rng):
    """Runs of `n` adjacent words of one entry, with only white space between them, that read
    as a phrase: words of 3+ letters (the first may follow an opening bracket or quote, the
    last may end a clause), not mostly stop words; for two words, both uncommon."""
    tokens = entry["text"].split()
    runs = []
    for i in range(len(tokens) - n + 1):
        chunk = tokens[i:i + n]
        if not (PHRASE_FIRST.match(chunk[0]) and all(PHRASE_INNER.match(t) for t in chunk[1:-1])
                and PHRASE_LAST.match(chunk[-1])):
            continue
        low = [WORD.search(t).group(0).lower() for t in chunk]
        if any(len(w) < 3 for w in low):
            continue
        content = [w for w in low if w not in STOPWORDS]
        if n == 2 and (len(content) < 2 or any(df.get(w, 0) > 60 or len(w) < 4 for w in low)):
            continue
        if n == 3 and (len(content) < 2 or any(df.get(w, 0) > 400 for w in content)
                       or low[0] in STOPWORDS or low[-1] in STOPWORDS):
            continue
        runs.append(" ".join(low))
    rng.shuffle(runs)
    return runs


# ---- choosing -------------------------------------------------------------------------------

def choose(corpus, seed):
    rng = random.Random(seed)
    index = Index(corpus)
    pools = candidates(corpus)
    chosen, used = [], set()
    for (kind, form), quota in QUOTAS.items():
        per_source_cap = max(2, int(quota * PER_SOURCE_SHARE))
        per_source = {}
        picked = []

        def take(query, source):
            if query["query"].lower() in used or per_source.get(source, 0) >= per_source_cap:
                return False
            relevant = index.relevant(query)
            if not 1 <= len(relevant) <= MAX_RELEVANT:
                return False
            query["relevant"] = relevant
            per_source[source] = per_source.get(source, 0) + 1
            used.add(query["query"].lower())
            picked.append(query)
            return True

        if kind == "phrase":
            df = document_frequencies(corpus)
            order = list(range(len(corpus)))
            rng.shuffle(order)
            for i in order:
                if len(picked) >= quota:
                    break
                for phrase in phrase_candidates(corpus[i], int(form), df, rng)[:3]:
                    if take(dict(kind=kind, form=form, query=phrase), corpus[i]["source"]):
                        break
        else:
            pool = list(pools[(kind, form)])
            rng.shuffle(pool)
            for query, source in pool:
                if len(picked) >= quota:
                    break
                if kind == "sha":
                    query = dict(query, query=query["query"][:rng.randint(7, 12)])
                take(query, source)
        if len(picked) < quota:
            print(f"warning: {kind}/{form}: only {len(picked)} of {quota} queries",
                  file=sys.stderr)
        chosen += picked
    for n, q in enumerate(chosen, 1):
        q["id"] = f"{q['kind']}-{n:03d}"
    return [{k: q[k] for k in ("id", "kind", "form", "query", "package", "version", "relevant")
             if k in q and q[k] is not None} for q in chosen]


def literally_in(query, text):
    """A second opinion, independent of the regexes: the query's words occur in the text."""
    folded = " ".join(text.lower().split())
    if query["kind"] == "package":
        return query["package"].lower() in folded and query["version"].lower() in folded
    return query["query"].lower() in folded


def check(path):
    with open(path, encoding="utf-8") as f:
        labeled = json.load(f)
    corpus, facts = make_corpus.build_corpus(progress=True)
    same = (facts["digest"] == labeled["corpus"]["digest"])
    print(f"corpus here: {facts['entries']} entries, digest {facts['digest'][:16]}; labels made "
          f"on {labeled['corpus']['entries']} entries, digest {labeled['corpus']['digest'][:16]}"
          f": {'the same corpus' if same else 'A DIFFERENT CORPUS'}")
    index = Index(corpus)
    bad = 0
    for q in labeled["queries"]:
        relevant = index.relevant(q)
        if relevant != sorted(q["relevant"]):
            bad += 1
            missing = sorted(set(q["relevant"]) - set(relevant))
            extra = sorted(set(relevant) - set(q["relevant"]))
            print(f"  {q['id']} {q['query']!r}: labeled {len(q['relevant'])}, found "
                  f"{len(relevant)} (not found: {missing}, unlabeled: {extra})")
        elif not all(literally_in(q, index.text_of[key]) for key in relevant):
            bad += 1
            print(f"  {q['id']} {q['query']!r}: a labeled entry does not contain it literally")
        elif not 1 <= len(relevant) <= MAX_RELEVANT:
            bad += 1
            print(f"  {q['id']} {q['query']!r}: {len(relevant)} relevant entries")
    print(f"{len(labeled['queries']) - bad} of {len(labeled['queries'])} labels verified")
    return 1 if bad or not same else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", default=QUERIES)
    parser.add_argument("--check", nargs="?", const=QUERIES, metavar="FILE",
                        help="verify the labels of FILE (default queries.json) and exit")
    args = parser.parse_args()
    if args.check:
        return check(args.check)
    corpus, facts = make_corpus.build_corpus(progress=True)
    queries = choose(corpus, args.seed)
    counts = {}
    for q in queries:
        label = q["kind"] + (f"/{q['form']}" if q.get("form") else "")
        counts[label] = counts.get(label, 0) + 1
    out = {
        "description": "Identifier and phrase queries over Debian changelog entries; "
                       "see make_queries.py. relevant: the keys of every corpus entry "
                       "containing the query.",
        "seed": args.seed,
        "max_relevant": MAX_RELEVANT,
        "corpus": {"entries": facts["entries"], "digest": facts["digest"],
                   "files": facts["files"], "packages": facts["packages"],
                   "category": make_corpus.CATEGORY},
        "counts": counts,
        "queries": queries,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(queries)} queries to {args.out}: {json.dumps(counts)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
