#!/usr/bin/env python3
"""Each table has one owning module: the modules that compose reads over others' tables
(recall/, api/) hold no SQL text. Fails naming the file and line of any SQL statement there."""

import pathlib
import re
import sys
import unittest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
# Modules that must go through the owners' interfaces (docs/design.md, the module table).
NO_SQL = ["recall", "api"]
# A statement inside a string literal: a verb at the start of the literal's text.
SQL = re.compile(r'"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WITH)\b', re.I)


def sql_lines(module):
    for path in sorted((SRC / module).glob("*.*")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if SQL.search(line):
                yield f"{path.relative_to(SRC.parent)}:{number}: {line.strip()}"


class TableOwners(unittest.TestCase):
    def test_the_pattern_finds_sql(self):
        self.assertTrue(SQL.search('db.Prepare("SELECT id FROM versions")'))
        self.assertTrue(SQL.search('"  update memories SET x = 1"'))
        self.assertFalse(SQL.search('// Select the best "ranked" ones'))

    def test_modules_without_sql(self):
        for module in NO_SQL:
            with self.subTest(module=module):
                self.assertTrue((SRC / module).is_dir(), module)
                self.assertEqual(list(sql_lines(module)), [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
