#!/usr/bin/env bash
# (bench/probe.c is the floor, kept here so the benchmark stands alone.)
# bench-floor.sh - the layer against the floor: user-space instructions
# that libobserve.so adds per request, next to what bench/probe.c adds (the
# least a crash-safe timing layer can do: interpose the calls, read the
# clock around each, write one 64-byte record per exchange into a shared
# file mapping). ApacheBench -c 1 against nginx serving a 100-byte file
# on loopback, with keep-alive and with a new connection per request;
# callgrind counts instructions (deterministic, whatever else the machine
# does). Each mode is run at two lengths, so that start-up cancels:
#   added per request = (ir(N2) - ir(N1)) with the layer
#                     - (ir(N2) - ir(N1)) bare,  over N2 - N1 requests
# usage: scripts/bench-floor.sh [N1 N2]   (defaults 1000 3000)
# Prints one row per mode: bare, probe and layer instructions per request,
# what each adds, and the ratio layer/probe (the bar: at most 2).
set -euo pipefail
cd "$(dirname "$0")/.."
N1=${1:-1000}
N2=${2:-3000}
build=${OBSERVE_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null
export OBSERVE_BUILD=$build
# shellcheck source=tests/lib/common.sh
source tests/lib/common.sh
# shellcheck source=tests/lib/nginx.sh
source tests/lib/nginx.sh
need_cmd valgrind
need_cmd ab
gcc -O2 -shared -fPIC -o "$WORK/probe.so" bench/probe.c -ldl
make_site "$WORK/site"
nginx_start "$WORK/site" floor-nginx
URL=$NGINX_URL/100b
mkdir -p "$WORK/spool" "$WORK/probe"
chmod 700 "$WORK/spool" "$WORK/probe"

# ir PRELOAD N [ab options]: user instructions of one ab run
ir() {
  local pre=$1 n=$2
  shift 2
  env ${pre:+LD_PRELOAD=$pre} OBSERVE_DIR="$WORK/$( [ "$pre" = "$WORK/probe.so" ] && echo probe || echo spool)" \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    ab -q -c 1 -n "$n" "$@" "$URL" 2>&1 >/dev/null | awk '/Collected/ {print $4}'
}
per_request() { # PRELOAD [ab options]
  local a b
  a=$(ir "$1" "$N1" "${@:2}")
  b=$(ir "$1" "$N2" "${@:2}")
  awk -v a="$a" -v b="$b" -v n=$((N2 - N1)) 'BEGIN { printf "%.1f", (b - a) / n }'
}
# Two ways to count, both printed:
#  - "run": (ir(lib, N) - ir(bare, N)) / N with N = 5000 keep-alive, 2000
#    new-connection requests: the floor's own method; start-up included.
#  - "marginal": the difference of two lengths, start-up cancelled.
printf '%-26s %10s %10s %10s %10s %10s %8s\n' mode bare probe layer "+probe" "+layer" ratio
row() { # LABEL BARE PROBE LAYER (instructions per request)
  awk -v m="$1" -v b="$2" -v p="$3" -v l="$4" 'BEGIN {
    printf "%-26s %10.1f %10.1f %10.1f %10.1f %10.1f %8.2f\n", m, b, p, l, p - b, l - b,
      (p - b > 0) ? (l - b) / (p - b) : 0 }'
}
for mode in keep-alive new-connection; do
  opts=() n=2000
  [ "$mode" = keep-alive ] && opts=(-k) n=5000
  b=$(ir "" "$n" "${opts[@]}") p=$(ir "$WORK/probe.so" "$n" "${opts[@]}")
  l=$(ir "$LIBOBSERVE" "$n" "${opts[@]}")
  row "$mode, run of $n" "$(awk -v x="$b" -v n="$n" 'BEGIN{print x/n}')" \
    "$(awk -v x="$p" -v n="$n" 'BEGIN{print x/n}')" "$(awk -v x="$l" -v n="$n" 'BEGIN{print x/n}')"
  row "$mode, marginal" "$(per_request "" "${opts[@]}")" \
    "$(per_request "$WORK/probe.so" "${opts[@]}")" "$(per_request "$LIBOBSERVE" "${opts[@]}")"
done
