#!/usr/bin/env bash
# bench-bars.sh [REQUESTS] [RUNS] - the two floors of docs/performance.md in
# one run, each ratio beside its bar (2; the layer's aim 1.2):
#   the layer   instructions inside its hooks per request against
#               bench/probe.c's (ApacheBench -c 1 on loopback, keep-alive
#               and a new connection per request; callgrind):
#               scripts/bench-floor.sh with HOOKS_ONLY=1;
#   the slicer  wall time against SQLite copying the same rows into the same
#               schema, on real spools made by the layer (ab -k, wrk,
#               Chromium, as installed): scripts/bench-slicer.sh REQUESTS
#               RUNS (min over min, and user CPU).
# Beside the layer's rows, for reference (no bar): bench/lean.c, the sketch
# of the other design (one event per call, the exchanges built later; the
# layer's duties on ab's calls), against the probe, and the layer against
# it: what the layer costs over that sketch.
# Each part prints its own table as it goes; a summary follows. Takes 10-20
# minutes (callgrind). Defaults: 200000 requests, 3 runs. The build
# directory is ./build, or $OBSERVE_BUILD. Exit status 0 whether or not a
# bar is met: it is a benchmark, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-200000}
RUNS=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== the layer against the probe"
gcc -O2 -shared -fPIC -o "$tmp/lean.so" bench/lean.c -ldl
BEFORE=$tmp/lean.so HOOKS_ONLY=1 scripts/bench-floor.sh 1000 3000 | tee "$tmp/floor"
echo
echo "== the slicer against the SQLite floor"
scripts/bench-slicer.sh "$REQUESTS" "$RUNS" | tee "$tmp/slicer"
echo
echo "== the bars ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r))"
printf '%-56s %12s %12s %7s %4s  %s\n' what measured floor ratio bar met
# 1b's rows: MODE PROBE LAYER RATIO
awk '($1 == "keep-alive" || $1 == "new-connection") && NF >= 4 && $2 ~ /^[0-9.]+$/ {
    printf "%-56s %12s %12s %7.2f %4s  %s\n", "layer, " $1 ", instructions in the hooks/request",
      $3, $2, $4, 2, ($4 <= 2 ? "met" : "NOT met")
    if (NF >= 6) {
      printf "%-56s %12s %12s %7.2f %4s  %s\n", "  sketch (bench/lean.c), " $1, $5, $2, $6, "-",
        "for reference: no bar"
      printf "%-56s %12s %12s %7.2f %4s  %s\n", "  layer against the sketch, " $1, $3, $5, $3 / $5, "-",
        "what this design costs over that one"
    }
  }' "$tmp/floor"
# bench-slicer's rows: spool n slicer-ms user RSS floor-ms user ratio cpu again share
awk 'NF >= 11 && $8 ~ /x$/ && $2 ~ /^[0-9]+$/ {
    r = $8; sub(/x$/, "", r); c = $9; sub(/x$/, "", c)
    split($3, s, "-"); split($6, f, "-")
    printf "%-56s %12s %12s %7.2f %4s  %s (user CPU %.2fx)\n",
      "slicer, " $1 " spool, " $2 " exchanges, ms", s[1], f[1], r, 2,
      (r <= 2 ? "met" : "NOT met"), c
  }' "$tmp/slicer"
