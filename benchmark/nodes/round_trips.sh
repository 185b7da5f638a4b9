#!/usr/bin/env bash
# Round trips to PostgreSQL a write (PERF.md, "Session 31"): runs benchmark/nodes/run.py
# (PostgreSQL, 2 nodes, 4 clients) with SIZE memories, and for 8 s of the load counts, with
# perf's uprobes in every strata-http process, the calls of pg::Connection::Sync (each a
# round trip: a pipeline's sync and the wait for its results), StoreImpl::Remember (a single
# write) and StoreImpl::CommitGroup (a group commit). Needs root and perf; the binary's
# symbols (not stripped).
#
#   benchmark/nodes/round_trips.sh STRATA_DIR [SIZE]
#
# STRATA_DIR holds strata and strata-http, built together. Prints the counts and their
# ratios; the probes are removed at the end.
set -euo pipefail

dir=${1:?usage: benchmark/nodes/round_trips.sh STRATA_DIR [SIZE]}
size=${2:-30000}
root=$(cd "$(dirname "$0")/../.." && pwd)
binary="$dir/strata-http"
tmp=$(mktemp -d)
trap 'perf probe -q -d "probe_strata:*" 2>/dev/null || true; rm -rf "$tmp"' EXIT

probe() {  # probe NAME SYMBOL: a uprobe at SYMBOL's address in $binary.
  local address
  address=$(nm -C "$binary" | grep -F " $2(" | grep ' [Tt] ' | grep -v '\[clone' | head -1 |
            cut -d' ' -f1)
  [ -n "$address" ] || { echo "no symbol $2 in $binary" >&2; exit 1; }
  perf probe -q -x "$binary" -a "$1=0x$address"
}
probe sync 'strata::pg::Connection::Sync'
probe remember 'strata::(anonymous namespace)::StoreImpl::Remember'
probe commitgroup 'strata::(anonymous namespace)::StoreImpl::CommitGroup'

python3 "$root/benchmark/nodes/run.py" --strata "$dir/strata" --store postgresql \
    --size "$size" --queries 10 --visibility-samples 1 --out "$tmp/report.json" \
    2> "$tmp/run.log" &
run=$!
# Into the load: past the nodes' start and the first writes.
sleep 15
perf stat -e 'probe_strata:*' -a -x, -o "$tmp/stat.csv" -- sleep 8
wait "$run"
grep 'writes:' "$tmp/run.log"
python3 - "$tmp/stat.csv" <<'PY'
import sys
counts = {}
for line in open(sys.argv[1]):
    fields = line.strip().split(",")
    if len(fields) > 2 and fields[2].startswith("probe_strata:"):
        counts[fields[2].split(":")[1]] = int(fields[0])
print("syncs %(sync)d, writes %(remember)d, group commits %(commitgroup)d" % counts)
print("round trips a write %.2f, writes a group %.2f"
      % (counts["sync"] / counts["remember"], counts["remember"] / counts["commitgroup"]))
PY
