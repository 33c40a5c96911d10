#!/usr/bin/env bash
# packets.sh - the layer's times and byte counts against the packets that
# tshark captures on loopback: a reference no one here wrote.
#
# While tshark captures the test's own nginx port (headers only), clients
# under the layer fetch from that nginx: ab without keep-alive (a connection
# per request), ab -k (one connection), curl and python with 50 KB and 1 MB
# files (responses of many segments): 1,255 exchanges. packets.py matches
# every connection by the client's port, every exchange by its order, and
# compares Te with SYN -> SYN/ACK, T3/T4 with the request's segments, TFB/T6
# with the first/last response payload segment, Ds/Dr with the payload bytes
# (exactly). Asserted: bytes equal; the order causality dictates; p99 of
# |error| <= 100 us for Te, T3, and TFB and T6 of one-segment responses.
# The method, the figures and why responses of many segments differ by more:
# docs/accuracy.md.
#
# The bounds measure the machine as much as the layer: what separates a
# packet from the program's call is a wake-up across CPUs, and whatever
# else runs there. nginx and the clients therefore run SCHED_FIFO when we
# may (root), and when only a bound fails the run is made again, three runs
# at most, every run's table printed. Bytes and order must hold in every run.
#
# Exit 77 (skipped) when tshark is missing or cannot capture on lo.
# PACKETS_N (default 600): requests of each ab run. PACKETS_RUNS (default 3).
# ACCURACY_RT=0: no real-time priority (to see what it keeps out).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd tshark
need_cmd ab
need_cmd curl
N=${PACKETS_N:-600}
RUNS=${PACKETS_RUNS:-3}
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=$NGINX_URL

# Less noise from whatever else runs here (another test under ctest -j2):
# nginx and the clients get a real-time priority when we may give it (root),
# so that an ordinary task never delays their wake-up; the capture keeps an
# ordinary one. Both are reported.
PRIO=()
if [ "${ACCURACY_RT:-1}" = 1 ] && command -v chrt > /dev/null && chrt -f 10 true 2> /dev/null; then
  PRIO=(chrt -f 10)
  master=$(cat "$NGINX_DIR/nginx.pid")
  for pid in "$master" $(pgrep -P "$master"); do chrt -f -p 10 "$pid" > /dev/null; done
  echo "nginx and the clients run SCHED_FIFO 10"
else
  echo "nginx and the clients run at the ordinary priority (chrt not permitted, or ACCURACY_RT=0)"
fi

