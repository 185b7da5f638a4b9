#!/usr/bin/env bash
# Filtered dense search: over-fetch with Debian's hnswlib 0.6.2 against hnswlib 0.8's filter
# functor (bench.cc). HNSWLIB_08 names a folder holding hnswlib 0.8's headers (hnswlib.h,
# hnswalg.h, ...), e.g. the src/hnswlib folder of the hnswlib-node 3.0.0 package; nothing is
# downloaded here. Usage: HNSWLIB_08=DIR benchmark/hnswlib_filter/run.sh [N] [DIM] [EF]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${HNSWLIB_08:?set HNSWLIB_08 to a folder with hnswlib 0.8 headers}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/v08/hnswlib"
cp "$HNSWLIB_08"/*.h "$work/v08/hnswlib/"
flags=(-std=c++17 -O2 -march=native -DNDEBUG -pthread)
g++ "${flags[@]}" "$here/bench.cc" -o "$work/bench_062"
g++ "${flags[@]}" -DSTRATA_FILTER_FUNCTOR -I"$work/v08" "$here/bench.cc" -o "$work/bench_08"
echo "== hnswlib 0.6.2 (Debian), over-fetch then filter"
"$work/bench_062" "$@"
echo "== hnswlib 0.8, filter functor in the walk"
"$work/bench_08" "$@"
