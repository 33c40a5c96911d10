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
# (exactly).
#
# Asserted, on every run (what no load can break, each with its reason in
# packets.py): every exchange matched to its packets; bytes equal; the
# order causality dictates; the median of every |error| within 1 ms.
# Printed, not asserted: the benchmark's bars, p99 of |error| <= 100 us for
# Te, T3, and TFB and T6 of one-segment responses ("bar:" lines, collected
# by scripts/bench-accuracy.sh). Those measure the machine as much as the
# layer: what separates a packet from the program's call is a wake-up
# across CPUs, and whatever else runs there. The method, the figures and
# why responses of many segments differ by more: docs/accuracy.md.
#
# nginx and the clients run SCHED_FIFO when we may (root), which keeps an
# ordinary task (another test, a build) from standing between a packet and
# the program's wake-up: it narrows the tail the benchmark measures; the
# assertions hold without it (ACCURACY_RT=0).
#
# The capture is known to be running, and to hold everything, by marker
# connections of our own (connect, close; nginx logs no request for them):
# the traffic starts when the first marker is in the capture file, and the
# capture stops when a marker made after the traffic is.
#
# Exit 77 (skipped) when tshark is missing or cannot capture on lo.
# PACKETS_N (default 600): requests of each ab run.
# ACCURACY_RT=0: no real-time priority (to see what it keeps out).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd tshark
need_cmd ab
need_cmd curl
N=${PACKETS_N:-600}
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
# Prints "OFFSET UNCERTAINTY" (ns): the tightest of 20 readings, the
# REALTIME read between two MONOTONIC reads, and half their distance.
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
print(best[1], (best[0] + 1) // 2)'
}

# marker: a connection of our own to nginx (connect, close: no request, no
# log line); prints its client port and adds it to $WORK/markers.
marker() {
  local port
  port=$("$PYTHON" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 30)
print(s.getsockname()[1])
s.close()' "$NGINX_PORT") || fail "marker connection to nginx"
  echo "$port" >> "$WORK/markers"
  echo "$port"
}

# in_capture FILE PORT: the SYN from client port PORT is in FILE (tshark
# writes its file as it goes; a last block half written is no harm here)
in_capture() {
  tshark -r "$1" -n -Y "tcp.srcport == $2 && tcp.flags.syn == 1 && tcp.flags.ack == 0" \
    2> /dev/null | grep -q .
}

# tshark_alive: tshark still runs (skips the test with tshark's reason if not)
tshark_alive() {
  kill -0 "$TSHARK_PID" 2> /dev/null ||
    skip "tshark cannot capture on lo: $(grep -v -e '^Running as' -e '^Capturing on' "$WORK/tshark.err" | head -n 2 | tr '\n' ' ')"
}

# marked FILE: a new marker connection is in FILE within 2 s (tshark must
# still run). A marker made before the capture began is never in it, so
# each try makes a new one.
marked() {
  local port
  tshark_alive
  port=$(marker)
  wait_until 2 in_capture "$1" "$port"
}

# capture_start FILE / capture_stop FILE: tshark on lo, the server's port
# only, 96 bytes of each packet, a 64 MB kernel buffer.
capture_start() {
  : > "$WORK/tshark.err"
  tshark -i lo -n -q -s 96 -B 64 -f "tcp port $NGINX_PORT" -w "$1" \
    > /dev/null 2> "$WORK/tshark.err" &
  TSHARK_PID=$!
  at_exit "kill -INT $TSHARK_PID 2>/dev/null"
  wait_until 60 marked "$1" || fail "no marker connection in the capture after 60 s"
}
capture_stop() {
  wait_until 60 marked "$1" || fail "the capture did not catch up with the traffic in 60 s"
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

# run N: capture the traffic; sets RC to packets.py's status, or to 2 when
# the clock was stepped during the run (its times cannot be compared then)
run() {
  local db=$WORK/run$1.db cap=$WORK/run$1.pcapng before after before_u after_u
  local drift slack port ignore=()
  : > "$NGINX_LOG"
  read -r before before_u < <(clock_offset)
  capture_start "$cap"
  traffic "$db"
  read -r after after_u < <(clock_offset)
  capture_stop "$cap"
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$db" "$NGINX_LOG" "$NGINX_PORT" ||
    fail "the database does not match nginx's log"
  drift=$((after - before))
  slack=$((20000 + before_u + after_u))
  echo "clock: REALTIME - MONOTONIC moved by $drift ns during the run (readings good to $before_u and $after_u ns)"
  if ((drift > slack || drift < -slack)); then
    echo "the clock was stepped during the run: its times cannot be compared"
    RC=2
    return
  fi
  while read -r port; do ignore+=(--ignore-port "$port"); done < "$WORK/markers"
  RC=0
  "$PYTHON" "$REPO/tests/accuracy/packets.py" "$db" "$cap" "$NGINX_PORT" \
    --min-exchanges 1000 --csv "$WORK/run$1.csv" "${ignore[@]}" || RC=$?
}

# One run. A second only when the clock was stepped (settimeofday, an NTP
# step) during the first: that voids the comparison, it is no noise of the
# layer's. Nothing else is retried.
run 1
[ "$RC" = 2 ] && run 2
case $RC in
  0) ok "bytes exact, order kept, every median |error| within 1 ms of the packets" ;;
  2) fail "the clock was stepped during both runs" ;;
  *) fail "the layer's bytes or times disagree with the packets" ;;
esac
