#!/usr/bin/env bash
# delays.sh - known delays must show up in our numbers (tests/tools/netsim.c,
# docs/netsim.md).
#
# (a) nginx behind the relay, up D1 = 7 ms, down D2 = 13 ms: curl and python
#     (http.client) under the layer, a 100-byte file (one segment); the
#     delay D = D1 + D2 must be in every exchange's Tw (and in Tr for
#     python, whose blocking receive starts right after its request). Te is
#     NOT delayed: the client's handshake is with the relay, which connects
#     to nginx itself.
# (b) a server that waits a known 30 ms before it answers
#     (tests/servers/faults.py delay): D = 30 direct, and D1 + D2 + 30
#     behind the relay.
# (c) ApacheBench (-c 1, no keep-alive) behind the relay with round-trip
#     delays of 20, 100 and 200 ms (half each way): ab's own per-request
#     times from -g (whole ms, rounded to nearest) against ours: ctime vs
#     Te, ttime vs Tt, wait vs Tw; and Tw against the delay.
#
# Asserted, what no load can break:
#  - every exchange: TFB - T3 >= D - 0.05 ms. Nothing is delivered before
#    its delay (the relay holds each chunk for its delay from the moment it
#    read it, and a timer does not fire early), and T3, the entry of the
#    request's first send, comes before the request left. A lower bound on
#    Tw itself would not hold: a client that loses the CPU inside its send,
#    after its data left, returns late, and T4 with it.
#  - the median of Tw (and of python's Tr) within [D - 0.1 ms, 1.5 D]. Above
#    D lie the relay's lateness (about 0.1 ms), the server's own time (0.05
#    ms for a small static file) and the wake-ups of relay, server and
#    client after an idle wait: 0.1-0.3 ms here with real-time priority,
#    even under load. Without it, on a machine with more runnable tasks
#    than CPUs, each wake-up waits for others' time slices: medians went to
#    +5.3 ms, single exchanges to +61 ms. So the bound from above lies
#    halfway to the nearest wrong answer, the delay counted twice (+D; D is
#    at least 20 ms); the delay missing from Tw is the other one, at -D.
#    Below D - 0.1 ms, the median would need T4 late (the client preempted
#    inside its send, after the data left) in more than half the exchanges,
#    with TFB, which waits for a wake-up too, not late by as much.
#  - curl's Tr (curl polls before it reads: its first receive is at the
#    first byte, no wake-up in between) has a median below 1 ms; the median
#    of Te over all connections through the relay is below D / 2 (curl's
#    Te holds its wake-up after poll: up to 17 ms under that load without
#    real-time priority; python's blocking connect returns with the
#    handshake done). A delay counted where it does not belong would be
#    all of D.
#  - ab: as many rows as our exchanges; ctime >= Te - 0.5 ms for every rank
#    (ab reads its clock before the connect and after it, and rounds to
#    the nearest ms: a containment no load breaks); the median of the rank
#    by rank differences ttime - Tt and wait - Tw within 1.5 ms (ab's own
#    work between its clock and its calls, plus 0.5 of rounding; ab reads
#    its end before the close that is our T7, and its wait runs from after
#    the send to after the first read, so no containment there; ab is
#    rarely preempted between a call and its clock read, as it does not
#    sleep there). Tw against the delay as above.
# Printed, not asserted: the benchmark's bars ("bar:" lines, collected by
# scripts/bench-accuracy.sh): no Tw below D - 0.1 ms, at least 95% within
# D + 1.5 ms, the median within [D, D + 0.5]; Te and curl's Tr always below
# 1 ms; ab's times within 1.5 ms of ours, rank by rank.
#
# ab -g writes its rows sorted by ttime (ab sorts its statistics before it
# writes the file: ab.c output_results), so request order is lost; rows and
# our connections are both sorted and matched rank by rank. If ab's time
# contains ours for each request, the k-th smallest of ab's contains the
# k-th smallest of ours too.
#
# Servers, clients and the relay get a real-time priority when permitted
# (ACCURACY_RT=0: not), as in the other accuracy tests: it narrows the
# tails the bars measure; the assertions hold without it.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
need_cmd ab
need_cmd sqlite3
NETSIM=$BUILD/bin/netsim
[ -x "$NETSIM" ] || fail "$NETSIM is missing: build the project first"
D1=7
D2=13
make_site "$WORK/site"
nginx_start "$WORK/site"