# REALTIME - MONOTONIC: the layer turns its monotonic times into epoch times
# with the offset of the moment its spool was made; tshark stamps packets
# with REALTIME. NTP slews both clocks alike; only a step moves the offset.
clock_offset() {
  "$PYTHON" -c '
import time
best = None
for _ in range(20):
    m1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    r = time.clock_gettime_ns(time.CLOCK_REALTIME)
    m2 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    if best is None or m2 - m1 < best[0]:
        best = (m2 - m1, r - (m1 + m2) // 2)
print(best[1])'
}

# capture_start FILE / capture_stop: tshark on lo, the server's port only,
# 96 bytes of each packet, a 64 MB kernel buffer.
capture_start() {
  : > "$WORK/tshark.err"
  tshark -i lo -n -q -s 96 -B 64 -f "tcp port $NGINX_PORT" -w "$1" \
    > /dev/null 2> "$WORK/tshark.err" &
  TSHARK_PID=$!
  at_exit "kill -INT $TSHARK_PID 2>/dev/null"
  local i
  for ((i = 0; i < 600; i++)); do
    grep -q "^Capturing on" "$WORK/tshark.err" && break
    kill -0 "$TSHARK_PID" 2>/dev/null ||
      skip "tshark cannot capture on lo: $(grep -v '^Running as' "$WORK/tshark.err" | tail -n 2 | tr '\n' ' ')"
    sleep 0.1
  done
  grep -q "^Capturing on" "$WORK/tshark.err" || fail "tshark did not start capturing in 60 s"
  # It says so before it opens the device: a capture it may not make ends
  # it (and says why) a moment later.
  sleep 0.5
  kill -0 "$TSHARK_PID" 2>/dev/null ||
    skip "tshark cannot capture on lo: $(grep -v -e '^Running as' -e '^Capturing on' "$WORK/tshark.err" | head -n 2 | tr '\n' ' ')"
}
capture_stop() {
  sleep 0.3  # the last packets
  kill -INT "$TSHARK_PID" 2>/dev/null || fail "tshark ended during the run: $(tail -n 3 "$WORK/tshark.err")"
  wait "$TSHARK_PID" || true
  if grep -i "dropped" "$WORK/tshark.err" | grep -qv "^0 packets dropped"; then
    fail "the capture dropped packets: $(grep -i dropped "$WORK/tshark.err")"
  fi
}

# traffic DB: the clients, each under the layer
traffic() {
  local db=$1 urls=() _
  "${PRIO[@]}" "$OBSERVE" -q -o "$db" -- ab -q -n "$N" -c 1 "$URL/100b" > "$WORK/ab.out" ||
    fail "ab: $(tail -n 3 "$WORK/ab.out")"
  "${PRIO[@]}" "$OBSERVE" -q -o "$db" -- ab -q -k -n "$N" -c 1 "$URL/100b" > "$WORK/ab.out" ||
    fail "ab -k: $(tail -n 3 "$WORK/ab.out")"
  # curl: one connection, keep-alive, 10 x 50 KB then 10 x 1 MB
  for _ in $(seq 10); do urls+=("$URL/50k"); done
  for _ in $(seq 10); do urls+=("$URL/1m"); done
  # shellcheck disable=SC2046
  "${PRIO[@]}" "$OBSERVE" -q -o "$db" -- curl -sf $(printf -- '-o /dev/null %.0s' "${urls[@]}") \
    "${urls[@]}" || fail "curl"
  # python: blocking sockets; keep-alive, then a connection per request
  "${PRIO[@]}" "$OBSERVE" -q -o "$db" -- "$PYTHON" - "$NGINX_PORT" <<'PY' || fail "python client"
import http.client, sys
port = int(sys.argv[1])
c = http.client.HTTPConnection("127.0.0.1", port)
for path in ["/50k", "/1m"] * 10:
    c.request("GET", path)
    c.getresponse().read()
c.close()
for path in ["/100b", "/50k", "/1m"] * 5:
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", path, headers={"Connection": "close"})
    c.getresponse().read()
    c.close()
PY
}

for ((run = 1; run <= RUNS; run++)); do
  echo "=== run $run of at most $RUNS"
  DB=$WORK/run$run.db
  CAP=$WORK/run$run.pcapng
  : > "$NGINX_LOG"
  offset_before=$(clock_offset)
  capture_start "$CAP"
  traffic "$DB"
  offset_after=$(clock_offset)
  capture_stop
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" ||
    fail "the database does not match nginx's log"
  drift=$((offset_after - offset_before))
  echo "clock: REALTIME - MONOTONIC moved by $drift ns during the run"
  if ((drift > 20000 || drift < -20000)); then
    echo "the clock was stepped during the run: its times cannot be compared"
    continue
  fi
  rc=0
  "$PYTHON" "$REPO/tests/accuracy/packets.py" "$DB" "$CAP" "$NGINX_PORT" \
    --min-exchanges 1000 --csv "$WORK/run$run.csv" || rc=$?
  case $rc in
    0) ok "run $run: bytes exact, order kept, p99 of Te, T3, TFB and T6 within 100 us of the packets"
       exit 0 ;;
    3) echo "run $run: a bound failed (see above); running again" ;;
    *) fail "run $run: the layer's bytes or times disagree with the packets" ;;
  esac
done
fail "a p99 bound failed in each of $RUNS runs"
