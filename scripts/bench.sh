#!/usr/bin/env bash
# bench.sh - the layer's overhead: observed (libobserve.so preloaded) vs bare,
# side by side in one run, as issue 2 asks.
#
# 1. ApacheBench -c 1 on a 100-byte file from a local nginx over loopback,
#    with and without keep-alive (the harshest case: system calls dominate):
#    a. instructions of the ab process, user + kernel (perf stat
#       instructions:u,instructions:k), median of 3 runs each; where perf has
#       no hardware counters (most VMs) this line says so, and
#       b. user-space instructions from valgrind --tool=callgrind (exact,
#          kernel not counted) stand in; always printed;
#    c. CPU time (perf task-clock, user + kernel) and system calls (perf
#       raw_syscalls tracepoint), median of 3, when perf can count them;
#    d. wall time: median and min-max of PAIRS alternating bare/observed
#       pairs, and the median of the per-pair ratios;
#    e. for context, strace -f and ltrace wall time (fewer requests: ltrace
#       is slow), when installed.
# 2. Per intercepted call (tests/tools/callbench, loopback TCP pair, 64-byte
#    send/recv; and an AF_UNIX pair, the untracked fast path): ns added per call, measured inside one run against the same
#    system calls made directly (see callbench.c), and instructions
#    added per call (callgrind); the cost of one clock_gettime; and per
#    TLS call (tests/tools/tlsbench: OpenSSL on a loopback pair): the
#    instructions the TLS hooks add (callgrind).
# 3. Max RSS of ab (median of 3), bare vs observed.
#
# usage: scripts/bench.sh [REQUESTS] [PAIRS]     (defaults 5000 and 11)
# The build directory is ./build, or $OBSERVE_BUILD. Takes 1-3 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-5000}
PAIRS=${2:-11}
CONTEXT_REQUESTS=$((REQUESTS < 1000 ? REQUESTS : 1000))
scripts/deps.sh
build=${OBSERVE_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
export OBSERVE_BUILD=$build
# shellcheck source=tests/lib/common.sh
source tests/lib/common.sh
# shellcheck source=tests/lib/nginx.sh
source tests/lib/nginx.sh
make_site "$WORK/site"
nginx_start "$WORK/site" bench-nginx
URL=$NGINX_URL/100b
CALLBENCH=$BUILD/bin/callbench
[ -x "$CALLBENCH" ] || die "no $CALLBENCH (built with the tests: BUILD_TESTING)"

bare=(env)
observed=(env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/spool")

# median_minmax: numbers on stdin -> "median min max"
median_minmax() {
  sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
          printf "%s %s %s\n", m, a[1], a[NR] }'
}
median() { median_minmax | cut -d' ' -f1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "-" }'; }
now_ns() { date +%s%N; }
ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
row() { printf '%-44s %15s %15s %12s  %s\n' "$@"; }

# perf: which events can it count here?
perf_hw=0 perf_sw=0
if command -v perf >/dev/null 2>&1; then
  out=$(perf stat -x, -e instructions:u,instructions:k -- true 2>&1 >/dev/null || true)
  grep -q 'not supported\|not counted\|rror' <<<"$out" || perf_hw=1
  out=$(perf stat -x, -e task-clock,raw_syscalls:sys_enter -- true 2>&1 >/dev/null || true)
  grep -q 'not supported\|not counted\|rror\|nvalid' <<<"$out" || perf_sw=1
fi

# perf_median MODE EVENTS SUM_PATTERN: median over 3 runs of ab of the sum of
# the counters whose event name matches SUM_PATTERN
perf_median() {
  local -n pre=$1
  local events=$2 pattern=$3
  for _ in 1 2 3; do
    perf stat -x, -e "$events" -o "$WORK/perf.out" -- \
      "${pre[@]}" ab -q "${kaargs[@]}" -c 1 -n "$REQUESTS" "$URL" >/dev/null 2>&1
    awk -F, -v p="$pattern" '$3 ~ p { s += $1 } END { print s }' "$WORK/perf.out"
  done | median
}

echo "observe overhead: ab -c 1 -n $REQUESTS $URL"
echo "($(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ); ratio = observed / bare)"
echo
row measure bare observed ratio note
for ka in "" "-k"; do
  kaargs=()
  [ -n "$ka" ] && kaargs=("$ka")
  label="ab${ka:+ $ka}"
  # a. instructions, user + kernel
  if [ "$perf_hw" = 1 ]; then
    ib=$(perf_median bare instructions:u,instructions:k instructions)
    io=$(perf_median observed instructions:u,instructions:k instructions)
    row "$label: instructions u+k (perf, median of 3)" "$ib" "$io" "$(ratio "$io" "$ib")" "target <= 1.03"
  else
    row "$label: instructions u+k (perf)" "n/a" "n/a" "" "no hardware counters here"
  fi
  # b. user instructions, exact
  for mode in bare observed; do
    declare -n pre=$mode
    "${pre[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$mode" \
      ab -q "${kaargs[@]}" -c 1 -n "$REQUESTS" "$URL" >/dev/null 2>"$WORK/cg.$mode.log"
    unset -n pre
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/cg.$mode.log" > "$WORK/ins.$mode"
  done
  ib=$(cat "$WORK/ins.bare") io=$(cat "$WORK/ins.observed")
  row "$label: instructions user (callgrind)" "$ib" "$io" "$(ratio "$io" "$ib")" "kernel not counted"
  # c. CPU time and system calls
  if [ "$perf_sw" = 1 ]; then
    cb=$(perf_median bare task-clock task-clock) co=$(perf_median observed task-clock task-clock)
    row "$label: CPU ms u+k (perf task-clock, median 3)" "$cb" "$co" "$(ratio "$co" "$cb")" "noisy"
    sb=$(perf_median bare raw_syscalls:sys_enter sys_enter)
    so=$(perf_median observed raw_syscalls:sys_enter sys_enter)
    row "$label: system calls (perf, median of 3)" "$sb" "$so" "$(ratio "$so" "$sb")" "+$((so - sb))"
  fi
  # d. wall time, alternating pairs
  : > "$WORK/wall.bare"; : > "$WORK/wall.observed"; : > "$WORK/wall.ratio"
  for ((i = 0; i < PAIRS; i++)); do
    t0=$(now_ns); "${bare[@]}" ab -q "${kaargs[@]}" -c 1 -n "$REQUESTS" "$URL" >/dev/null
    t1=$(now_ns); "${observed[@]}" ab -q "${kaargs[@]}" -c 1 -n "$REQUESTS" "$URL" >/dev/null
    t2=$(now_ns)
    echo "$(( (t1 - t0) / 1000 ))" >> "$WORK/wall.bare"
    echo "$(( (t2 - t1) / 1000 ))" >> "$WORK/wall.observed"
    ratio "$(( t2 - t1 ))" "$(( t1 - t0 ))" >> "$WORK/wall.ratio"; echo >> "$WORK/wall.ratio"
  done
  read -r wb wbmin wbmax < <(median_minmax < "$WORK/wall.bare")
  read -r wo womin womax < <(median_minmax < "$WORK/wall.observed")
  read -r wr wrmin wrmax < <(grep . "$WORK/wall.ratio" | median_minmax)
  row "$label: wall ms (median of $PAIRS pairs)" "$(ms "$wb")" "$(ms "$wo")" "$(ratio "$wo" "$wb")" ""
  row "  min-max" "$(ms "$wbmin")-$(ms "$wbmax")" "$(ms "$womin")-$(ms "$womax")" "" ""
  row "  per-pair ratio: median (min-max)" "" "" "$wr" "($wrmin-$wrmax)"
  # e. strace and ltrace for context, at CONTEXT_REQUESTS
  for tracer in strace ltrace; do
    command -v "$tracer" >/dev/null 2>&1 || continue
    for _ in 1 2 3; do
      t0=$(now_ns); ab -q "${kaargs[@]}" -c 1 -n "$CONTEXT_REQUESTS" "$URL" >/dev/null; t1=$(now_ns)
      echo "$(( (t1 - t0) / 1000 ))"
    done | median > "$WORK/ctx.bare"
    t0=$(now_ns)
    "$tracer" -f -o /dev/null ab -q "${kaargs[@]}" -c 1 -n "$CONTEXT_REQUESTS" "$URL" >/dev/null 2>&1 || true
    t1=$(now_ns)
    cb=$(cat "$WORK/ctx.bare") ct=$(( (t1 - t0) / 1000 ))
    row "$label: $tracer -f wall ms (-n $CONTEXT_REQUESTS)" "$(ms "$cb")" "$(ms "$ct")" "$(ratio "$ct" "$cb")" "for context"
  done
done

# 2. per intercepted call
echo
row "per call (loopback TCP, 64 B)" bare observed added "note (columns: libc minus direct system calls, per iteration)"
for mode in send pingpong untracked; do
  calls=1; [ "$mode" = pingpong ] && calls=2
  : > "$WORK/cb.bare"; : > "$WORK/cb.observed"
  for _ in 1 2 3; do
    "${bare[@]}" "$CALLBENCH" "$mode" 101 500 | cut -d' ' -f3 >> "$WORK/cb.bare"
    "${observed[@]}" "$CALLBENCH" "$mode" 101 500 | cut -d' ' -f3 >> "$WORK/cb.observed"
  done
  db=$(median < "$WORK/cb.bare") do=$(median < "$WORK/cb.observed")
  added=$(awk -v o="$do" -v b="$db" -v k="$calls" 'BEGIN { printf "%.0f", (o - b) / k }')
  what="all in one exchange" kind=tracked
  [ "$mode" = pingpong ] && what="a record per exchange"
  [ "$mode" = untracked ] && what="AF_UNIX pair: the fast path" kind=untracked
  row "$mode: ns per $kind call" "$db" "$do" "+$added ns" "aim <= 50; $what"
  # instructions: two callgrind runs of different lengths, so that start-up
  # costs cancel out
  for m in bare observed; do
    declare -n pre=$m
    for blocks in 5 15; do
      "${pre[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/cgc" \
        "$CALLBENCH" "$mode" "$blocks" 1000 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    done | paste -sd' ' > "$WORK/cgc.$m"
    unset -n pre
  done
  read -r b5 b15 < "$WORK/cgc.bare"
  read -r o5 o15 < "$WORK/cgc.observed"
  # (blocks + 1 warm-up) of libc iterations; raw iterations are the same
  # in both runs and cancel out
  per=$(awk -v b="$((b15 - b5))" -v o="$((o15 - o5))" -v k="$calls" \
    'BEGIN { printf "%.0f", (o - b) / (10 * 1000 * k) }')
  row "$mode: instructions added per $kind call" "" "" "+$per" "callgrind; incl. the other end's lookup"
done
clk=$("$CALLBENCH" clock 101 10000)
row "clock_gettime(CLOCK_MONOTONIC) ns" "$clk" "" "" "two per tracked call"

# 2b. per TLS call (tests/tools/tlsbench: OpenSSL on a loopback pair; per
# iteration the tracked end's SSL_write and SSL_read, the other end's
# SSL_read and SSL_write, one exchange). Instructions by callgrind, two run
# lengths so that start-up cancels: all the layer adds per iteration, and
# the TLS hooks' own part (their inclusive cost minus libssl's functions
# they call, which include the socket hooks).
TLSBENCH=$BUILD/bin/tlsbench
if [ -x "$TLSBENCH" ]; then
  # tls_cg MODE N: "total hooks real" instructions of one callgrind run
  tls_cg() {
    local -n pre=$1
    "${pre[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/cgt" \
      "$TLSBENCH" "$2" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tr '\n' ' '
    # the TLS hooks' own part (scripts/hook-ir.py: their inclusive cost less
    # libssl's real calls, which hold the socket hooks); 0 bare
    if [ "$1" = observed ]; then
      printf '%d 0\n' "$(python3 scripts/hook-ir.py "$WORK/cgt" libobserve 'SSL_(write|read)')"
    else
      echo "0 0"
    fi
  }
  read -r bt1 _ _ < <(tls_cg bare 1000)
  read -r bt3 _ _ < <(tls_cg bare 3000)
  read -r ot1 oh1 or1 < <(tls_cg observed 1000)
  read -r ot3 oh3 or3 < <(tls_cg observed 3000)
  added=$(awk -v b="$((bt3 - bt1))" -v o="$((ot3 - ot1))" 'BEGIN { printf "%.0f", (o - b) / 2000 }')
  hooks=$(awk -v h="$((oh3 - oh1))" -v r="$((or3 - or1))" 'BEGIN { printf "%.0f", (h - r) / 2000 }')
  row "TLS (OpenSSL): instructions per iteration" "$(( (bt3 - bt1) / 2000 ))" "$(( (ot3 - ot1) / 2000 ))" "+$added" "2 tracked + 2 untracked SSL calls, 2 socket calls, 1 exchange"
  row "  of which the TLS hooks themselves" "" "" "+$hooks" "the rest: the socket hooks inside"
fi

# 3. RSS
for m in bare observed; do
  declare -n pre=$m
  for _ in 1 2 3; do
    /usr/bin/time -f %M "${pre[@]}" ab -q -c 1 -n 1000 "$URL" 2>&1 >/dev/null | tail -n 1
  done | median > "$WORK/rss.$m"
  unset -n pre
done
rb=$(cat "$WORK/rss.bare") ro=$(cat "$WORK/rss.observed")
echo
row "max RSS KiB (ab -n 1000, median of 3)" "$rb" "$ro" "+$((ro - rb)) KiB" ""
