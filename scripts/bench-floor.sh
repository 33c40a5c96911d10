#!/usr/bin/env bash
# (bench/probe.c is the floor, kept here so the benchmark stands alone.)
# bench-floor.sh - the layer against the floor, side by side in one run:
#
# 1. Per request: user-space instructions that libobserve.so adds, next to
#    what bench/probe.c adds (the least a crash-safe timing layer can do:
#    interpose the calls, read the clock around each, write one 64-byte
#    record per exchange into a shared file mapping). ApacheBench -c 1
#    against nginx serving a 100-byte file on loopback, with keep-alive and
#    with a new connection per request; callgrind counts instructions
#    (deterministic but for ab's own timing-dependent paths: a receive that
#    finds nothing yet, a poll more or less). Two ways to count, both
#    printed:
#      run       (ir(preload, N) - ir(bare, N)) / N with N = 5000 keep-alive,
#                2000 new-connection requests: the floor's own method
#                (start-up included);
#      marginal  ((ir(N2) - ir(N1)) with the preload - the same bare)
#                / (N2 - N1): start-up cancels.
#    The ratio is layer/probe of the added instructions (the bar: at most 2;
#    the aim 1.2).
# 2. Per intercepted call (tests/tools/callbench on a loopback TCP pair,
#    64 B): the nanoseconds the libc path adds over direct system calls in
#    the same run (median, min-max over RUNS runs) and the instructions it
#    adds (callgrind, two lengths), for the probe and the layer; "send" is
#    one tracked send per iteration (no new exchange), "pingpong" two
#    tracked calls and one exchange record per iteration.
# 3. Where the layer's instructions go: callgrind's self count per
#    function of the layer, per keep-alive request (with PROFILE=1).
#
# usage: scripts/bench-floor.sh [N1 N2 [RUNS]]   (defaults 1000 3000 5)
# BEFORE=/path/to/other/libobserve.so adds that build's figures beside
# (e.g. the layer of an earlier commit: before and after in one run; or
# bench/lean.c built as lean.so, a sketch of one event per call that
# reads no HTTP framing).
# HOOKS_ONLY=1 prints 1b alone (what scripts/bench-bars.sh reads).
set -euo pipefail
cd "$(dirname "$0")/.."
N1=${1:-1000}
N2=${2:-3000}
RUNS=${3:-5}
BENCH_NO_DEPS=1
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
need_cmd valgrind
need_cmd ab
gcc -O2 -shared -fPIC -o "$WORK/probe.so" bench/probe.c -ldl
make_site "$WORK/site"
nginx_start "$WORK/site" floor-nginx
URL=$NGINX_URL/100b
CALLBENCH=$BUILD/bin/callbench
mkdir -p "$WORK/spool" "$WORK/probe"
chmod 700 "$WORK/spool" "$WORK/probe"

# run_with PRELOAD CMD...: CMD with PRELOAD ("" = bare) and its directory
run_with() {
  local pre=$1 dir=$WORK/spool
  shift
  [ "$pre" = "$WORK/probe.so" ] && dir=$WORK/probe
  env ${pre:+LD_PRELOAD=$pre} OBSERVE_DIR="$dir" "$@"
}
# hook_ir CALLGRIND_FILE OBJECT: the instructions spent inside OBJECT's
# hooks: every call into OBJECT, inclusive, less the real calls its hooks
# make (scripts/hook-ir.py reads callgrind's file itself). Unlike the whole
# program's count it does not move with ab's timing-dependent paths.
hook_ir() {
  python3 "$REPO/scripts/hook-ir.py" "$1" "$2"
}
# ir PRELOAD N [ab options]: "total hooks": user instructions of one ab
# run, and those inside the preload's hooks (0 bare)
ir() {
  local pre=$1 n=$2 total
  shift 2
  total=$(run_with "$pre" valgrind --tool=callgrind --callgrind-out-file="$WORK/ir.cg" \
    ab -q -c 1 -n "$n" "$@" "$URL" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
  echo "$total $([ -n "$pre" ] && hook_ir "$WORK/ir.cg" "$(basename "$pre")" || echo 0)"
}
# per_request PRELOAD [ab options]: "total hooks" per request, N1..N2
per_request() {
  local a ah b bh
  read -r a ah < <(ir "$1" "$N1" "${@:2}")
  read -r b bh < <(ir "$1" "$N2" "${@:2}")
  awk -v a="$a" -v b="$b" -v ah="$ah" -v bh="$bh" -v n=$((N2 - N1)) \
    'BEGIN { printf "%.1f %.1f\n", (b - a) / n, (bh - ah) / n }'
}
# median_minmax: numbers on stdin -> "median min max"
median_minmax() {
  sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
          printf "%.1f %.1f %.1f\n", m, a[1], a[NR] }'
}

