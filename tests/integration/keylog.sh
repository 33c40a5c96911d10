#!/usr/bin/env bash
# keylog.sh CASE - TLS 1.3 decrypted with the TLS key log on the event path
# (OBSERVE_CAPTURE=events; libobserve/tlskeys.c, core/tlsdec.c): clients
# whose TLS library is linked in (node's OpenSSL, Chromium's BoringSSL)
# against a TLS nginx, checked against nginx's own log
# (tests/lib/check_access.py --http: one exchange per request nginx logged,
# with its method, path and status):
#   node      node's https.get of three URLs (one with a query string)
#             over TLS 1.3, HTTP/1.1; the key log is the layer's own
#             (NODE_OPTIONS --tls-keylog, set by the layer)
#   chromium  headless Chromium loads a page of five resources over h2:
#             one exchange per stream, on connections marked TLS 1.3, h2
#   userfile  the user's own SSLKEYLOGFILE (curl --http2, a regular file):
#             it gets every line it gets without the layer (the same
#             labels, one line of each per connection), and the layer
#             decrypts from it
#   off       OBSERVE_TLS_KEYLOG=0: node's exchanges are runs of records
#             again, no label, no variable set
# In each case: no secret of the key log reaches the spool or the database
# (each secret's hex, and its bytes, searched for), and the tools say
# nothing.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
case_=${1:?case}
need_cmd openssl
export OBSERVE_CAPTURE=events
make_site "$WORK/site"
DB=$WORK/run.db
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
  fail "openssl could not make a certificate"
TLS_PORT=$(free_port)
H2_PORT=$(free_port)
while [ "$H2_PORT" = "$TLS_PORT" ]; do H2_PORT=$(free_port); done
export NGINX_EXTRA="listen 127.0.0.1:$TLS_PORT ssl; listen 127.0.0.1:$H2_PORT ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv1.3;"
nginx_start "$WORK/site"

# check PORT: the exchanges to PORT are nginx's requests, labelled
check() {
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$1" --http ||
    fail "the database does not match nginx's log (port $1)"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE peer_port = $1 AND (method IS NULL OR status IS NULL)")" 0 \
    "port $1: every exchange labelled"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE peer_port = $1")" "$(wc -l < "$NGINX_LOG")" \
    "port $1: one exchange per request nginx logged"
}

# no_secret KEYLOG: none of the secrets in KEYLOG (a key log's lines) is in
# the spool or the database, in hex or as bytes
no_secret() {
  local keylog=$1 n=0
  [ -s "$keylog" ] || fail "no key log lines to look for"
  "$PYTHON" - "$keylog" "$DB" "$SPOOL" <<'PY' || fail "a secret reached the spool or the database"
import os, sys
secrets = set()
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3:
        secrets.add(f[2].lower())
files = [sys.argv[2]] + [os.path.join(d, n) for d, _, ns in os.walk(sys.argv[3]) for n in ns]
for path in files:
    data = open(path, "rb").read()
    low = data.lower()
    for s in secrets:
        assert s.encode() not in low and bytes.fromhex(s) not in data, (path, s[:8])
print(f"{len(secrets)} secrets, none in {len(files)} files")
PY
  ok "no secret of the key log in the spool or the database"
}

quiet() {
  ! grep -E '^(observe|slicer)' "$1" || fail "the tools warned (above)"
}

# node_get URL...: node's https.get of each URL in turn, under the layer
node_get() {
  preload node - "$WORK/cert.pem" "$@" <<'JS'
const https = require('https'), fs = require('fs');
const [ca, ...urls] = process.argv.slice(2);
const agent = new https.Agent({ keepAlive: true, ca: fs.readFileSync(ca) });
(async () => {
  for (const u of urls) {
    await new Promise((ok, no) => https.get(u, { agent }, (r) => {
      r.on('data', () => {}); r.on('end', ok);
    }).on('error', no));
  }
  agent.destroy();
})().catch((e) => { console.error(e); process.exit(1); });
JS
}

