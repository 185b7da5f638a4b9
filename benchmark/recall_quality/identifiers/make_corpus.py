#!/usr/bin/env python3
"""Builds the identifier-recall corpus: one note per changelog entry shipped on this machine.

  python3 benchmark/recall_quality/identifiers/make_corpus.py [--out corpus.jsonl] [--summary]

The text is what Debian ships in /usr/share/doc: Debian changelogs (changelog.Debian.gz, one
note per version stanza), and upstream ChangeLog / NEWS files (changelog.gz, NEWS.gz; one note
per dated GNU ChangeLog entry, per `git log` commit, or per "Noteworthy changes in release X"
section). It is natural text full of identifiers: bug numbers (Closes: #1002301), CVE ids,
versions, package names, paths, host names, commit hashes.

Which packages: the ones tools/bootstrap installs (its `packages=(...)` list is read from the
script), every installed package of Priority "required", and the installed packages they
depend on (Depends and Pre-Depends, transitively; of alternatives the first one installed).
So a CI machine or another developer's machine built from the same Debian 12 image builds the
same corpus, whatever else it has installed. Node.js and npm, which bootstrap looks for as
commands and may come from elsewhere, are left out.

Deterministic: files are read in sorted order, entries in file order; an entry whose text
another entry already has is dropped (binary packages of one source ship the same
changelog); a Debian stanza already seen under the same (source, version) is dropped; an
entry longer than MAX_CHARS is cut at a line end; of an upstream file only its newest
UPSTREAM_PER_FILE entries are kept. Each note's key is derived from a hash of its text, spelled
in letters only (no word, number or hex string that a query could match), so a machine with the
same files gives the same keys. corpus_digest() is the checksum that queries.json records.

Output (with --out): JSON lines {"key", "text", "source", "file", "format", "version"}; the
other scripts import build_corpus() instead. Python standard library only.
"""
import argparse
import gzip
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BOOTSTRAP = os.path.join(ROOT, "tools", "bootstrap")
DPKG_STATUS = "/var/lib/dpkg/status"
DOC_ROOT = "/usr/share/doc"

CATEGORY = "changelog"
MAX_CHARS = 6000
UPSTREAM_PER_FILE = 250
# Packages bootstrap checks for as commands, not as Debian packages.
NOT_DEBIAN = {"nodejs", "npm"}

# A changelog file name: changelog.Debian.gz, changelog.Debian.amd64.gz, changelog.gz,
# NEWS.Debian.gz, NEWS.gz, changelog.1.gz (not the .html ones).
DOC_FILE = re.compile(r"^(changelog|NEWS)(\.Debian)?(\.[a-z0-9]+)?\.gz$")

# Entry headers, one pattern per format. A file is split by the format whose header occurs
# most often in it (at least MIN_HEADERS times); a file with none of them gives no entries.
DEBIAN_HEADER = re.compile(r"^([a-z0-9][a-z0-9+.-]+) \(([^()\s]+)\) [^;\n]*; *urgency=", re.M)
HEADERS = {
    "debian": DEBIAN_HEADER,
    "gnu": re.compile(r"^\d{4}-\d{2}-\d{2}[ \t]+\S[^\n]*<[^>\n]+@[^>\n]+>", re.M),
    "git": re.compile(r"^commit [0-9a-f]{40}\b", re.M),
    "news": re.compile(r"^(?:\* )?(?:Noteworthy|Major) changes in (?:release|version) ", re.M),
}
MIN_HEADERS = 3


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---- which packages ------------------------------------------------------------------------

def bootstrap_packages(path=BOOTSTRAP):
    """The Debian package names of tools/bootstrap's `packages=( ... )` array."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"^packages=\((.*?)^\)", text, re.M | re.S)
    if not match:
        raise RuntimeError(f"{path}: no packages=( ... ) array")
    words = []
    for line in match.group(1).splitlines():
        words += line.split("#", 1)[0].split()
    return [w for w in words if w not in NOT_DEBIAN]


def installed_packages(path=DPKG_STATUS):
    """{name: fields} of the installed packages, and {virtual name: [providers]}."""
    with open(path, encoding="utf-8", errors="replace") as f:
        stanzas = f.read().split("\n\n")
    packages, provides = {}, {}
    for stanza in stanzas:
        fields, current = {}, None
        for line in stanza.splitlines():
            if line[:1] in (" ", "\t") and current:
                fields[current] += "\n" + line
            elif ":" in line:
                current, value = line.split(":", 1)
                fields[current] = value.strip()
        if "Package" not in fields or "install ok installed" not in fields.get("Status", ""):
            continue
        packages[fields["Package"]] = fields
        for item in fields.get("Provides", "").split(","):
            name = item.strip().split(" ")[0]
            if name:
                provides.setdefault(name, []).append(fields["Package"])
    for providers in provides.values():
        providers.sort()
    return packages, provides


def dependency_names(fields):
    """Of each Depends / Pre-Depends item, the alternatives' package names, in order."""
    for field in ("Pre-Depends", "Depends"):
        for item in fields.get(field, "").split(","):
            names = [alt.strip().split(" ")[0].split(":")[0] for alt in item.split("|")]
            names = [n for n in names if n]
            if names:
                yield names


