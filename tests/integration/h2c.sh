#!/usr/bin/env bash
# h2c.sh CASE CAPTURE - cleartext HTTP/2 with real clients against nginx
# (listen ... http2: prior knowledge) and nghttpx (Upgrade: h2c), recorded
# by the layer with CAPTURE = events (OBSERVE_CAPTURE=events: the core
# rebuilds one exchange per stream) or default (the exchange state
# machine), and checked against the servers' own logs: one exchange per
# request, with its method, path (no query) and status, numbered as the
# server counted the requests on the connection (tests/lib/check_access.py
# --http), its stream id, the connection h2c:
#   prior     curl --http2-prior-knowledge for 1 MiB with a query string
#             that must not reach the database (one URL: curl 7.88 fails its
#             second request on such a connection to nginx, bare too), then
#             nghttp, three requests at once on one connection, a 404 among
#             them (its PRIORITY frames on idle streams are no exchanges)
#   h2load    h2load -n 100 -c 1 -m 10: 100 exchanges on one connection,
#             streams open at once
#   upgrade   nghttp -u and curl --http2 to nghttpx (which answers Upgrade:
#             h2c with a 101, in front of nginx): the HTTP/1.1 request is
#             stream 1, the next streams follow on the same connection; with
#             events, the 101 is stream 1's interim status
#   download  (events) 64 MiB from nginx: one exchange whose Dr holds it,
#             recorded in a few dozen events
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
case_=${1:?case}
capture=${2:?capture: events or default}
case $capture in
events) export OBSERVE_CAPTURE=events ;;
default) unset OBSERVE_CAPTURE ;;
*) fail "unknown capture $capture" ;;
esac
DB=$WORK/run.db
make_site "$WORK/site"
H2C_PORT=$(free_port)
export NGINX_EXTRA="listen 127.0.0.1:$H2C_PORT http2;"
nginx_start "$WORK/site"
H2C_URL=http://127.0.0.1:$H2C_PORT

slice() { "$SLICER" -q -o "$DB" "$SPOOL" || fail "slicer failed"; }

# check_nginx: the exchanges to the h2c port are nginx's requests
check_nginx() {
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$H2C_PORT" --http ||
    fail "the database does not match nginx's log"
  ok "one exchange per request nginx logged ($(wc -l < "$NGINX_LOG")), labelled as it logged"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE peer_port = $H2C_PORT AND (stream IS NULL OR stream % 2 = 0)")" 0 \
    "every exchange an HTTP/2 stream the client opened"
  expect_eq "$(q "$DB" "SELECT group_concat(DISTINCT protocol) FROM connection WHERE peer_port = $H2C_PORT")" h2c \
    "the connections' protocol"
}

no_secret() {
  expect_eq "$(sqlite3 "$DB" .dump | grep -c SECRET)" 0 "no query string in the database"
}

case $case_ in
prior)
  need_cmd curl
  need_cmd nghttp
  preload curl -sS --http2-prior-knowledge -o /dev/null "$H2C_URL/1m?token=SECRET" ||
    fail "curl failed"
  preload nghttp -n "$H2C_URL/100b" "$H2C_URL/50k" "$H2C_URL/missing" > "$WORK/nghttp.out" 2>&1 ||
    fail "nghttp failed: $(tail -3 "$WORK/nghttp.out")"
  slice
  check_nginx
  no_secret
  expect_true "Dr of /1m at least its body" \
    test "$(q "$DB" "SELECT dr >= 1048576 FROM exchange WHERE path = '/1m'")" = 1
  expect_eq "$(q "$DB" "SELECT group_concat(path || ' ' || status, ', ') FROM (SELECT e.path, e.status FROM exchange_metrics e WHERE e.connection_id = (SELECT connection_id FROM exchange WHERE path = '/missing') ORDER BY e.seq)")" \
    "/100b 200, /50k 200, /missing 404" "nghttp's three streams on one connection, in the order they opened"
  ;;
h2load)
  need_cmd h2load
  preload h2load -n 100 -c 1 -m 10 "$H2C_URL/100b" > "$WORK/h2load.out" 2>&1 ||
    fail "h2load failed: $(tail -3 "$WORK/h2load.out")"
  grep -q "100 succeeded" "$WORK/h2load.out" || fail "h2load: $(grep succeeded "$WORK/h2load.out")"
  slice
  check_nginx
  expect_eq "$(q "$DB" "SELECT count(*) || ' ' || sum(method = 'GET' AND path = '/100b' AND status = 200) || ' ' || count(DISTINCT connection_id) FROM exchange_metrics WHERE peer_port = $H2C_PORT")" \
    "100 100 1" "100 exchanges, each GET /100b 200, on 1 connection"
  expect_true "streams open at once (one opened before an earlier one's end)" \
    [ "$(q "$DB" "SELECT count(*) FROM exchange_metrics a JOIN exchange_metrics b ON a.connection_id = b.connection_id AND b.seq > a.seq AND b.t3_ns < a.t6_ns")" -gt 0 ]
  ;;
