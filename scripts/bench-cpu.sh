#!/usr/bin/env bash
# bench-cpu.sh [PAIRS] - what the observed program pays, the bar of the
# layer: ApacheBench's own CPU time (user + sys) under the layer against
# a bare run, one connection at a time, 100 B from nginx on loopback:
#   ab -q -c 1 -k -n 20000   keep-alive          bar 1.03x
#   ab -q -c 1    -n 5000    a connection each   bar 1.05x
# for each capture path: the layer's records (the default) and
# OBSERVE_CAPTURE=events. Runs alternate (bare, records, events, then
# the other way round), PAIRS times (default 11); the median ratio of
# each pair is printed with its min-max, and the wall time's the same;
# then the user CPU time alone (the layer's work is user time; the system
# time of the same calls is most of ab's and most of the noise).
cd "$(dirname "$0")/.." || exit 1
pairs=${1:-11}
source scripts/bench-lib.sh
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT/100b

"$PYTHON" - "$pairs" "$URL" "$LAYER_PRELOAD" "$WORK" <<'PY'
import os, resource, statistics, subprocess, sys, time
pairs, url, layer, work = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
modes = {"bare": {}, "records": {"LD_PRELOAD": layer},
         "events": {"LD_PRELOAD": layer, "OBSERVE_CAPTURE": "events"}}
loads = {"keep-alive": ["-k", "-n", "20000"], "a connection each": ["-n", "5000"]}
bars = {"keep-alive": 1.03, "a connection each": 1.05}

def run(mode, args):
    env = dict(os.environ, OBSERVE_DIR=os.path.join(work, "spool-bench"), **modes[mode])
    os.makedirs(env["OBSERVE_DIR"], mode=0o700, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(["ab", "-q", "-c", "1", *args, url], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for f in os.listdir(env["OBSERVE_DIR"]):  # spools: not the bench's
        os.unlink(os.path.join(env["OBSERVE_DIR"], f))
    user = after.ru_utime - before.ru_utime
    return user + (after.ru_stime - before.ru_stime), wall, user

print(f"{'load':<18} {'capture':<8} {'CPU ratio median (min-max)':<30} {'wall ratio median (min-max)':<30} bar")
for load, args in loads.items():
    run("bare", args)  # warm nginx and the page cache
    ratios = {m: ([], [], []) for m in ("records", "events")}
    for i in range(pairs):
        order = ["bare", "records", "events"] if i % 2 == 0 else ["events", "records", "bare"]
        got = {m: run(m, args) for m in order}
        for m in ("records", "events"):
            ratios[m][0].append(got[m][0] / got["bare"][0])
            ratios[m][1].append(got[m][1] / got["bare"][1])
            ratios[m][2].append(got[m][2] / max(got["bare"][2], 1e-3))
    for m, (cpu, wall, user) in ratios.items():
        med = statistics.median(cpu)
        print(f"{load:<18} {m:<8} {med:6.3f}x ({min(cpu):.3f}-{max(cpu):.3f})"
              f"{'':9} {statistics.median(wall):6.3f}x ({min(wall):.3f}-{max(wall):.3f})"
              f"{'':9} {bars[load]:.2f}x {'met' if med <= bars[load] else 'NOT met'}"
              f"   user {statistics.median(user):.2f}x ({min(user):.2f}-{max(user):.2f})")
PY
