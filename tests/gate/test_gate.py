"""Tests of benchmark/scale/gate.py against fake reports (no harness run)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import fake_report

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GATE = os.path.join(ROOT, "benchmark", "scale", "gate.py")


def fake_size(**overrides):
    size = {
        "write": {"rate_per_s": 1700.0, "last_over_first": 0.8},
        "batch": {"rate_per_s": 9000.0},
        "recall": {"fts5": {"p99_ms": 2.0}, "dense": None, "hybrid": None},
        "as_of": {"p99_ms": 0.2},
        "temporal_recall": {"p99_ms": 1.1},
        "cold_start_ms": 9.0,
        "db": {"bytes_per_memory": 1700.0},
        "peak_rss_bytes": 30 << 20,
        "dedup": {"candidates_median": 0},
    }
    return fake_report.changed(size, overrides)


class GateTest(unittest.TestCase):
    def run_gate(self, sizes, env_extra=None):
        report = {"commit": "test", "date": "2026-11-29", "sizes": sizes}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(report, f)
            path = f.name
        self.addCleanup(os.remove, path)
        env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_BUDGET_")}
        env.update(env_extra or {})
        return subprocess.run([sys.executable, GATE, "--report", path], capture_output=True,
                              text=True, env=env, timeout=60)

    def test_passes_when_every_metric_is_within_budget(self):
        result = self.run_gate({"10000": fake_size()})
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("every metric within budget", result.stdout)

    def test_fails_when_a_budget_is_set_below_the_measured_value(self):
        result = self.run_gate({"10000": fake_size()}, {"STRATA_BUDGET_FTS5_P99_MS": "1.5"})
        self.assertEqual(result.returncode, 1)
        self.assertIn("FTS5_P99_MS at 10000", result.stdout)
        self.assertRegex(result.stdout, r"FTS5_P99_MS\s+2\.000\s+max 1\.5\s+MISSED")

    def test_fails_when_a_rate_is_below_its_minimum(self):
        result = self.run_gate({"10000": fake_size(**{"write.rate_per_s": 100.0})})
        self.assertEqual(result.returncode, 1)
        self.assertIn("WRITE_RATE_PER_S at 10000", result.stdout)

    def test_a_regression_in_dedup_candidates_fails(self):
        result = self.run_gate({"10000": fake_size(**{"dedup.candidates_median": 9})})
        self.assertEqual(result.returncode, 1)
        self.assertIn("DEDUP_CANDIDATES_MEDIAN", result.stdout)

    def test_each_size_is_checked_against_its_own_budgets(self):
        # 14 ms is within the 100K budget (16 ms) but not the 10K one (12 ms).
        slow = fake_size(**{"recall.fts5.p99_ms": 14.0})
        self.assertEqual(self.run_gate({"100000": slow}).returncode, 0)
        self.assertEqual(self.run_gate({"10000": slow}).returncode, 1)

    def test_a_metric_not_measured_is_reported_not_failed(self):
        size = fake_size()
        size["dedup"] = None
        result = self.run_gate({"10000": size})
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertRegex(result.stdout, r"DEDUP_CANDIDATES_MEDIAN\s+-.*not measured")


if __name__ == "__main__":
    unittest.main()