PRIO=()
RELAY_PRIO=0
if [ "${ACCURACY_RT:-1}" = 1 ] && command -v chrt > /dev/null && chrt -f 10 true 2> /dev/null; then
  PRIO=(chrt -f 10)
  RELAY_PRIO=20
  master=$(cat "$NGINX_DIR/nginx.pid")
  for pid in "$master" $(pgrep -P "$master"); do chrt -f -p 10 "$pid" > /dev/null; done
  echo "nginx, the fault server and the clients run SCHED_FIFO 10, the relay 20"
else
  echo "servers, clients and the relay run at the ordinary priority (chrt not permitted, or ACCURACY_RT=0)"
fi

# start_fault DELAY_MS: tests/servers/faults.py delay, at the priority
# above; sets FAULT_PORT.
start_fault() {
  local portfile=$WORK/fault.port
  "${PRIO[@]}" "$PYTHON" "$REPO/tests/servers/faults.py" delay "$portfile" \
    --lifetime 600 --delay-ms "$1" &
  at_exit "kill $! 2>/dev/null"
  wait_until 60 test -s "$portfile" || fail "the fault server did not start in 60 s"
  FAULT_PORT=$(cat "$portfile")
}

# start_relay NAME TARGET_PORT ARG...: sets RELAY_PORT, RELAY_PID.
start_relay() {
  local name=$1 target=$2
  shift 2
  "$NETSIM" --target "127.0.0.1:$target" --rt-prio "$RELAY_PRIO" --lifetime 600 \
    --stats "$WORK/$name.stats" "$@" > "$WORK/$name.port" 2> "$WORK/$name.err" &
  RELAY_PID=$!
  at_exit "kill $RELAY_PID 2>/dev/null"
  wait_until 60 test -s "$WORK/$name.port" ||
    fail "netsim did not start in 60 s: $(cat "$WORK/$name.err")"
  RELAY_PORT=$(head -n 1 "$WORK/$name.port")
}

stop_relay() {
  kill -TERM "$RELAY_PID"
  wait "$RELAY_PID" || fail "netsim ($1) exited with status $?"
  sed 's/^/  relay /' "$WORK/$1.stats"
}

# observed DB COMMAND...: run COMMAND under the layer (at the priority
# above), its exchanges into DB.
observed() {
  local db=$1
  shift
  "${PRIO[@]}" "$OBSERVE" -q -o "$db" -- "$@" || fail "observe $*: status $?"
}

# The python client: N requests on one keep-alive connection, then M more
# on a new connection each (http.client).
cat > "$WORK/client.py" <<'PY'
import http.client, sys
port, path, keep, fresh = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# no timeout: a blocking socket, whose recv is called at once (with a
# timeout, Python polls first, like curl)
conn = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(keep):
    conn.request("GET", path)
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read(), "bad response"
conn.close()
for _ in range(fresh):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", path)
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read(), "bad response"
    conn.close()
PY

# check DB PORT PROGRAM-LIKE D BAND_COLUMNS SMALL_COLUMNS WHAT: the
# exchanges with that peer port and program, against the delay D (ms); the
# bounds and their reasons are at the top of this file. BAND columns (tw,
# tr) hold D; SMALL columns (tr) and Te do not. Exit 1 when a bound fails.
cat > "$WORK/check.py" <<'PY'
import math, sqlite3, sys
db, port, program, delay, band, small, what = sys.argv[1:8]
delay = float(delay)
rows = sqlite3.connect(db).execute(
    "SELECT te_ms, tw_ms, tr_ms, seq, (tfb_ns - t3_ns) / 1e6 FROM exchange_metrics "
    "WHERE peer_port = ? AND program LIKE ? ORDER BY t1_ns, seq", (int(port), program)).fetchall()
if len(rows) < 10:
    print(f"FAIL {what}: {len(rows)} exchanges recorded")
    sys.exit(1)
