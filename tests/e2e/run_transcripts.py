"""Replays request/response transcripts (tests/e2e/transcripts/*.jsonl) against the real binary.

A transcript is a JSON-lines file; each line is one step:
  {"send": <message object/array, or a raw string sent as the line>, "expect": <partial JSON>}
  {"send": ..., "expect_none": true}      the server must not answer (checked with a ping probe)
  {"server_args": [...]}                  first line only: extra arguments after --db PATH
  {"comment": "..."}                      ignored (also allowed as a member of any step)
Blank lines are ignored.

`expect` is a subset of the response: objects match when each expected member matches
(the response may have more members); lists are compared elementwise and must have the same
length, or in any order when their first element is "$unordered". Placeholders in expect:
  "$any", "$any_int", "$any_number", "$any_string", "$any_bool", "$any_array", "$any_object",
  "$null_or_int", "$absent" (the member must be missing), "$contains:TEXT" (a string containing
  TEXT, case-insensitive), "$save:NAME" (anything; saved as NAME), "$NAME" (equals a saved
  value), "$days:N" (the transcript's start time + N days, unix ms).
In send, a string "$NAME" or "$days:N" is replaced by its value (keeping its JSON type), and
"${NAME}" / "${days:N}" inside a string by its text, e.g. "${t1}" for a numeric string.

Every transcript runs against a fresh temporary database; the server must exit 0 on EOF and
write nothing but JSON-RPC lines, exactly one per answered step.

Run: python3 tests/e2e/run_transcripts.py <path-to-strata-binary>
"""

import glob
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mcp_client  # noqa: E402
from mcp_client import DAY_MS, StrataTestCase, now_ms  # noqa: E402

TRANSCRIPT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transcripts")
_TYPE_PLACEHOLDERS = {
    "$any_int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "$any_number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "$any_string": lambda v: isinstance(v, str),
    "$any_bool": lambda v: isinstance(v, bool),
    "$any_array": lambda v: isinstance(v, list),
    "$any_object": lambda v: isinstance(v, dict),
    "$null_or_int": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
    "$any": lambda v: True,
}
_MISSING = object()


class Variables:
    """Saved values and the transcript's time base."""

    def __init__(self, base_ms):
        self.base_ms = base_ms
        self.saved = {}

    def lookup(self, name):
        """The value of NAME (without "$"), or _MISSING."""
        if name.startswith("days:"):
            return self.base_ms + int(round(float(name[5:]) * DAY_MS))
        return self.saved.get(name, _MISSING)

    def substitute(self, value):
        """Replaces "$NAME" values and "${NAME}" text in a message to send."""
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if isinstance(value, str):
            if value.startswith("$") and not value.startswith("${"):
                found = self.lookup(value[1:])
                if found is not _MISSING:
                    return found
            return re.sub(r"\$\{([^}]+)\}", lambda m: self._text(m.group(1)), value)
        return value

    def _text(self, name):
        found = self.lookup(name)
        if found is _MISSING:
            raise KeyError("unknown transcript variable %r" % name)
        return found if isinstance(found, str) else json.dumps(found)


def match(expected, actual, variables, path="$"):
    """None when `actual` matches `expected` (see the module doc), else why not."""
    if isinstance(expected, str) and expected.startswith("$"):
        if expected in _TYPE_PLACEHOLDERS:
            if actual is _MISSING or not _TYPE_PLACEHOLDERS[expected](actual):
                return "%s: expected %s, got %s" % (path, expected, _show(actual))
            return None
        if expected == "$absent":
            return None if actual is _MISSING else "%s: expected absent, got %s" % (
                path, _show(actual))
        if expected.startswith("$contains:"):
            needle = expected[len("$contains:"):]
            if not isinstance(actual, str) or needle.lower() not in actual.lower():
                return "%s: expected a string containing %r, got %s" % (path, needle,
                                                                        _show(actual))
            return None
        if expected.startswith("$save:"):
            if actual is _MISSING:
                return "%s: missing (to be saved as %s)" % (path, expected[6:])
            variables.saved[expected[6:]] = actual
            return None
        if not expected.startswith("${"):
            value = variables.lookup(expected[1:])
            if value is not _MISSING:
                return match(value, actual, variables, path)
            raise KeyError("unknown placeholder or variable %r at %s" % (expected, path))
        expected = variables.substitute(expected)
    if actual is _MISSING:
        return "%s: missing (expected %s)" % (path, _show(expected))
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return "%s: expected an object, got %s" % (path, _show(actual))
        for key, value in expected.items():
            problem = match(value, actual.get(key, _MISSING), variables, "%s.%s" % (path, key))
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return "%s: expected an array, got %s" % (path, _show(actual))
        unordered = bool(expected) and expected[0] == "$unordered"
        items = expected[1:] if unordered else expected
        if len(items) != len(actual):
            return "%s: expected %d elements, got %d: %s" % (path, len(items), len(actual),
                                                             _show(actual))
        if not unordered:
            for i, (e, a) in enumerate(zip(items, actual)):
                problem = match(e, a, variables, "%s[%d]" % (path, i))
                if problem:
                    return problem
            return None
        remaining = list(actual)
        for i, e in enumerate(items):
            for j, a in enumerate(remaining):
                if match(e, a, Variables(variables.base_ms), "") is None:
                    match(e, a, variables, "")  # now keep any saved values
                    del remaining[j]
                    break
            else:
                return "%s: no element matches %s in %s" % (path, _show(e), _show(actual))
        return None
    if type(expected) is not type(actual) and not (
            isinstance(expected, (int, float)) and isinstance(actual, (int, float))
            and not isinstance(expected, bool) and not isinstance(actual, bool)):
        return "%s: expected %s, got %s" % (path, _show(expected), _show(actual))
    if expected != actual:
        return "%s: expected %s, got %s" % (path, _show(expected), _show(actual))
    return None


