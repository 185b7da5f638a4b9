"""Tests of benchmark/nodes/targets.py against fake reports (no harness run)."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

import fake_report

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TARGETS = os.path.join(ROOT, "benchmark", "nodes", "targets.py")

RUN = {
    "commit": "test", "date": "2026-12-07T00:00:00Z", "store": "postgresql",
    "profile": "perseus", "size": 100000, "nodes": 2, "clients": 4,
    "writes": {"rate_per_s": 1150.0},
    "recall_after_load": {"fts5": {"p99_ms": 8.0}, "dense": {"p99_ms": 5.0},
                          "hybrid": {"p99_ms": 10.0}},
    "recall": {"fts5": {"p99_ms": 6.0}, "dense": {"p99_ms": 4.0}, "hybrid": {"p99_ms": 9.0}},
    "visibility": {"p99_ms": 262.0},
}


def run_with(**changes):
    """RUN with `changes` ("recall_after_load.fts5.p99_ms": 11.2) made."""
    return fake_report.changed(RUN, changes)


class NodesTargetsTest(unittest.TestCase):
    def check(self, runs):
        paths = []
        for run in runs:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(run, f)
            paths.append(f.name)
            self.addCleanup(os.remove, f.name)
        return subprocess.run([sys.executable, TARGETS] + paths, capture_output=True, text=True,
                              timeout=60)

    def test_every_target_met(self):
        result = self.check([RUN, RUN, RUN])
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("every target met", result.stdout)

    def test_one_run_missing_a_target_is_shown_but_the_median_holds(self):
        slow = run_with(**{"recall_after_load.fts5.p99_ms": 11.2})
        result = self.check([RUN, slow, RUN])
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertRegex(result.stdout, r"fts5 p99 after the load.*median 8 .*runs: 8, 11.2, 8")

    def test_a_median_past_its_target_fails(self):
        slow = run_with(**{"recall_after_load.hybrid.p99_ms": 18.5})
        result = self.check([RUN, slow, slow])
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertRegex(result.stdout, r"hybrid p99 after the load.*median 18.5.*MISSED")

    def test_a_write_rate_below_its_minimum_fails(self):
        few = run_with(**{"writes.rate_per_s": 990.0})
        result = self.check([few, few, RUN])
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("missed: writes a second", result.stdout)

    def test_a_missing_metric_fails(self):
        partial = copy.deepcopy(RUN)
        del partial["visibility"]
        result = self.check([RUN, partial, RUN])
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("not in every report", result.stdout)

    def test_another_setup_is_refused(self):
        result = self.check([RUN, run_with(store="sqlite"), RUN])
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn("the targets are for", result.stdout)

    def test_fewer_than_three_runs_are_refused(self):
        result = self.check([RUN, RUN])
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn("at least three runs", result.stdout)


if __name__ == "__main__":
    unittest.main()