echo "layer vs floor: ab -c 1 $URL ($(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ))"
echo
if [ "${HOOKS_ONLY:-0}" != 1 ]; then
  echo "1. user instructions per request (callgrind)"
  printf '%-34s %9s %9s %9s %8s %8s %7s' mode bare probe layer "+probe" "+layer" ratio
  [ -n "${BEFORE:-}" ] && printf ' %8s %7s' "+before" ratio
  echo
fi
row() { # LABEL BARE PROBE LAYER [BEFORE] (instructions per request)
  awk -v m="$1" -v b="$2" -v p="$3" -v l="$4" -v o="${5:-}" 'BEGIN {
    printf "%-34s %9.1f %9.1f %9.1f %8.1f %8.1f %7.2f", m, b, p, l, p - b, l - b,
      (p - b > 0) ? (l - b) / (p - b) : 0
    if (o != "") printf " %8.1f %7.2f", o - b, (p - b > 0) ? (o - b) / (p - b) : 0
    printf "\n" }'
}
per_n() { awk -v x="$1" -v n="$2" 'BEGIN { print x / n }'; }
: > "$WORK/hooks"
for mode in keep-alive new-connection; do
  opts=() n=2000
  [ "$mode" = keep-alive ] && opts=(-k) n=5000
  if [ "${HOOKS_ONLY:-0}" = 1 ]; then
    read -r _ ph < <(per_request "$WORK/probe.so" "${opts[@]}")
    read -r _ lh < <(per_request "$LIBOBSERVE" "${opts[@]}")
    oh=""
    [ -n "${BEFORE:-}" ] && read -r _ oh < <(per_request "$BEFORE" "${opts[@]}")
    echo "$mode $ph $lh $oh" >> "$WORK/hooks"
    continue
  fi
  read -r b _ < <(ir "" "$n" "${opts[@]}")
  read -r p _ < <(ir "$WORK/probe.so" "$n" "${opts[@]}")
  read -r l _ < <(ir "$LIBOBSERVE" "$n" "${opts[@]}")
  o=""
  [ -n "${BEFORE:-}" ] && o=$(per_n "$(ir "$BEFORE" "$n" "${opts[@]}" | cut -d' ' -f1)" "$n")
  row "$mode, run of $n" "$(per_n "$b" "$n")" "$(per_n "$p" "$n")" "$(per_n "$l" "$n")" "$o"
  read -r b _ < <(per_request "" "${opts[@]}")
  read -r p ph < <(per_request "$WORK/probe.so" "${opts[@]}")
  read -r l lh < <(per_request "$LIBOBSERVE" "${opts[@]}")
  o="" oh=""
  [ -n "${BEFORE:-}" ] && read -r o oh < <(per_request "$BEFORE" "${opts[@]}")
  row "$mode, marginal $N1..$N2" "$b" "$p" "$l" "$o"
  echo "$mode $ph $lh $oh" >> "$WORK/hooks"