def _show(value):
    if value is _MISSING:
        return "(missing)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def load_transcript(path):
    steps = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                step = json.loads(line)
            except ValueError as e:
                raise ValueError("%s:%d: not JSON: %s" % (path, number, e))
            if not isinstance(step, dict):
                raise ValueError("%s:%d: a step must be an object" % (path, number))
            step["_line"] = number
            steps.append(step)
    return steps


class TranscriptTest(StrataTestCase):
    """One test per transcript file, added below."""

    def replay(self, path):
        steps = load_transcript(path)
        server_args = []
        if steps and "server_args" in steps[0]:
            server_args = steps.pop(0)["server_args"]
        client = self.spawn(*server_args)
        variables = Variables(now_ms())
        answered = 0
        name = os.path.basename(path)
        for step in steps:
            if "send" not in step:
                self.assertEqual(set(step) - {"comment", "_line"}, set(),
                                 "%s:%d: a step without send" % (name, step["_line"]))
                continue
            where = "%s:%d" % (name, step["_line"])
            message = variables.substitute(step["send"])
            client.send(message)
            if step.get("expect_none"):
                probe = "transcript-probe-%d" % step["_line"]
                client.send({"jsonrpc": "2.0", "id": probe, "method": "ping"})
                response = client.read_message()
                answered += 1
                self.assertEqual(response.get("id") if isinstance(response, dict) else response,
                                 probe, "%s: expected no response to %s, got %s"
                                 % (where, _show(message), _show(response)))
                continue
            self.assertIn("expect", step, "%s: a step needs expect or expect_none" % where)
            response = client.read_message()
            answered += 1
            problem = match(step["expect"], response, variables)
            if problem:
                self.fail("%s: sent %s\n  %s\n  response: %s"
                          % (where, _show(message), problem, _show(response)))
        self.assertEqual(client.close(), 0, "%s: exit code" % name)
        self.assertEqual(len(client.stdout_lines()), answered,
                         "%s: the server wrote lines nobody asked for" % name)


def _add_transcript_tests():
    paths = sorted(glob.glob(os.path.join(TRANSCRIPT_DIR, "*.jsonl")))
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        test = (lambda p: lambda self: self.replay(p))(path)
        test.__name__ = "test_" + re.sub(r"\W", "_", stem)
        setattr(TranscriptTest, test.__name__, test)
    return paths


TRANSCRIPTS = _add_transcript_tests()


class TranscriptFiles(unittest.TestCase):

    def test_transcripts_exist(self):
        stems = {os.path.splitext(os.path.basename(p))[0] for p in TRANSCRIPTS}
        self.assertLessEqual({"canonical_session", "perseus_session", "errors"}, stems)


class Matcher(unittest.TestCase):
    """The matcher itself, so that a transcript can fail."""

    def m(self, expected, actual):
        return match(expected, actual, Variables(1000))

    def test_subset_objects(self):
        self.assertIsNone(self.m({"a": 1}, {"a": 1, "b": 2}))
        self.assertIsNotNone(self.m({"a": 1}, {"a": 2}))
        self.assertIsNotNone(self.m({"a": 1}, {"b": 1}))
        self.assertIsNotNone(self.m({"a": {"b": 1}}, {"a": {"b": "1"}}))
        self.assertIsNotNone(self.m({"a": True}, {"a": 1}))
        self.assertIsNone(self.m({"a": "$absent"}, {"b": 1}))
        self.assertIsNotNone(self.m({"a": "$absent"}, {"a": None}))

    def test_lists(self):
        self.assertIsNone(self.m([1, {"a": 1}], [1, {"a": 1, "b": 0}]))
        self.assertIsNotNone(self.m([1, 2], [1, 2, 3]))
        self.assertIsNotNone(self.m([1, 2], [2, 1]))
        self.assertIsNone(self.m(["$unordered", 1, 2], [2, 1]))
        self.assertIsNotNone(self.m(["$unordered", 1, 1], [1, 2]))

    def test_placeholders(self):
        self.assertIsNone(self.m("$any_int", 5))
        self.assertIsNotNone(self.m("$any_int", 5.5))
        self.assertIsNotNone(self.m("$any_int", True))
        self.assertIsNone(self.m("$any_string", ""))
        self.assertIsNotNone(self.m("$any_string", None))
        self.assertIsNotNone(self.m({"a": "$any"}, {}))
        self.assertIsNone(self.m("$contains:LIMIT", "limit: must be"))
        self.assertIsNotNone(self.m("$contains:limit", "offset: bad"))
        self.assertIsNone(self.m("$days:1", 1000 + DAY_MS))

    def test_saved_values(self):
        v = Variables(0)
        self.assertIsNone(match({"id": "$save:id"}, {"id": 7}, v))
        self.assertIsNone(match({"id": "$id"}, {"id": 7}, v))
        self.assertIsNotNone(match({"id": "$id"}, {"id": 8}, v))
        self.assertEqual(v.substitute({"x": "$id", "y": "${id}", "z": "a${days:0}"}),
                         {"x": 7, "y": "7", "z": "a0"})


if __name__ == "__main__":
    mcp_client.run_tests()