upgrade)
  need_cmd curl
  need_cmd nghttp
  command -v nghttpx >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  need_cmd nghttpx
  UP_PORT=$(free_port)
  nghttpx --conf=/dev/null --frontend="127.0.0.1,$UP_PORT;no-tls" \
    --backend="127.0.0.1,$NGINX_PORT" --workers=1 --no-ocsp \
    --errorlog-file="$WORK/nghttpx.log" --accesslog-file="$WORK/access.log" &
  at_exit "kill $! 2>/dev/null"
  wait_port "$UP_PORT" || fail "nghttpx did not start"
  preload nghttp -nu "http://127.0.0.1:$UP_PORT/100b?q=SECRET" "http://127.0.0.1:$UP_PORT/50k" \
    > "$WORK/nghttp.out" 2>&1 || fail "nghttp -u failed: $(tail -3 "$WORK/nghttp.out")"
  # (curl 7.88 fails, bare too, when more than its 32 KiB buffer follows
  # the 101 in one read: the first answer is a small one)
  preload curl -sS --http2 -o /dev/null -o /dev/null \
    "http://127.0.0.1:$UP_PORT/missing" "http://127.0.0.1:$UP_PORT/1m" || fail "curl failed"
  slice
  rows() {
    q "$DB" "SELECT group_concat(seq || ' ' || stream || ' ' || method || ' ' || path || ' ' || ifnull(status, '-'), ', ')
             FROM (SELECT * FROM exchange_metrics WHERE connection_id = (SELECT connection_id
                   FROM exchange WHERE path = '$1') ORDER BY seq)"
  }
  # (nghttp's PRIORITY frames use idle streams 3 to 11: its next is 13)
  expect_eq "$(rows /100b)" "1 1 GET /100b 200, 2 13 GET /50k 200" \
    "nghttp: the Upgrade's request is stream 1, the next stream 13"
  expect_eq "$(rows /missing)" "1 1 GET /missing 404, 2 3 GET /1m 200" \
    "curl: the Upgrade's request is stream 1, the next stream 3"
  expect_eq "$(q "$DB" "SELECT group_concat(DISTINCT protocol) FROM connection WHERE peer_port = $UP_PORT")" h2c \
    "the protocol after the Upgrade"
  expect_true "Dr of /1m at least its body" \
    test "$(q "$DB" "SELECT dr >= 1048576 FROM exchange WHERE path = '/1m'")" = 1
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE NOT (t3_ns <= t4_ns AND t4_ns <= t5_ns AND t5_ns <= tfb_ns AND tfb_ns <= t6_ns)")" 0 \
    "T3 <= T4 <= T5 <= TFB <= T6 on every stream"
  if [ "$capture" = events ]; then
    expect_eq "$(q "$DB" "SELECT group_concat(stream || ' ' || interim_status) FROM exchange WHERE interim_status IS NOT NULL")" \
      "1 101,1 101" "the 101s: stream 1's interim status, on each connection"
    expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE interim_status IS NOT NULL AND NOT (t4_ns <= interim_ns AND interim_ns <= tfb_ns)")" 0 \
      "each 101 between its request's T4 and stream 1's TFB"
  else
    expect_eq "$(q "$DB" "SELECT count(interim_status) FROM exchange")" 0 "no interim status on the default path"
  fi
  no_secret
  ;;
download)
  [ "$capture" = events ] || skip "the event count is the event capture's"
  need_cmd curl
  head -c $((64 << 20)) /dev/zero > "$WORK/site/big"
  preload curl -sS --http2-prior-knowledge -o /dev/null "$H2C_URL/big" || fail "curl failed"
  slice
  check_nginx
  expect_true "Dr at least 64 MiB" test "$(q "$DB" "SELECT dr >= 67108864 FROM exchange WHERE path = '/big'")" = 1
  events=$("$PYTHON" - "$SPOOL"/*.spool <<'PY'
import struct, sys
n = 0
for f in sys.argv[1:]:
    d = open(f, "rb").read()
    for off in range(4096, len(d) - 127, 128):
        if struct.unpack_from("<I", d, off)[0] == 5:  # OBS_REC_EVENT
            n += 1
print(n)
PY
)
  [ "$events" -gt 5 ] && [ "$events" -le 64 ] ||
    fail "64 MiB in $events event records: not a few dozen"
  ok "64 MiB downloaded in $events event records"
  ;;
*)
  fail "unknown case $case_"
  ;;
esac