done
if [ "${HOOKS_ONLY:-0}" != 1 ]; then
  echo "(ratio = added / +probe; the bar is 2, the aim 1.2)"
  echo
fi
echo "1b. instructions inside the hooks per request, marginal $N1..$N2 (callgrind;"
echo "    deterministic: ab's own timing-dependent paths do not count)"
printf '%-34s %9s %9s %7s' mode probe layer ratio
[ -n "${BEFORE:-}" ] && printf ' %9s %7s' before ratio
echo
while read -r mode ph lh oh; do
  awk -v m="$mode" -v p="$ph" -v l="$lh" -v o="${oh:-}" 'BEGIN {
    printf "%-34s %9.1f %9.1f %7.2f", m, p, l, l / p
    if (o != "") printf " %9.1f %7.2f", o, o / p
    printf "\n" }'
done < "$WORK/hooks"

# cg PRELOAD MODE BLOCKS: user instructions of one callbench run (the
# difference of two lengths cancels start-up)
cg() {
  run_with "$1" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$CALLBENCH" "$2" "$3" 1000 2>&1 >/dev/null | awk '/Collected/ {print $4}'
}
if [ -x "$CALLBENCH" ] && [ "${HOOKS_ONLY:-0}" != 1 ]; then
  echo
  echo "2. per intercepted call (callbench, loopback TCP, 64 B; ns: median (min-max) of $RUNS runs)"
  printf '%-12s %-7s %22s %14s\n' mode preload "ns added per call" "instr per call"
  for mode in send pingpong; do
    calls=1
    [ "$mode" = pingpong ] && calls=2
    bare_ir=$(( $(cg "" "$mode" 15) - $(cg "" "$mode" 5) ))
    for pre in probe layer ${BEFORE:+before}; do
      so=$WORK/probe.so
      [ "$pre" = layer ] && so=$LIBOBSERVE
      [ "$pre" = before ] && so=$BEFORE
      read -r nm nmin nmax < <(for ((i = 0; i < RUNS; i++)); do
        run_with "$so" "$CALLBENCH" "$mode" 101 500 | cut -d' ' -f3
      done | awk -v k="$calls" '{ print $1 / k }' | median_minmax)
      ins=$(awk -v o="$(( $(cg "$so" "$mode" 15) - $(cg "$so" "$mode" 5) ))" -v b="$bare_ir" -v k="$calls" \
        'BEGIN { printf "%.0f", (o - b) / (10 * 1000 * k) }')
      printf '%-12s %-7s %22s %14s\n' "$mode" "$pre" "$nm ($nmin-$nmax)" "+$ins"
    done
  done
  printf '%-20s %s ns\n' "clock_gettime" "$("$CALLBENCH" clock 101 10000)"
fi

if [ "${PROFILE:-0}" = 1 ]; then
  echo
  echo "3. where the layer's instructions go: self instructions per keep-alive request"
  echo "   (callgrind, by source file and the function its code runs in: code"
  echo "   inlined from exchange.c into write_slow is exchange.c:write_slow;"
  echo "   ab -k -n $N1, start-up included)"
  run_with "$LIBOBSERVE" valgrind --tool=callgrind --callgrind-out-file="$WORK/prof.cg" \
    ab -q -c 1 -n "$N1" -k "$URL" >/dev/null 2>&1
  callgrind_annotate --auto=no --threshold=100 --inclusive=no "$WORK/prof.cg" 2>/dev/null | tr -d , |
    awk -v n="$N1" '$1 ~ /^[0-9]+$/ && /libobserve\/[a-z_0-9]*\.[ch]:[^ ]*|clock_gettime/ && $1 / n >= 0.5 {
      if (match($0, /libobserve\/[a-z_0-9]*\.[ch]:[^ ]*/))
        name = substr($0, RSTART + 11, RLENGTH - 11)
      else
        name = "libc clock_gettime"
      printf "  %-40s %8.1f\n", name, $1 / n }'
fi
