#!/usr/bin/env bash
# h1edges.sh CASE - HTTP/1.1 as servers speak it, recorded by the layer's
# event capture (OBSERVE_CAPTURE=events) and rebuilt by the core: real
# clients against nginx and against a server of our own
# (tests/servers/h1edges.py, which logs every request it answers). Each
# case asserts one exchange per request the server answered, with its
# method, path and final status, numbered as the server counted them on
# the connection:
#   continue   curl -T with Expect: 100-continue: the 100 is no exchange of
#              its own, the body is in Ds, the 201 comes after it (TFB >= T4);
#              the 100 is the exchange's interim status, between T3 and TFB
#   early      103 Early Hints before the 200, then a second request on the
#              same connection: two exchanges, 200 and 200; the first has
#              interim status 103, its time between T4 and TFB
#   pipeline   three requests (GET, HEAD of 1 MiB, GET) in one send to nginx
#              from python's sockets: three exchanges, as nginx logged them
#   bodies     HEAD, 304 and a GET after them on one connection to nginx
#              (python's http.client); chunked, 204, another request and a
#              body delimited by close on one to our server; an empty reply
#   websocket  node's WebSocket: the upgrade is one exchange (101); the
#              messages after it, one of them "GET / HTTP/1.1", are none: the
#              connection is marked WebSocket, its messages counted each way
#   connect    curl -x through our server to nginx over TLS: the CONNECT
#              exchange (its target as the host), on a connection marked TLS
#              whose tunnel column holds that target
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/edge.sh"
case_=${1:?case}
export OBSERVE_CAPTURE=events
DB=$WORK/run.db

slice() { "$SLICER" -q -o "$DB" "$SPOOL" || fail "slicer failed"; }

# check_edge: every request our server logged is one exchange, matched on
# the client's port and its number on the connection, with the method,
# path and status the server logged; and every exchange to it is one it
# logged (nothing more: no interim response, no frame, as a request).
check_edge() {
  "$PYTHON" - "$DB" "$EDGE_LOG" "$EDGE_PORT" <<'PY' || fail "the database does not match the server's log"
import sqlite3, sys
db, log, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = {}
for local_port, seq, method, path, status in sqlite3.connect(db).execute(
        "SELECT c.local_port, e.seq, e.method, e.path, e.status FROM exchange e "
        "JOIN connection c ON c.id = e.connection_id WHERE c.peer_port = ?", (port,)):
    rows[(local_port, seq)] = (method, path, status)
logged = {}
for line in open(log, encoding="utf-8"):
    cport, n, method, target, status = line.rstrip("\n").split("\t")
    path = "" if method == "CONNECT" else target.split("?")[0]
    logged[(int(cport), int(n))] = (method, path, int(status) or None)
bad = 0
for key, want in sorted(logged.items()):
    got = rows.get(key)
    if got != want:
        print(f"request {key}: logged {want}, recorded {got}")
        bad += 1
for key in sorted(set(rows) - set(logged)):
    print(f"exchange {key} {rows[key]}: no such request in the log")
    bad += 1
print(f"{len(logged)} requests logged, {len(rows)} exchanges recorded")
sys.exit(1 if bad or not logged else 0)
PY
  ok "one exchange per request our server answered, labelled as it logged"
}

check_nginx() {
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" --http "$@" ||
    fail "the database does not match nginx's log"
  ok "one exchange per request nginx logged, labelled as nginx logged it"
}

case $case_ in
continue)
  edge_server
  head -c 65536 /dev/zero | tr '\0' 'u' > "$WORK/upload"
  preload curl -s -o /dev/null -H 'Expect: 100-continue' -T "$WORK/upload" \
    "$EDGE_URL/upload" || fail "curl -T failed"
  slice
  check_edge
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 1 "exchanges of the upload"
  expect_true "Ds holds the request's body" \
    test "$(q "$DB" "SELECT ds >= 65536 FROM exchange")" = 1
  expect_true "the 201 came after the body: TFB >= T4" \
    test "$(q "$DB" "SELECT tfb_ns >= t4_ns FROM exchange")" = 1
  expect_eq "$(q "$DB" "SELECT interim_status || ' ' || status FROM exchange")" "100 201" \
    "the interim and the final status"
  expect_true "the 100 came between T3 and TFB" \
    test "$(q "$DB" "SELECT t3_ns <= interim_ns AND interim_ns <= tfb_ns FROM exchange")" = 1
  ;;
early)
  edge_server
  preload curl -s -o /dev/null -o /dev/null "$EDGE_URL/early" "$EDGE_URL/after" ||
    fail "curl failed"
  slice
  check_edge
  expect_eq "$(q "$DB" "SELECT group_concat(status) FROM (SELECT status FROM exchange ORDER BY seq)")" \
    "200,200" "statuses on the connection"
  expect_eq "$(q "$DB" "SELECT group_concat(coalesce(interim_status, '-')) FROM (SELECT interim_status FROM exchange ORDER BY seq)")" \
    "103,-" "interim statuses on the connection"
  # the server waits 10 ms between the 103 and the 200
  expect_true "the 103 came after T4 and before TFB" \
    test "$(q "$DB" "SELECT t4_ns <= interim_ns AND interim_ns < tfb_ns AND interim_wait_ms >= 0
                     FROM exchange_metrics WHERE path = '/early'")" = 1
  ;;
pipeline)
  make_site "$WORK/site"
  nginx_start "$WORK/site"
  preload "$PYTHON" - "$NGINX_PORT" <<'PY' || fail "the pipelining client failed"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /100b HTTP/1.1\r\nHost: a\r\n\r\n"
          b"HEAD /1m HTTP/1.1\r\nHost: a\r\n\r\n"
          b"GET /50k?secret=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
