#!/usr/bin/env bash
# faults.sh CASE - servers of our own that misbehave in known ways; the
# database must say what happened (tests/servers/faults.py).
source "$(dirname "$0")/../lib/common.sh"
DB=$WORK/run.db
case=$1

case $case in
delay)
  # The answer comes 50 ms after the server read the request, so at least
  # 50 ms after T3 (the entry of the send): no load breaks that. Tw (from
  # T4, the send's return) holds the wait: above 0 and at most TFB - T3.
  # Its upper bound is loose on purpose: a loaded machine wakes the
  # server's timer and the client late by tens of ms (seen: Tw > 100 ms
  # beside a full test run and five builds), not by a second.
  fault_server delay --delay-ms 50
  preload curl -sf -o /dev/null "http://127.0.0.1:$FAULT_PORT/"
  "$SLICER" -q -o "$DB" "$SPOOL"
  read -r tw first < <(q "$DB" "SELECT tw_ms, (tfb_ns - t3_ns) / 1e6 FROM exchange_metrics" | tr '|' ' ')
  python3 -c "import sys; tw, first = map(float, sys.argv[1:]); sys.exit(0 if first >= 50 and 0 < tw <= first and tw < 1000 else 1)" "$tw" "$first" ||
    fail "Tw $tw ms, TFB - T3 $first ms for a server that waits 50 ms"
  ok "Tw = $tw ms, TFB - T3 = $first ms for a 50 ms server delay"
  ;;
midclose)
  fault_server midclose
  preload curl -s -o /dev/null "http://127.0.0.1:$FAULT_PORT/" || true
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT end_class FROM connection")" server_close "end class"
  dr=$(q "$DB" "SELECT dr FROM exchange")
  [ "$dr" -gt 1000 ] && [ "$dr" -lt 100000 ] || fail "dr=$dr: expected the headers and 1000 of 100000 body bytes"
  ok "dr = $dr (cut short)"
  [ -n "$(q "$DB" "SELECT teof_ns FROM connection WHERE teof_ns IS NOT NULL")" ] || fail "no TEOF"
  ok "TEOF recorded"
  ;;
reset)
  fault_server reset
  preload curl -s -o /dev/null "http://127.0.0.1:$FAULT_PORT/" || true
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT end_class || ' ' || end_error FROM connection")" "reset ECONNRESET" "end class"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE ds > 0 AND dr = 0 AND tfb_ns IS NULL")" 1 "request sent, no response"
  ;;
banner)
  fault_server banner
  preload python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
assert s.recv(100).startswith(b"220")
s.sendall(b"QUIT\r\n")
assert s.recv(100).startswith(b"221")
assert s.recv(100) == b""
s.close()' "$FAULT_PORT"
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 2 "exchanges"
  expect_eq "$(q "$DB" "SELECT seq, server_first, t3_ns IS NULL, ds, dr FROM exchange ORDER BY seq" | tr '\n' ' ')" "1|1|1|0|11 2|0|0|6|9 " "banner exchange then QUIT exchange"
  expect_eq "$(q "$DB" "SELECT end_class FROM connection")" server_close "end class"
  ;;
refused)
  port=$(free_port)  # nothing listens there
  preload curl -s -o /dev/null "http://127.0.0.1:$port/" && fail "curl reached a closed port"
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT DISTINCT end_class || ' ' || connect_error FROM connection")" "refused ECONNREFUSED" "end class"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 0 "no exchanges"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection_metrics WHERE te_ms IS NULL AND t2_ns IS NOT NULL")" "$(q "$DB" "SELECT count(*) FROM connection")" "Te undefined, the failure time kept"
  ;;
ipv6)
  python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null ||
    skip "no IPv6 loopback (::1)"
  fault_server delay --delay-ms 50 --host ::1
  resp=$(printf 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello' | wc -c)
  "$OBSERVE" -q -o "$DB" -- curl -sf -g -o /dev/null -o /dev/null "http://[::1]:$FAULT_PORT/a" "http://[::1]:$FAULT_PORT/b" ||
    fail "curl over ::1 failed"
  expect_eq "$(q "$DB" "SELECT peer_addr || ' ' || peer_port || ' ' || local_addr || ' ' || (local_port > 0) || ' ' || end_class FROM connection")" \
    "::1 $FAULT_PORT ::1 1 client_close" "an AF_INET6 connection"
  # (the bounds of the delay case)
  expect_eq "$(q "$DB" "SELECT group_concat(seq || ':' || (tfb_ns - t3_ns >= 50e6 AND tw_ms > 0 AND tw_ms * 1e6 <= tfb_ns - t3_ns AND tw_ms < 1000) || ':' || (ds > 0) || ':' || dr, ' ') FROM (SELECT * FROM exchange_metrics ORDER BY seq)")" \
    "1:1:1:$resp 2:1:1:$resp" "two keep-alive exchanges, each waiting 50 ms"
  ;;
*) fail "unknown case $case" ;;
esac