case $case_ in
node)
  need_cmd node
  node_get "https://127.0.0.1:$TLS_PORT/100b" "https://127.0.0.1:$TLS_PORT/50k?k=SECRET" \
    "https://127.0.0.1:$TLS_PORT/1m" 2> "$WORK/node.err" || fail "node failed: $(cat "$WORK/node.err")"
  "$SLICER" -q -o "$DB" "$SPOOL" 2> "$WORK/slicer.err" || fail "slicer failed"
  quiet "$WORK/slicer.err"
  check "$TLS_PORT"
  expect_eq "$(q "$DB" "SELECT group_concat(method || ' ' || path || ' ' || status, ', ') FROM (SELECT * FROM exchange_metrics ORDER BY seq)")" \
    "GET /100b 200, GET /50k 200, GET /1m 200" "node's three requests, labelled, without the query"
  expect_eq "$(q "$DB" "SELECT count(*) || ' ' || tls || ' ' || tls_version || ' ' || protocol FROM connection")" \
    "1 1 1.3 http/1.1" "one connection, TLS 1.3, http/1.1"
  expect_true "Dr of /1m at least 1 MiB" [ "$(q "$DB" "SELECT dr FROM exchange WHERE path = '/1m'")" -ge 1048576 ]
  grep -q "tls-keylog" "$WORK/node.err" || fail "node did not say it writes a key log (the layer's)"
  # the user's own --tls-keylog: the layer reads that file, which gets
  # node's lines as without the layer; none of them is kept
  rm -rf "$SPOOL" "$DB"
  : > "$NGINX_LOG"
  NODE_OPTIONS="--tls-keylog=$WORK/node.keylog" node_get "https://127.0.0.1:$TLS_PORT/100b" \
    "https://127.0.0.1:$TLS_PORT/50k" 2>/dev/null || fail "node failed"
  "$SLICER" -q -o "$DB" "$SPOOL" || fail "slicer failed"
  check "$TLS_PORT"
  expect_eq "$(grep -c _TRAFFIC_SECRET_0 "$WORK/node.keylog")" 2 "node's own key log: its connection's two traffic secrets"
  no_secret "$WORK/node.keylog"
  ;;
chromium)
  command -v chromium >/dev/null 2>&1 || skip "chromium is not installed"
  : > "$NGINX_LOG"
  KEYLOG=$WORK/user.keylog
  SSLKEYLOGFILE=$KEYLOG "$OBSERVE" -q -o "$DB" -- timeout 90 chromium --headless --no-sandbox --disable-gpu \
    --disable-quic --no-first-run --disable-background-networking --disable-extensions \
    --disable-component-update --disable-sync --ignore-certificate-errors \
    --user-data-dir="$WORK/chromium" --dump-dom "https://127.0.0.1:$H2_PORT/index.html" \
    >"$WORK/dom.html" 2>"$WORK/chromium.log" || true
  grep -q "observe demo" "$WORK/dom.html" || fail "chromium did not load the page over TLS"
  quiet "$WORK/chromium.log"
  check "$H2_PORT"
  expect_eq "$(q "$DB" "SELECT count(DISTINCT stream) = count(*) FROM exchange_metrics WHERE stream > 0")" 1 \
    "one exchange per HTTP/2 stream"
  expect_eq "$(q "$DB" "SELECT group_concat(DISTINCT tls_version || ' ' || protocol) FROM connection c WHERE EXISTS (SELECT 1 FROM exchange e WHERE e.connection_id = c.id)")" \
    "1.3 h2" "its connections with exchanges TLS 1.3, h2"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE host = '127.0.0.1:$H2_PORT'")" "$(wc -l < "$NGINX_LOG")" \
    "each with its :authority"
  no_secret "$KEYLOG"
  ;;
userfile)
  need_cmd curl
  KEYLOG=$WORK/user.keylog
  SSLKEYLOGFILE=$WORK/bare.keylog curl -sSf --http2 --cacert "$WORK/cert.pem" -o /dev/null \
    "https://127.0.0.1:$H2_PORT/100b" || fail "curl failed"
  : > "$NGINX_LOG"
  SSLKEYLOGFILE=$KEYLOG "$OBSERVE" -q -o "$DB" -- curl -sSf --http2 --cacert "$WORK/cert.pem" \
    -o /dev/null -o /dev/null "https://127.0.0.1:$H2_PORT/100b" "https://127.0.0.1:$H2_PORT/50k" ||
    fail "curl failed"
  expect_eq "$(cut -d' ' -f1 "$KEYLOG" | sort | tr '\n' ' ')" "$(cut -d' ' -f1 "$WORK/bare.keylog" | sort | tr '\n' ' ')" \
    "the user's SSLKEYLOGFILE got the lines it gets without the layer"
  check "$H2_PORT"
  no_secret "$KEYLOG"
  ;;
off)
  need_cmd node
  : > "$NGINX_LOG"
  OBSERVE_TLS_KEYLOG=0 node_get "https://127.0.0.1:$TLS_PORT/100b" "https://127.0.0.1:$TLS_PORT/50k" \
    2> "$WORK/node.err" || fail "node failed"
  ! grep -q "tls-keylog" "$WORK/node.err" || fail "node was given a key log"
  "$SLICER" -q -o "$DB" "$SPOOL" || fail "slicer failed"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE method IS NOT NULL OR status IS NOT NULL")" 0 \
    "no label: node's TLS is record-level"
  OBSERVE_TLS_KEYLOG=0 preload env | grep -E '^(SSLKEYLOGFILE|OBSERVE_KEYLOG_PATH|NODE_OPTIONS)=' &&
    fail "a variable was set with OBSERVE_TLS_KEYLOG=0"
  ok "no variable set"
  ;;
*) die "unknown case $case_" ;;
esac
