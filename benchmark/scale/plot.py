#!/usr/bin/python3
"""Plots a scale report: recall p99 and write rates against corpus size, as one PNG.

  /usr/bin/python3 benchmark/scale/plot.py report.json perf.png

Needs Debian's python3-matplotlib, which only Debian's /usr/bin/python3 imports (hence the
interpreter line). Without it, says so and exits 2; `tools/perf-table --plot` prints the
same series as Mermaid charts with the standard library alone.
"""
import json
import sys


def series(report, sizes, path):
    """The value at `path` for each size, None where the report has none."""
    out = []
    for size in sizes:
        value = report["sizes"][size]
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        out.append(value)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: matplotlib is not installed (apt install python3-matplotlib, then run this "
              "with /usr/bin/python3); tools/perf-table --plot gives Mermaid charts instead",
              file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        report = json.load(f)
    sizes = sorted(report["sizes"], key=int)
    n = [int(s) for s in sizes]
    fig, (latency, rates) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, path in (("fts5", ("recall", "fts5", "p99_ms")),
                        ("dense", ("recall", "dense", "p99_ms")),
                        ("hybrid", ("recall", "hybrid", "p99_ms")),
                        ("as_of", ("as_of", "p99_ms")),
                        ("temporal", ("temporal_recall", "p99_ms"))):
        latency.plot(n, series(report, sizes, path), marker="o", label=label)
    latency.set(xscale="log", xlabel="memories", ylabel="p99 ms", title="Recall latency (p99)")
    for label, path in (("single remember", ("write", "rate_per_s")),
                        ("remember_batch", ("batch", "rate_per_s")),
                        ("embedding drain", ("embed", "rate_per_s"))):
        rates.plot(n, series(report, sizes, path), marker="o", label=label)
    rates.set(xscale="log", yscale="log", xlabel="memories", ylabel="per second",
              title="Write and embedding rates")
    for ax in (latency, rates):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"strata {report.get('commit', '')}, {report.get('date', '')}, "
                 f"{report.get('machine', {}).get('cores', '?')} cores")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