def package_closure(roots, packages, provides):
    """The installed packages among `roots` and everything they depend on, sorted."""
    def resolve(name):
        if name in packages:
            return name
        return provides.get(name, [None])[0]

    seen, stack = set(), list(roots)
    while stack:
        name = resolve(stack.pop())
        if name is None or name in seen:
            continue
        seen.add(name)
        for alternatives in dependency_names(packages[name]):
            installed = [resolve(a) for a in alternatives]
            installed = [a for a in installed if a]
            if installed:
                stack.append(installed[0])
    return sorted(seen)


def corpus_packages():
    packages, provides = installed_packages()
    required = [name for name, fields in packages.items() if fields.get("Priority") == "required"]
    roots = bootstrap_packages()
    missing = [name for name in roots if name not in packages]
    return package_closure(roots + sorted(required), packages, provides), missing


def doc_files(package_names, doc_root=DOC_ROOT):
    """The changelog files of these packages: real paths, each once, sorted."""
    files = set()
    for name in package_names:
        directory = os.path.join(doc_root, name)
        if not os.path.isdir(directory):
            continue
        for entry in os.listdir(directory):
            path = os.path.join(directory, entry)
            if DOC_FILE.match(entry) and os.path.isfile(path):
                files.add(os.path.realpath(path))
    return sorted(files)


# ---- splitting files into entries ----------------------------------------------------------

def read_text(path):
    with gzip.open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace").replace("\r\n", "\n")


def file_format(text):
    counts = {name: len(pattern.findall(text)) for name, pattern in HEADERS.items()}
    name = max(counts, key=lambda n: (counts[n], n == "debian"))
    return name if counts[name] >= MIN_HEADERS else None


def cut(text, limit=MAX_CHARS):
    """`text` without trailing blanks, cut at the last line end before `limit` characters."""
    text = text.strip("\n").rstrip()
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit)
    return text[:end if end > limit // 2 else limit].rstrip()


def split_entries(text, pattern):
    """(header match, entry text) for each header of `pattern`, to the next header."""
    starts = list(pattern.finditer(text))
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        yield match, text[match.start():end]


def letters_key(text):
    """An opaque key from the text's hash, in the letters a-p only."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:14]
    return "cl-" + "".join(chr(ord("a") + int(c, 16)) for c in digest)


def entries_of_file(path):
    text = read_text(path)
    fmt = file_format(text)
    if fmt is None:
        return []
    out = []
    for match, body in split_entries(text, HEADERS[fmt]):
        entry = {"file": path, "format": fmt, "source": None, "version": None}
        if fmt == "debian":
            entry["source"], entry["version"] = match.group(1), match.group(2)
        else:
            entry["source"] = os.path.basename(os.path.dirname(path))
        entry["text"] = cut(body)
        out.append(entry)
    if fmt != "debian":
        out = out[:UPSTREAM_PER_FILE]  # the newest come first
    return out


def build_corpus(progress=False):
    """The corpus as a list of entries (dicts with key and text), and facts about it."""
    names, missing = corpus_packages()
    files = doc_files(names)
    corpus, texts, stanzas = [], set(), set()
    dropped = 0
    for path in files:
        for entry in entries_of_file(path):
            if entry["text"] in texts:
                dropped += 1
                continue
            if entry["format"] == "debian":
                stanza = (entry["source"], entry["version"])
                if stanza in stanzas:
                    dropped += 1
                    continue
                stanzas.add(stanza)
            texts.add(entry["text"])
            entry["key"] = letters_key(entry["text"])
            corpus.append(entry)
    keys = {e["key"] for e in corpus}
    if len(keys) != len(corpus):
        raise RuntimeError("two entries' texts hash to the same key")
    facts = {"packages": len(names), "bootstrap_packages_missing": missing, "files": len(files),
             "entries": len(corpus), "duplicates_dropped": dropped,
             "digest": corpus_digest(corpus)}
    if progress:
        log(f"corpus: {facts['entries']} entries from {facts['files']} files of "
            f"{facts['packages']} packages ({dropped} duplicate entries dropped)")
        if missing:
            log(f"corpus: bootstrap packages not installed here: {' '.join(missing)}")
    return corpus, facts


def corpus_digest(corpus):
    """sha256 over the sorted keys (a key is a hash of its text): equal digests, equal corpora."""
    h = hashlib.sha256()
    for key in sorted(e["key"] for e in corpus):
        h.update(key.encode() + b"\n")
    return h.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", metavar="FILE", help="write the corpus as JSON lines")
    parser.add_argument("--summary", action="store_true",
                        help="print entries per format and the largest sources")
    args = parser.parse_args()
    corpus, facts = build_corpus(progress=True)
    print(json.dumps(facts, indent=1))
    if args.summary:
        by_format, by_source = {}, {}
        for e in corpus:
            by_format[e["format"]] = by_format.get(e["format"], 0) + 1
            by_source[e["source"]] = by_source.get(e["source"], 0) + 1
        print("per format:", json.dumps(by_format))
        top = sorted(by_source.items(), key=lambda kv: -kv[1])[:15]
        print("largest sources:", ", ".join(f"{s} {n}" for s, n in top))
        sizes = sorted(len(e["text"]) for e in corpus)
        print(f"characters per entry: median {sizes[len(sizes) // 2]}, "
              f"max {sizes[-1]}, total {sum(sizes)}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for e in corpus:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
