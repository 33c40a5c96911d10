#!/usr/bin/env bash
# bench-cpu.sh [PAIRS] - what the observed program pays, the bar of the
# layer: ApacheBench's own CPU time (user + sys) under the layer against
# a bare run, one connection at a time, 100 B from nginx on loopback:
#   ab -q -c 1 -k -n 20000   keep-alive          bar 1.03x
#   ab -q -c 1    -n 5000    a connection each   bar 1.05x
# for each capture path: the layer's records (the default) and
# OBSERVE_CAPTURE=events. Runs alternate (bare, records, events, then
# the other way round), PAIRS times (default 11). Printed for each: the
# median of the pairs' CPU ratios with a 95% confidence interval of that
# median (order statistics), the CPU time the layer adds a request
# (median of the pairs' differences, in microseconds), and the median wall
# ratio.
#
# Two layouts, one after the other:
#   free    ab and nginx placed by the scheduler: the bar's measure. On a
#           2-CPU VM a pair's ratio varies by 5-10% from run to run (which
#           CPU wakes which), so the interval is a few points wide.
#   pinned  ab and nginx's processes on one CPU (taskset): no cross-CPU
#           wake-ups, a bare request costs half as much and a run varies
#           by under 1%; the microseconds added are the precise figure to
#           judge a change to the layer by.
# BENCH_LAYOUTS="free" or "pinned" runs only one of them.
# BENCH_PAGE=50k: the 51,200-byte page instead of the 100-byte one.
# BENCH_EXTRA="NAME=LIBRARY ...": more libraries to compare, each run with
# OBSERVE_CAPTURE=events beside the others (scripts/bench-ablate.sh).
cd "$(dirname "$0")/.." || exit 1
pairs=${1:-11}
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
need_cmd ab
need_cmd taskset
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT/${BENCH_PAGE:-100b}
master=$(cat "$NGINX_DIR/nginx.pid")
NGINX_PIDS="$master $(pgrep -P "$master" | tr '\n' ' ')"

"$PYTHON" - "$pairs" "$URL" "$LAYER_PRELOAD" "$WORK" "$NGINX_PIDS" \
  "${BENCH_LAYOUTS:-free pinned}" "${BENCH_EXTRA:-}" <<'PY'
import math, os, statistics, subprocess, sys, time
pairs, url, layer, work = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
nginx, layouts = sys.argv[5].split(), sys.argv[6].split()
modes = {"bare": {}, "records": {"LD_PRELOAD": layer},
         "events": {"LD_PRELOAD": layer, "OBSERVE_CAPTURE": "events"}}
for extra in sys.argv[7].split():
    name, lib = extra.split("=", 1)
    modes[name] = {"LD_PRELOAD": lib, "OBSERVE_CAPTURE": "events"}
loads = {"keep-alive": ("-k", 20000), "a connection each": (None, 5000)}
bars = {"keep-alive": 1.03, "a connection each": 1.05}
cpu_last = str(os.cpu_count() - 1)


def pin(cpus):
    for pid in nginx:
        subprocess.run(["taskset", "-a", "-p", "-c", cpus, pid], check=True,
                       stdout=subprocess.DEVNULL)


def run(mode, args, prefix):
    env = dict(os.environ, OBSERVE_DIR=os.path.join(work, "spool-bench"), **modes[mode])
    os.makedirs(env["OBSERVE_DIR"], mode=0o700, exist_ok=True)
    t0 = time.monotonic()
    p = subprocess.Popen(prefix + ["ab", "-q", "-c", "1", *args, url], env=env,
                         stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if status != 0:
        sys.exit(f"bench-cpu: ab under {mode} failed (status {status})")
    for f in os.listdir(env["OBSERVE_DIR"]):  # spools: not the bench's
        os.unlink(os.path.join(env["OBSERVE_DIR"], f))
    return ru.ru_utime + ru.ru_stime, wall


def median_ci(xs):
    """The median of xs and a 95% confidence interval for it: the order
    statistics k and n-1-k where the binomial(n, 1/2) tail is under 2.5%."""
    xs, n = sorted(xs), len(xs)
    k, tail = 0, 0.0
    while True:
        tail += math.comb(n, k) / 2 ** n
        if tail > 0.025:
            break
        k += 1
    k = max(k - 1, 0)
    return statistics.median(xs), xs[k], xs[n - 1 - k]


print(f"{'layout':<7} {'load':<18} {'capture':<10} {'CPU ratio (95% CI)':<26} "
      f"{'us added/req':<13} {'wall ratio':<11} bar")
for layout in layouts:
    prefix = ["taskset", "-c", cpu_last] if layout == "pinned" else []
    pin(cpu_last if layout == "pinned" else f"0-{cpu_last}")
    for load, (flag, n) in loads.items():
        args = ([flag] if flag else []) + ["-n", str(n)]
        run("bare", args, prefix)  # warm nginx and the page cache
        got = {m: [] for m in modes}
        for i in range(pairs):
            order = list(modes) if i % 2 == 0 else list(modes)[::-1]
            for m in order:
                got[m].append(run(m, args, prefix))
        for m in list(modes)[1:]:
            cpu = [a[0] / b[0] for a, b in zip(got[m], got["bare"])]
            added = [(a[0] - b[0]) / n * 1e6 for a, b in zip(got[m], got["bare"])]
            wall = [a[1] / b[1] for a, b in zip(got[m], got["bare"])]
            med, lo, hi = median_ci(cpu)
            verdict = "" if layout == "pinned" else (
                "met" if hi <= bars[load] else "NOT met" if lo > bars[load]
                else "unclear")
            print(f"{layout:<7} {load:<18} {m:<10} {med:6.3f}x ({lo:.3f}-{hi:.3f})"
                  f"{'':5} {statistics.median(added):6.2f}{'':7}"
                  f" {statistics.median(wall):6.3f}x{'':4} {bars[load]:.2f}x {verdict}")
pin(f"0-{cpu_last}")
PY
