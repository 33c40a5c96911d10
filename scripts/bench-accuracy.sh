#!/usr/bin/env bash
# bench-accuracy.sh - the accuracy figures against their tight bars.
#
# The accuracy tests (tests/accuracy/, CTest accuracy.*) assert what must
# hold on any machine, however loaded: bytes, order, containment, medians.
# The tails - p99 of |error| against packets within 100 us, every curl
# difference within [-5 us, 1 ms], a relay late by at most 1 ms at the 99th
# percentile, known delays within [-0.1, +1.5] ms - measure the machine as
# much as the layer. Each test prints them as "bar:" lines, never fails on
# them; this script runs the tests RUNS times each and gathers those lines:
# per bar, the figure of every run and how many runs met it. Run it on a
# quiet machine (docs/accuracy.md has the figures and how they were made).
#
# usage: scripts/bench-accuracy.sh [-n RUNS] [-o DIR] [TEST...]
#   TEST     packets, clocks, delays, netsim (default: all four)
#   -n RUNS  runs of each test (default 3)
#   -o DIR   each run's output and summary.txt (default ./bench-out/accuracy)
# The build directory is ./build, or $OBSERVE_BUILD (not built here).
# Exit 0 when every run of every test passed and met every bar; 1 when a
# bar was missed; 2 when a test failed (its output names why); 77 when a
# test was skipped (a tool is missing).
set -euo pipefail
usage() { sed -n 's/^# usage: /usage: /p; s/^#   \([-A-Z].*\)/  \1/p' "$0"; }
RUNS=3
OUT=./bench-out/accuracy
while [ $# -gt 0 ]; do
  case $1 in
    -n) [ $# -ge 2 ] || { usage >&2; exit 2; }; RUNS=$2; shift ;;
    -o) [ $# -ge 2 ] || { usage >&2; exit 2; }; OUT=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
case $RUNS in '' | *[!0-9]* | 0) usage >&2; exit 2 ;; esac
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(packets clocks delays netsim)
REPO=$(cd "$(dirname "$0")/.." && pwd)
export OBSERVE_BUILD=${OBSERVE_BUILD:-$REPO/build}
PYTHON=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
for t in "${TESTS[@]}"; do
  [ -f "$REPO/tests/accuracy/$t.sh" ] || { echo "bench-accuracy: no test $t" >&2; usage >&2; exit 2; }
done
[ -x "$OBSERVE_BUILD/bin/observe" ] ||
  { echo "bench-accuracy: no $OBSERVE_BUILD/bin/observe: build first, or set OBSERVE_BUILD" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

echo "accuracy benchmark: ${TESTS[*]}, $RUNS runs each; $(nproc) CPUs," \
  "$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
failed=0 skipped=0 missed_any=0
for t in "${TESTS[@]}"; do
  for ((r = 1; r <= RUNS; r++)); do
    log=$OUT/$t.$r.log
    start=$SECONDS rc=0
    bash "$REPO/tests/accuracy/$t.sh" > "$log" 2>&1 || rc=$?
    missed=$(grep -c '^bar: .*: MISSED$' "$log" || true)
    bars=$(grep -c '^bar: ' "$log" || true)
    printf '  %-8s run %d: %s, %d of %d bars met (%d s)\n' "$t" "$r" \
      "$(case $rc in 0) echo passed ;; 77) echo skipped ;; *) echo "FAILED (status $rc)" ;; esac)" \
      $((bars - missed)) "$bars" $((SECONDS - start))
    [ "$missed" = 0 ] || missed_any=1
    case $rc in
      0) ;;
      77) skipped=1 ;;
      *) failed=1; tail -n 5 "$log" | sed 's/^/      /' ;;
    esac
  done
done

# the summary: one row per bar, the figure of each run, runs that met it
"$PYTHON" - "$OUT" "$RUNS" "${TESTS[@]}" > "$OUT/summary.txt" <<'PY' || true
import collections, sys
out, runs, tests = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for test in tests:
    rows = collections.OrderedDict()
    for r in range(1, runs + 1):
        try:
            lines = open(f"{out}/{test}.{r}.log").read().splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.startswith("bar: "):
                continue
            body, verdict = line[len("bar: "):].rsplit(": ", 1)
            _, what, rest = body.split(": ", 2)
            figure, rule = rest.rsplit("; bar ", 1)
            row = rows.setdefault((what, rule), [None] * runs)
            row[r - 1] = (figure, verdict == "met")
    print(f"== {test}")
    for (what, rule), cells in rows.items():
        met = sum(1 for c in cells if c and c[1])
        seen = sum(1 for c in cells if c)
        figures = " | ".join(c[0] + ("" if c[1] else " (MISSED)") if c else "-" for c in cells)
        print(f"  {what} [bar {rule}]: met in {met} of {seen}: {figures}")
PY
echo
cat "$OUT/summary.txt"
echo
echo "every run's output: $OUT/TEST.RUN.log; this summary: $OUT/summary.txt"
[ "$failed" = 0 ] || exit 2
[ "$skipped" = 0 ] || exit 77
exit "$missed_any"
