#!/usr/bin/env bash
# bench-ingest.sh [ROWS] [RUNS] - slicer ingest speed against plain SQLite
# storing the same number of rows, side by side in one run (the slicer must
# reach at least 0.4x). Defaults: 1,000,000 exchanges, best of 3.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target ingestbench >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
build/bin/ingestbench "${1:-1000000}" "${2:-3}" "$dir"