got = b""
while True:
    data = s.recv(65536)
    if not data:
        break
    got += data
assert got.count(b"HTTP/1.1 200") == 3, got[:200]
PY
  slice
  check_nginx
  expect_eq "$(q "$DB" "SELECT group_concat(method || ' ' || path, ', ') FROM (SELECT * FROM exchange ORDER BY seq)")" \
    "GET /100b, HEAD /1m, GET /50k" "the three requests"
  expect_eq "$(q "$DB" "SELECT count(DISTINCT t3_ns) FROM exchange")" 1 \
    "one send began all three (T3)"
  ;;
bodies)
  make_site "$WORK/site"
  nginx_start "$WORK/site"
  edge_server
  preload "$PYTHON" - "$NGINX_PORT" "$EDGE_PORT" <<'PY' || fail "the http.client client failed"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
c.request("HEAD", "/1m"); r = c.getresponse(); r.read(); etag = r.getheader("ETag")
c.request("GET", "/100b", headers={"If-None-Match": etag}); r = c.getresponse(); r.read()
assert r.status == 200, r.status
c.request("GET", "/50k", headers={"If-None-Match": '"nope"'}); r = c.getresponse(); r.read()
c.request("GET", "/1m", headers={"If-None-Match": etag}); r = c.getresponse(); r.read()
assert r.status == 304, r.status
c.request("GET", "/100b"); r = c.getresponse(); assert len(r.read()) == 100
c.close()
e = http.client.HTTPConnection("127.0.0.1", int(sys.argv[2]))
for path in ("/chunked", "/nothing", "/x", "/close"):
    e.request("GET", path); r = e.getresponse(); r.read()
e.close()
e = http.client.HTTPConnection("127.0.0.1", int(sys.argv[2]))
try:
    e.request("GET", "/empty"); e.getresponse()
except http.client.RemoteDisconnected:
    pass
PY
  slice
  check_nginx
  check_edge
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id
                         WHERE c.peer_port = $EDGE_PORT AND e.path = '/empty' AND e.status IS NULL")" 1 \
    "the empty reply: an exchange without a status"
  expect_eq "$(q "$DB" "SELECT dr FROM exchange WHERE path = '/close'")" \
    "$(printf 'HTTP/1.0 200 OK\r\n\r\nuntil the end' | wc -c)" "Dr of the body delimited by close"
  ;;
websocket)
  edge_server
  node --experimental-websocket --version >/dev/null 2>&1 || skip "node has no WebSocket client"
  preload node --experimental-websocket - "$EDGE_URL" <<'JS' 2>"$WORK/node.err" ||
const url = process.argv[2].replace("http:", "ws:") + "/ws";
const ws = new WebSocket(url);
let echoes = 0;
const timer = setTimeout(() => { console.error("timed out"); process.exit(1); }, 30000);
ws.onopen = () => { ws.send("GET / HTTP/1.1"); ws.send("Host: x"); };
ws.onmessage = () => { if (++echoes === 2) ws.close(1000); };
ws.onclose = () => { clearTimeout(timer); process.exit(echoes === 2 ? 0 : 1); };
ws.onerror = (e) => { console.error(e.message); process.exit(1); };
JS
    fail "the WebSocket client failed: $(tail -n 3 "$WORK/node.err")"
  slice
  check_edge
  expect_eq "$(q "$DB" "SELECT count(*) || ' ' || method || ' ' || path || ' ' || status FROM exchange")" \
    "1 GET /ws 101" "the upgrade, and no frame as a request"
  # node sent two messages (and a close), our server echoed them
  expect_eq "$(q "$DB" "SELECT websocket || ' ' || (ws_messages_sent >= 2) || ' ' || (ws_messages_received >= 2)
                         FROM connection_metrics WHERE peer_port = $EDGE_PORT")" \
    "1 1 1" "the connection marked WebSocket, messages counted each way"
  ;;
connect)
  need_cmd openssl
  make_site "$WORK/site"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
    fail "openssl could not make a certificate"
  TLS_PORT=$(free_port)
  export NGINX_EXTRA="listen 127.0.0.1:$TLS_PORT ssl;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;"
  nginx_start "$WORK/site"
  edge_server
  preload curl -s -o /dev/null --cacert "$WORK/cert.pem" -x "$EDGE_URL" \
    "https://127.0.0.1:$TLS_PORT/100b" || fail "curl through the proxy failed"
  slice
  nginx_settle
  expect_eq "$(q "$DB" "SELECT method || ' ' || host || ' ' || status FROM exchange WHERE seq = 1")" \
    "CONNECT 127.0.0.1:$TLS_PORT 200" "the CONNECT exchange"
  expect_eq "$(q "$DB" "SELECT tls FROM connection")" 1 "the connection is marked TLS"
  expect_eq "$(q "$DB" "SELECT tunnel || ' ' || websocket FROM connection_metrics")" \
    "127.0.0.1:$TLS_PORT 0" "the tunnel's target"
  # the tunnel's own request, read in the TLS library's plaintext, as
  # nginx logged it; the TLS records themselves are no request
  expect_eq "$(q "$DB" "SELECT e.method || ' ' || e.path || ' ' || e.status || ' ' || e.host
                        FROM exchange_metrics e WHERE e.seq > 1")" \
    "GET /100b 200 127.0.0.1:$TLS_PORT" "the tunnel's request, labelled"
  expect_eq "$(grep -c $'\tGET\t/100b\t200' "$NGINX_LOG")" 1 "nginx logged it once"
  expect_eq "$(q "$DB" "SELECT tls_version IS NOT NULL AND tls_ms > 0 FROM connection_metrics")" 1 \
    "the handshake in the tunnel: its version and time"
  ;;
*) fail "unknown case $case_" ;;
esac