def rank(v, p):
    v = sorted(v)
    return v[max(0, math.ceil(p * len(v) / 100) - 1)]
def bar(name, figure, rule, met):
    print(f"bar: delays: {what}, {name}: {figure}; bar {rule}: {'met' if met else 'MISSED'}")
ok = True
index = {"tw": 1, "tr": 2}
first = [r[4] for r in rows]
if None in first or min(first) < delay - 0.05:
    print(f"FAIL {what}: TFB - T3 = {min(x for x in first if x is not None):.3f} ms "
          f"(or missing), below the delay {delay:g} ms")
    ok = False
else:
    print(f"{what}: TFB - T3 >= {delay:g} ms in all {len(first)} exchanges "
          f"(min {min(first):.3f} ms)")
for name in filter(None, band.split(",")):
    vals = [r[index[name]] for r in rows]
    if None in vals:
        print(f"FAIL {what}: {name} missing"); ok = False; continue
    err = [v - delay for v in vals]
    p50 = rank(err, 50)
    early = [round(e, 3) for e in err if e < -0.1]
    late = [round(e, 3) for e in err if e > 1.5]
    print(f"{what}: {len(vals)} exchanges, {name} - {delay:g} ms: min {min(err) * 1000:+.0f} "
          f"p50 {p50 * 1000:+.0f} p99 {rank(err, 99) * 1000:+.0f} max {max(err) * 1000:+.0f} us")
    if not -0.1 <= p50 <= delay / 2:
        print(f"FAIL {what}: median {name} - {delay:g} ms = {p50:.3f} ms, "
              f"not within [-0.1, {delay / 2:g}]")
        ok = False
    bar(f"{name} - {delay:g} ms", f"min {min(err) * 1000:+.0f} us", "none below -0.1 ms",
        not early)
    bar(f"{name} - {delay:g} ms", f"{len(late)} of {len(vals)} above +1.5 ms",
        "at most 5% above +1.5 ms", len(late) <= len(vals) // 20)
    bar(f"{name} - {delay:g} ms, median", f"{p50 * 1000:+.0f} us", "within [0, +0.5] ms",
        0 <= p50 <= 0.5)
for name in filter(None, small.split(",")):
    vals = [r[index[name]] for r in rows]
    if None in vals:
        print(f"FAIL {what}: {name} missing"); ok = False; continue
    print(f"{what}: {name} over {len(vals)}: p50 {rank(vals, 50) * 1000:.0f} us, "
          f"max {max(vals) * 1000:.0f} us (no delay in it)")
    if rank(vals, 50) >= 1.0:
        print(f"FAIL {what}: median {name} {rank(vals, 50):.3f} ms, expected < 1 ms (not delayed)")
        ok = False
    bar(name, f"max {max(vals) * 1000:.0f} us", "all below 1 ms", max(vals) < 1.0)
# Te: every connection to the port, whatever the program (its own Te is a bar)
te = [r[0] for r in sqlite3.connect(db).execute(
    "SELECT te_ms FROM connection_metrics WHERE peer_port = ?", (int(port),))]
mine = [r[0] for r in rows if r[3] == 1]
if None in te or not te:
    print(f"FAIL {what}: Te missing"); ok = False
else:
    print(f"{what}: Te over its {len(mine)} connections: max {max(mine) * 1000:.0f} us; over "
          f"all {len(te)} to the port: p50 {rank(te, 50) * 1000:.0f} us (no delay in it)")
    if rank(te, 50) >= delay / 2:
        print(f"FAIL {what}: median Te {rank(te, 50):.3f} ms, expected < {delay / 2:g} ms (not delayed)")
        ok = False
bar("Te", f"max {max(mine) * 1000:.0f} us", "all below 1 ms", max(mine) < 1.0)
sys.exit(0 if ok else 1)
PY

# check ARGS...: check.py; any failure fails the test at once
check() { "$PYTHON" "$WORK/check.py" "$@" || fail "$7"; }

# ---- (a) nginx behind the relay ----
DB=$WORK/a.db
urls=() relay_urls=()
for ((i = 0; i < 10; i++)); do urls+=(-o /dev/null "$NGINX_URL/100b"); done
observed "$DB" curl -s "${urls[@]}"                    # direct: nginx's own time
start_relay a "$NGINX_PORT" --up "$D1" --down "$D2"
for ((i = 0; i < 10; i++)); do relay_urls+=(-o /dev/null "http://127.0.0.1:$RELAY_PORT/100b"); done
for ((i = 0; i < 2; i++)); do observed "$DB" curl -s "${relay_urls[@]}"; done
observed "$DB" "$PYTHON" "$WORK/client.py" "$RELAY_PORT" /100b 15 5
stop_relay a
echo "nginx direct, 100 B: Tw median $(q "$DB" "SELECT round(tw_ms, 3) FROM exchange_metrics WHERE peer_port = $NGINX_PORT ORDER BY tw_ms LIMIT 1 OFFSET 5") ms (its own time)"
# curl polls before it reads: its first receive call is at the first
# byte, so its Tr (T6 - T5) holds the transfer only. python's blocking
# recv is called right after the request: its Tr holds the wait too.
check "$DB" "$RELAY_PORT" '%curl' $((D1 + D2)) tw tr "(a) curl via relay $D1+$D2 ms"
check "$DB" "$RELAY_PORT" '%python%' $((D1 + D2)) tw,tr "" "(a) python via relay $D1+$D2 ms"
ok "(a) $D1 + $D2 ms in Tw (and Tr for a blocking reader): TFB - T3 never below, medians within [-0.1 ms, +D/2]; Te not delayed"

# ---- (b) a server that waits a known time ----
WAIT=30
start_fault "$WAIT"
DB=$WORK/b.db
fault_urls=() relay_urls=()
for ((i = 0; i < 10; i++)); do fault_urls+=(-o /dev/null "http://127.0.0.1:$FAULT_PORT/"); done
for ((i = 0; i < 2; i++)); do observed "$DB" curl -s "${fault_urls[@]}"; done
observed "$DB" "$PYTHON" "$WORK/client.py" "$FAULT_PORT" / 15 5
check "$DB" "$FAULT_PORT" '%curl' "$WAIT" tw tr "(b) curl, server waits $WAIT ms"
check "$DB" "$FAULT_PORT" '%python%' "$WAIT" tw,tr "" "(b) python, server waits $WAIT ms"
start_relay b "$FAULT_PORT" --up "$D1" --down "$D2"
for ((i = 0; i < 10; i++)); do relay_urls+=(-o /dev/null "http://127.0.0.1:$RELAY_PORT/"); done
for ((i = 0; i < 2; i++)); do observed "$DB" curl -s "${relay_urls[@]}"; done
observed "$DB" "$PYTHON" "$WORK/client.py" "$RELAY_PORT" / 15 5
stop_relay b
check "$DB" "$RELAY_PORT" '%curl' $((D1 + D2 + WAIT)) tw tr "(b) curl, relay $D1+$D2 ms + server $WAIT ms"
check "$DB" "$RELAY_PORT" '%python%' $((D1 + D2 + WAIT)) tw,tr "" "(b) python, relay $D1+$D2 ms + server $WAIT ms"
ok "(b) a server's $WAIT ms wait in Tw, direct and behind the relay: TFB - T3 never below, medians within [-0.1 ms, +D/2]"

# ---- (c) ApacheBench's own per-request times ----
cat > "$WORK/ab_check.py" <<'PY'
import math, sqlite3, sys
gnuplot, db, port, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
ab = []
with open(gnuplot) as f:
    header = f.readline().rstrip("\n").split("\t")
    assert header == ["starttime", "seconds", "ctime", "dtime", "ttime", "wait"], header
    for line in f:
        start, seconds, ctime, dtime, ttime, wait = line.rstrip("\n").split("\t")
        ab.append((int(ctime), int(ttime), int(wait)))
ours = sqlite3.connect(db).execute(
    "SELECT te_ms, tt_ms, tw_ms, (tfb_ns - t3_ns) / 1e6 FROM exchange_metrics "
    "WHERE peer_port = ? AND program LIKE '%ab' "
    "ORDER BY t1_ns", (port,)).fetchall()
what = f"(c) ab, {delay:g} ms round trip"
if len(ours) != len(ab) or not ab:
    print(f"FAIL {what}: ab wrote {len(ab)} rows, we recorded {len(ours)} exchanges")
    sys.exit(1)
if any(v is None for row in ours for v in row):
    print(f"FAIL {what}: a time is missing: {ours}")
    sys.exit(1)
def rank(v, p):
    v = sorted(v)
    return v[max(0, math.ceil(p * len(v) / 100) - 1)]
def bar(name, figure, rule, met):
    print(f"bar: delays: {what}, {name}: {figure}; bar {rule}: {'met' if met else 'MISSED'}")
ok = True
# matched rank by rank (ab -g rows are sorted by ttime)
for name, a_i, o_i in (("ctime/Te", 0, 0), ("ttime/Tt", 1, 1), ("wait/Tw", 2, 2)):
    a = sorted(r[a_i] for r in ab)
    o = sorted(r[o_i] for r in ours)
    diff = [x - y for x, y in zip(a, o)]
    print(f"{what}: {len(a)} requests, ab {name}: ab - ours min {min(diff):+.3f} "
          f"p50 {rank(diff, 50):+.3f} max {max(diff):+.3f} ms (ab p50 {rank(a, 50)} ms, "
          f"ours p50 {rank(o, 50):.3f} ms)")
    if name == "ctime/Te" and min(diff) < -0.501:
        print(f"FAIL {what}: ab's ctime below our Te by more than its rounding"); ok = False
    if abs(rank(diff, 50)) > 1.5:
        print(f"FAIL {what}: median {name} difference beyond 1 ms + rounding"); ok = False
    bar(f"ab {name}, ab - ours rank by rank", f"{min(diff):+.3f} to {max(diff):+.3f} ms",
        "all within 1 ms + 0.5 of rounding", max(map(abs, diff)) <= 1.5)
err = [r[2] - delay for r in ours]
late = [round(e, 3) for e in err if e > 1.5]
p50 = rank(err, 50)
print(f"{what}: our Tw - {delay:g} ms: min {min(err) * 1000:+.0f} p50 {p50 * 1000:+.0f} "
      f"max {max(err) * 1000:+.0f} us; ab wait - {delay:g}: {sorted(set(r[2] - delay for r in ab))}")
if min(r[3] for r in ours) < delay - 0.05:
    print(f"FAIL {what}: TFB - T3 below the delay"); ok = False
if not -0.1 <= p50 <= delay / 2:
    print(f"FAIL {what}: median Tw - {delay:g} ms = {p50:.3f} ms, not within "
          f"[-0.1, {delay / 2:g}]"); ok = False
bar(f"Tw - {delay:g} ms", f"min {min(err) * 1000:+.0f} us", "none below -0.1 ms", min(err) >= -0.1)
bar(f"Tw - {delay:g} ms", f"{len(late)} of {len(err)} above +1.5 ms", "at most 5% above +1.5 ms",
    len(late) <= len(err) // 20)
bar(f"Tw - {delay:g} ms, median", f"{p50 * 1000:+.0f} us", "within [0, +0.5] ms", 0 <= p50 <= 0.5)
sys.exit(0 if ok else 1)
PY
declare -A AB_N=([20]=40 [100]=20 [200]=20)
for d in 20 100 200; do
  DB=$WORK/ab$d.db
  start_relay "ab$d" "$NGINX_PORT" --up "$(echo "$d / 2" | bc -l)" --down "$(echo "$d / 2" | bc -l)"
  observed "$DB" ab -q -n "${AB_N[$d]}" -c 1 -g "$WORK/ab$d.tsv" "http://127.0.0.1:$RELAY_PORT/100b" > "$WORK/ab$d.out"
  stop_relay "ab$d"
  "$PYTHON" "$WORK/ab_check.py" "$WORK/ab$d.tsv" "$DB" "$RELAY_PORT" "$d" ||
    fail "(c) ab through $d ms"
  ok "(c) ab through $d ms: ctime contains Te, ttime and wait = Tt and Tw (medians within 1 ms + rounding); Tw = the delay"
done
