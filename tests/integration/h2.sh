#!/usr/bin/env bash
# h2.sh CASE H2FEED - the HTTP/2 frame follower (core/h2.c) on real
# traffic. A relay of ours (tests/servers/relay.py) records what a real
# client and a real server exchange over cleartext HTTP/2; tests/tools/h2feed
# plays the recording through the follower (which dlopens libnghttp2), and
# what it says is checked against nginx's log and the files served:
#   prior    curl --http2-prior-knowledge against nginx (listen ... http2):
#            1 MB with a query string that must not come out; then nghttp,
#            three requests at once on one connection (and PRIORITY frames
#            on idle streams), a 404 among them
#   h2load   h2load, 40 requests on one connection, 10 at a time: the
#            streams overlap
#   upgrade  curl --http2 through nghttpx to nginx: an HTTP/1.1 request with
#            Upgrade: h2c, the 101, then the same connection in frames
# Each recording is also played in pieces of 1 and of 1000 bytes: the same
# account.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
case_=${1:?case}
H2FEED=${2:?path of h2feed}
make_site "$WORK/site"
H2_PORT=$(free_port)
export NGINX_EXTRA="listen 127.0.0.1:$H2_PORT http2;"
nginx_start "$WORK/site"

# start_relay UPSTREAM_PORT: sets RELAY_PORT; recordings in $WORK/rec.N
start_relay() {
  local i
  "$PYTHON" "$REPO/tests/servers/relay.py" "$WORK/relay.port" "$1" "$WORK/rec" --lifetime 100 &
  at_exit "kill $! 2>/dev/null"
  for ((i = 0; i < 100; i++)); do
    [ -s "$WORK/relay.port" ] && break
    sleep 0.05
  done
  RELAY_PORT=$(cat "$WORK/relay.port" 2>/dev/null) || fail "the relay did not start"
}

# follow N: the follower's account of connection N (once it is recorded to
# the end, 10 s at most), in $WORK/out.N; the same whatever the pieces
follow() {
  local n=$1 i
  for ((i = 0; i < 200; i++)); do
    [ -e "$WORK/rec.$n.done" ] && break
    sleep 0.05
  done
  [ -e "$WORK/rec.$n.done" ] || fail "connection $n was not recorded to its end"
  "$H2FEED" "$WORK/rec.$n" > "$WORK/out.$n" || fail "h2feed failed on connection $n"
  for split in 1 1000; do
    "$H2FEED" --split $split "$WORK/rec.$n" > "$WORK/out.$n.$split" ||
      fail "h2feed --split $split failed"
    cmp -s "$WORK/out.$n" "$WORK/out.$n.$split" ||
      fail "connection $n in pieces of $split: another account ($(diff "$WORK/out.$n" "$WORK/out.$n.$split" | head -3))"
  done
  ok "connection $n: the same account whole, in pieces of 1 and of 1000 bytes"
}

# check_account N MODE REQUESTS: the basics of any good account
check_account() {
  local out=$WORK/out.$1
  expect_eq "$(awk '$1 == "mode" {print $2}' "$out")" "$2" "connection $1 followed as"
  expect_eq "$(grep -c '^open ' "$out")" "$3" "streams opened by the client"
  expect_eq "$(grep -cE '^(lost|nolabels|untracked|reset) ' "$out")" 0 "nothing lost, reset or untracked"
  expect_eq "$(awk '$1 == "fed" {print $2, $3}' "$out")" "$(awk '$1 == "said" {print $2, $3}' "$out")" \
    "every byte fed counted once (tx rx)"
  # every stream: both ends seen, then closed (an Upgrade's stream 1 ended
  # its request in HTTP/1.1)
  expect_eq "$(awk -v m="$2" '$1 == "end" {e[$2]++}
      $1 == "close" {if (e[$2] != 2 && !(m == "upgrade" && $2 == 1 && e[$2] == 1)) bad++}
      END {print bad + 0}' "$out")" 0 "every stream closed after END_STREAM both ways"
}

# requests_vs_log N: "METHOD PATH STATUS" of the follower's streams and of
# nginx's log (the query cut off)
requests_vs_log() {
  local out=$WORK/out.$1
  awk '$1 == "request" {r[$2] = $3 " " $4} $1 == "status" {s[$2] = $3}
       END {for (k in r) print r[k], s[k]}' "$out" | sort > "$WORK/follower.$1"
  awk -F'\t' '{split($6, u, "?"); print $5, u[1], $7}' "$NGINX_LOG" | sort > "$WORK/nginx.$1"
  cmp -s "$WORK/follower.$1" "$WORK/nginx.$1" ||
    fail "the follower's requests differ from nginx's log: $(diff "$WORK/follower.$1" "$WORK/nginx.$1" | head -5)"
  ok "the follower's method, path and status of each request = nginx's log ($(wc -l < "$WORK/nginx.$1") requests)"
}

# rx_bytes N PATH: the bytes received on the stream that asked for PATH
rx_bytes() {
  awk -v p="$2" '$1 == "request" && $4 == p {s = $2} $1 == "bytes" && $2 == s {print $4}' "$WORK/out.$1"
}

