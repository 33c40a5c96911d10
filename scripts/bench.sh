#!/usr/bin/env bash
# bench.sh - the layer's overhead, observed vs bare, side by side in one run.
#
#  1. ApacheBench -c 1 on a 100-byte file over loopback, with and without
#     keep-alive (the harshest case: syscalls dominate):
#     a. instructions of the ab process, user + kernel (perf stat), median of
#        3 runs each; where perf cannot count (VMs), user-space instructions
#        from valgrind --tool=callgrind instead (deterministic, kernel not
#        counted);
#     b. wall time: median and min-max of PAIRS alternating pairs;
#     c. strace -f wall time on the same run, for context.
#  2. ns added per intercepted call (tests/tools/callbench: send on a tracked
#     socket), best of 7 runs, and the layer's instructions per call.
#  3. max RSS added per process.
#
# usage: scripts/bench.sh [REQUESTS] [PAIRS]     (defaults 5000 and 11)
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-5000}
PAIRS=${2:-11}
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null
source tests/lib/common.sh
source tests/lib/nginx.sh
make_site "$WORK/site"
nginx_start "$WORK/site" bench-nginx
URL=http://127.0.0.1:$NGINX_PORT/100b
layer=(env LD_PRELOAD="$LIBOBSERVE" OBSERVE_DIR="$WORK/spool")

median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%s %s %s\n", m, a[1], a[NR]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a/b}'; }

perf_ok=0
if command -v perf >/dev/null && perf stat -x, -e instructions:u true 2>&1 >/dev/null | grep -qv 'not supported'; then
  perf_ok=1
fi

echo "observe overhead benchmark: ab -c 1 -n $REQUESTS $URL ($(nproc) cores, $(uname -r))"
printf '%-28s %16s %16s %10s\n' measure bare observed ratio

for ka in "" "-k"; do
  label="ab${ka:+ $ka}"
  # a. instructions
  if [ "$perf_ok" = 1 ]; then
    for mode in bare obs; do
      for _ in 1 2 3; do
        if [ $mode = obs ]; then pre=("${layer[@]}"); else pre=(env); fi
        "${pre[@]}" perf stat -x, -e instructions:u,instructions:k -o "$WORK/perf" \
          ab -q $ka -c 1 -n "$REQUESTS" "$URL" >/dev/null 2>&1
        awk -F, '/instructions/ {s += $1} END {print s}' "$WORK/perf"
      done | median > "$WORK/ins.$mode"
    done
    what="instructions u+k (median)"
  else
    for mode in bare obs; do
      if [ $mode = obs ]; then pre=("${layer[@]}"); else pre=(env); fi
      "${pre[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$mode" \
        ab -q $ka -c 1 -n "$REQUESTS" "$URL" >/dev/null 2>"$WORK/cg.$mode.log"
      awk '/Collected/ {print $4 " " $4 " " $4}' "$WORK/cg.$mode.log" > "$WORK/ins.$mode"
    done
    what="instructions user (callgrind)"
  fi
  read -r ib _ _ < "$WORK/ins.bare"
  read -r io _ _ < "$WORK/ins.obs"
  printf '%-28s %16s %16s %10s\n' "$label: $what" "$ib" "$io" "$(ratio "$io" "$ib")"

  # b. wall time, alternating pairs
  : > "$WORK/wall.bare"; : > "$WORK/wall.obs"; : > "$WORK/wall.ratio"
  for ((i = 0; i < PAIRS; i++)); do
    t0=$(date +%s%N); ab -q $ka -c 1 -n "$REQUESTS" "$URL" >/dev/null; t1=$(date +%s%N)
    "${layer[@]}" ab -q $ka -c 1 -n "$REQUESTS" "$URL" >/dev/null; t2=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 )) >> "$WORK/wall.bare"
    echo $(( (t2 - t1) / 1000 )) >> "$WORK/wall.obs"
    ratio $(( t2 - t1 )) $(( t1 - t0 )) >> "$WORK/wall.ratio"; echo >> "$WORK/wall.ratio"
  done
  read -r wb wbmin wbmax < <(median < "$WORK/wall.bare")
  read -r wo womin womax < <(median < "$WORK/wall.obs")
  read -r wr wrmin wrmax < <(grep . "$WORK/wall.ratio" | median)
  printf '%-28s %16s %16s %10s\n' "$label: wall us (median)" "$wb" "$wo" "$(ratio "$wo" "$wb")"
  printf '%-28s %16s %16s %10s\n' "  min-max" "$wbmin-$wbmax" "$womin-$womax" ""
  printf '%-28s %16s %16s %10s\n' "  pair ratio median, min-max" "" "" "$wr ($wrmin-$wrmax)"

  # c. strace for context
  if command -v strace >/dev/null; then
    t0=$(date +%s%N); strace -f -o /dev/null ab -q $ka -c 1 -n "$REQUESTS" "$URL" >/dev/null; t1=$(date +%s%N)
    printf '%-28s %16s %16s %10s\n' "$label: strace -f wall us" "$wb" "$(( (t1 - t0) / 1000 ))" "$(ratio $(( (t1 - t0) / 1000 )) "$wb")"
  fi
done

# 2. per intercepted call
cb=$BUILD/bin/callbench
for _ in 1 2 3; do "$cb" 100000 7; done | median > "$WORK/cb.bare"
for _ in 1 2 3; do "${layer[@]}" "$cb" 100000 7; done | median > "$WORK/cb.obs"
read -r cbb _ _ < "$WORK/cb.bare"
read -r cbo _ _ < "$WORK/cb.obs"
printf '%-28s %16s %16s %10s\n' "send+recv loop ns/iter" "$cbb" "$cbo" "+$(awk -v a="$cbo" -v b="$cbb" 'BEGIN {printf "%.0f ns", a-b}')"
"${layer[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.cb" "$cb" 20000 1 >/dev/null 2>&1
per=$(callgrind_annotate --inclusive=yes "$WORK/cg.cb" 2>/dev/null |
  awk '/hooks.c:send \[/ {gsub(",", "", $1); print int($1 / 20000)}')
libc=$(valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.cb2" "$cb" 20000 1 2>/dev/null >/dev/null;
  callgrind_annotate --inclusive=yes "$WORK/cg.cb2" 2>/dev/null |
  awk '/libc.so.6\]$/ && /:send \[|send@/ {gsub(",", "", $1); print int($1 / 20000); exit}')
printf '%-28s %16s %16s %10s\n' "instructions per send()" "${libc:-?}" "${per:-?}" "(user space, callgrind)"

# 3. RSS
rb=$(/usr/bin/env time -f %M ab -q -c 1 -n 1000 "$URL" 2>&1 >/dev/null | tail -n 1)
ro=$("${layer[@]}" /usr/bin/env time -f %M ab -q -c 1 -n 1000 "$URL" 2>&1 >/dev/null | tail -n 1)
printf '%-28s %16s %16s %10s\n' "max RSS KiB (ab -n 1000)" "$rb" "$ro" "+$((ro - rb)) KiB"