case $case_ in
prior)
  # curl 7.88 fails its second request on a prior-knowledge connection to
  # nginx ("Error in the HTTP2 framing layer"): one request per curl, and
  # nghttp for several on one connection
  need_cmd curl
  need_cmd nghttp
  start_relay "$H2_PORT"
  base=http://127.0.0.1:$RELAY_PORT
  code=$(curl -sS --http2-prior-knowledge -w '%{http_code} %{http_version}' \
    -o /dev/null "$base/1m?token=TOPSECRET") || fail "curl failed"
  expect_eq "$code" "200 2" "curl's status code and HTTP version"
  nginx_wait_log 1
  follow 1
  check_account 1 prior 1
  requests_vs_log 1
  expect_eq "$(awk '$1 == "request" {print $2, $5}' "$WORK/out.1")" "1 127.0.0.1:$RELAY_PORT" \
    "stream 1 with its :authority"
  expect_eq "$(grep -c TOPSECRET "$WORK/out.1")" 0 "the query string never comes out"
  grep -q '/1m?token=TOPSECRET' "$NGINX_LOG" || fail "nginx saw no query string (a useless check)"
  dr=$(rx_bytes 1 /1m)
  [ "$dr" -ge $((1048576 + 64 * 9)) ] && [ "$dr" -lt $((1048576 + 4096)) ] ||
    fail "Dr of /1m is $dr: not the 1 MiB body in 16 KiB frames plus headers"
  ok "Dr of /1m = $dr (1 MiB of DATA, frame headers, the response's header block)"

  : > "$NGINX_LOG"
  nghttp -n "$base/100b" "$base/50k" "$base/missing" > "$WORK/nghttp.out" 2>&1 ||
    fail "nghttp failed: $(tail -3 "$WORK/nghttp.out")"
  nginx_wait_log 3
  follow 2
  check_account 2 prior 3
  requests_vs_log 2
  dr=$(rx_bytes 2 /50k)
  [ "$dr" -ge 51200 ] && [ "$dr" -lt $((51200 + 2048)) ] || fail "Dr of /50k is $dr"
  ok "Dr of /50k = $dr"
  ;;
h2load)
  need_cmd h2load
  start_relay "$H2_PORT"
  h2load -n 40 -c 1 -m 10 "http://127.0.0.1:$RELAY_PORT/100b" > "$WORK/h2load.out" 2>&1 ||
    fail "h2load failed: $(tail -3 "$WORK/h2load.out")"
  grep -q "40 succeeded" "$WORK/h2load.out" || fail "h2load: $(grep succeeded "$WORK/h2load.out")"
  nginx_wait_log 40
  follow 1
  check_account 1 prior 40
  requests_vs_log 1
  most=$(awk '$1 == "open" {n++; if (n > m) m = n} $1 == "close" {n--} END {print m}' "$WORK/out.1")
  [ "$most" -ge 2 ] || fail "at most $most stream open at once: h2load -m 10 overlaps them"
  ok "streams open at once: up to $most"
  ;;
upgrade)
  need_cmd curl
  need_cmd nghttpx
  UP_PORT=$(free_port)
  nghttpx --conf=/dev/null --frontend="127.0.0.1,$UP_PORT;no-tls" \
    --backend="127.0.0.1,$NGINX_PORT" --workers=1 --no-ocsp \
    --errorlog-file="$WORK/nghttpx.log" --accesslog-file=/dev/null &
  at_exit "kill $! 2>/dev/null"
  wait_port "$UP_PORT"
  start_relay "$UP_PORT"
  base=http://127.0.0.1:$RELAY_PORT
  # The small answer first: curl 7.88 fails when more than its 32 KiB buffer
  # arrives with the 101 ("connection buffer size is too small to store data
  # following HTTP Upgrade response header"), with or without the layer.
  codes=$(curl -sS --http2 -w '%{http_code} %{http_version}\n' \
    -o /dev/null "$base/100b?q=TOPSECRET" -o /dev/null "$base/50k") || fail "curl failed"
  expect_eq "$(echo $codes)" "200 2 200 2" "curl's status codes and HTTP versions (after the Upgrade)"
  nginx_wait_log 2
  follow 1
  # stream 1 is the HTTP/1.1 request: the state machine opened it
  check_account 1 upgrade 1
  grep -q '^status 1 200$' "$WORK/out.1" || fail "no status 200 on stream 1"
  grep -q '^request 3 GET /50k ' "$WORK/out.1" || fail "no request on stream 3"
  grep -q '^status 3 200$' "$WORK/out.1" || fail "no status 200 on stream 3"
  ok "stream 1 (the Upgrade's request) answered 200, stream 3 GET /50k answered 200"
  dr=$(awk '$1 == "bytes" && $2 == 3 {print $4}' "$WORK/out.1")
  [ "$dr" -ge 51200 ] && [ "$dr" -lt $((51200 + 2048)) ] || fail "Dr of stream 3 (/50k) is $dr"
  ok "Dr of stream 3 (/50k) = $dr"
  expect_eq "$(grep -c TOPSECRET "$WORK/out.1")" 0 "the query string never comes out"
  ;;
*) die "unknown case $case_" ;;
esac
