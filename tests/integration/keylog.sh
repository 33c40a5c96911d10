#!/usr/bin/env bash
# keylog.sh CASE - TLS 1.3 and 1.2 decrypted with the TLS key log on the event path
# (OBSERVE_CAPTURE=events; libobserve/tlskeys.c, core/tlsdec.c): clients
# whose TLS library is linked in (Chromium's BoringSSL, node's OpenSSL)
# against a TLS 1.3 nginx (1.2: the *-tls12 cases) on loopback, checked
# against nginx's own log:
#   - one exchange per request nginx logged (tests/lib/check_access.py
#     --http: matched on the client's port and the request's number on its
#     connection, with nginx's method, path without query, and status), one
#     per HTTP/2 stream, each with its host (127.0.0.1:PORT);
#   - every connection that carried an exchange marked with the TLS version and its
#     protocol (h2, http/1.1);
#   - no word from the tools;
#   - run again with the user's own key log (SSLKEYLOGFILE; node's
#     --tls-keylog): the same checks; that file gets the lines it gets
#     without the layer (each connection its labels, none blanked); none of
#     its secrets, nor the query string's token, is in the spool or the
#     database (searched for in hex and as bytes).
# Cases:
#   chromium-h2, chromium-http1  headless Chromium loads a page of seven
#             resources (one with a query string) over h2, over HTTP/1.1;
#             chromium-h2-tls12, chromium-http1-tls12: the same from a
#             server of TLS 1.2 (its master secret, CLIENT_RANDOM; over
#             HTTP/1.1 its later connections resume the first's session);
#             the layer's own key log is the one Chromium's browser opens
#             (SSLKEYLOGFILE, set by the layer) and hands to its network
#             service
#   node-https, node-fetch, node-http2  node's https.get (keep-alive),
#             fetch, and http2.connect: three requests, one with a query
#             string; the layer's key log through NODE_OPTIONS --tls-keylog;
#             with https, also from a node that a node started;
#             node-tls12: https from a server of TLS 1.2, with each of
#             its AEADs (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305)
#   userfile  curl --http2 with the user's SSLKEYLOGFILE (a regular file):
#             the same lines as without the layer, and decrypted from it
#   late      node writes each connection's key-log lines (to the user's
#             SSLKEYLOGFILE) only once that connection closed, as its
#             asynchronous --tls-keylog sometimes does: each is labelled
#             all the same (its end waits for its secrets), the last one
#             when node exits (small answers: a connection holds 1 MiB
#             while it awaits its secrets)
#   nokeys    node's key log where the layer cannot read it: the secrets
#             never come, the exchanges are runs of records, none lost
#   off       OBSERVE_TLS_KEYLOG=0: node's exchanges are runs of records
#             again, no label, no variable set
#   records   the default capture (no OBSERVE_CAPTURE): no variable set,
#             node and Chromium run as without it
# Waits are for conditions (the page's load event, nginx idle), never for
# a fixed time; all traffic is to 127.0.0.1.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/chromium.sh"
case_=${1:?case}
need_cmd openssl
if [ "$case_" = records ]; then unset OBSERVE_CAPTURE; else export OBSERVE_CAPTURE=events; fi
make_site "$WORK/site"
# the page with a query string: a token that must never be stored
sed 's/style\.css/style.css?token=QUERYSECRET/' "$WORK/site/index.html" > "$WORK/site/page.html"
DB=$WORK/run.db
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
  fail "openssl could not make a certificate"
export NODE_EXTRA_CA_CERTS=$WORK/cert.pem
H1_PORT=$(free_port)
H2_PORT=$(free_port)
while [ "$H2_PORT" = "$H1_PORT" ]; do H2_PORT=$(free_port); done
# the server's TLS version: 1.2 for the *-tls12 cases
VERSION=1.3
case $case_ in *-tls12) VERSION=1.2 ;; esac
export NGINX_EXTRA="listen 127.0.0.1:$H1_PORT ssl; listen 127.0.0.1:$H2_PORT ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv$VERSION;"
nginx_start "$WORK/site"

# observe, its spool kept in $SPOOL (searched for secrets)
OBS=("$OBSERVE" -q -o "$DB" -d "$SPOOL" --)

# fresh: a new run, its database, spool and nginx log empty
fresh() { rm -rf "$DB" "$SPOOL"; : > "$NGINX_LOG"; }

# quiet FILE: the tools said nothing in FILE
quiet() {
  ! grep -E '^(observe|slicer)' "$1" || fail "the tools warned (above)"
}

# check PORT PROTOCOL N: nginx logged N requests; the exchanges are those
# requests, labelled, on connections TLS $VERSION with PROTOCOL
check() {
  local port=$1 proto=$2 n=$3
  nginx_settle
  expect_eq "$(wc -l < "$NGINX_LOG")" "$n" "port $port: nginx logged the $n requests"
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$port" --http ||
    fail "the database does not match nginx's log (port $port)"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE peer_port = $port AND host = '127.0.0.1:$port' AND method IS NOT NULL AND path IS NOT NULL AND status IS NOT NULL")" "$n" \
    "port $port: $n exchanges, each with its method, path, status and host"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE peer_port = $port")" "$n" \
    "port $port: one exchange per request nginx logged"
  expect_eq "$(q "$DB" "SELECT group_concat(DISTINCT coalesce(tls_version, 'NULL') || ' ' || coalesce(protocol, 'NULL')) FROM connection c WHERE EXISTS (SELECT 1 FROM exchange e WHERE e.connection_id = c.id)")" \
    "$VERSION $proto" "port $port: its connections with exchanges TLS $VERSION, $proto"
  if [ "$proto" = h2 ]; then
    expect_eq "$(q "$DB" "SELECT count(DISTINCT connection_id || ':' || stream) FROM exchange WHERE stream > 0")" "$n" \
      "port $port: one exchange per HTTP/2 stream"
  else
    expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE stream > 0")" 0 "port $port: no stream over HTTP/1.1"
  fi
}

# no_secret KEYLOG: none of the secrets in KEYLOG (a key log's lines), nor
# the query's token, is in the spool or the database, in hex or as bytes
no_secret() {
  "$PYTHON" - "$1" "$DB" "$SPOOL" <<'PY' || fail "a secret reached the spool or the database"
import os, sys
secrets = {f[2].lower() for f in (l.split() for l in open(sys.argv[1])) if len(f) == 3}
assert secrets, "no key log lines to look for"
files = [sys.argv[2]] + [os.path.join(d, n) for d, _, ns in os.walk(sys.argv[3]) for n in ns]
for path in files:
    data = open(path, "rb").read()
    low = data.lower()
    assert b"querysecret" not in low, (path, "the query string")
    for s in secrets:
        assert s.encode() not in low and bytes.fromhex(s) not in data, (path, s[:8])
print(f"{len(secrets)} secrets, none in {len(files)} files")
PY
  ok "no secret of the key log, no query string, in the spool or the database"
}

# same_lines KEYLOG BARE: KEYLOG (written under the layer) is whole, and
# each of its connections (client_random) has the labels a connection has
# in BARE (written without the layer); it has a connection for each one
# nginx saw
same_lines() {
  "$PYTHON" - "$1" "$2" "$NGINX_LOG" <<'PY' || fail "the user's key log is not what it is without the layer"
import collections, sys
def conns(path):
    data = open(path, "rb").read()
    assert b"\0" not in data, f"{path}: bytes blanked"
    by = collections.defaultdict(set)
    for line in data.decode().splitlines():
        label, random, secret = line.split()
        assert len(random) == 64 and len(secret) in (64, 96), line[:40]
        by[random].add(label)
    return by
mine, bare = conns(sys.argv[1]), conns(sys.argv[2])
seen = {l.split("\t")[1] for l in open(sys.argv[3])}
assert {frozenset(v) for v in mine.values()} == {frozenset(v) for v in bare.values()}, \
    (sorted(map(sorted, mine.values())), sorted(map(sorted, bare.values())))
assert len(mine) >= len(seen), (len(mine), len(seen))
print(f"{len(mine)} connections, each with the {len(next(iter(bare.values())))} lines of a bare run's")
PY
  ok "the user's key log has every line it has without the layer"
}

# chromium_load PORT [observe]: headless Chromium loads page.html from
# PORT (with observe, into $DB); its stderr and the tools' in $WORK/chromium.log
chromium_load() {
  local url=https://127.0.0.1:$1/page.html run=()
  [ "${2:-}" = observe ] && run=("${OBS[@]}")
  rm -rf "$WORK/profile"
  "${run[@]}" timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --ignore-certificate-errors \
    --user-data-dir="$WORK/profile" --dump-dom "$url" > "$WORK/dom.html" 2> "$WORK/chromium.log" || true
  grep -q "observe demo" "$WORK/dom.html" || fail "chromium did not load $url: $(tail -3 "$WORK/chromium.log")"
}

# node MODE URL... ("${NODE_CLIENT[@]}" MODE URL...): node fetches each URL
# in turn (MODE https: https.get with a keep-alive agent; fetch; http2: one
# session, the requests at once); the CA is NODE_EXTRA_CA_CERTS
cat > "$WORK/client.js" <<'JS'
const https = require('https'), http2 = require('http2');
const [mode, ...urls] = process.argv.slice(2);
const drain = (r, ok) => { r.on('data', () => {}); r.on('end', ok); };
async function main() {
  if (mode === 'https') {
    const agent = new https.Agent({ keepAlive: true });
    for (const u of urls)
      await new Promise((ok, no) => https.get(u, { agent }, (r) => drain(r, ok)).on('error', no));
    agent.destroy();
  } else if (mode === 'fetch') {
    for (const u of urls) await (await fetch(u)).arrayBuffer();
  } else {
    const s = http2.connect(new URL(urls[0]).origin);
    await Promise.all(urls.map((u) => new Promise((ok, no) => {
      const url = new URL(u), r = s.request({ ':path': url.pathname + url.search });
      r.on('error', no); drain(r, ok); r.end();
    })));
    s.close();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
JS
NODE_CLIENT=(node "$WORK/client.js")

case $case_ in
chromium-h2 | chromium-http1 | chromium-h2-tls12 | chromium-http1-tls12)
  command -v chromium >/dev/null 2>&1 || skip "chromium is not installed"
  port=$H2_PORT proto=h2
  case $case_ in chromium-http1*) port=$H1_PORT proto=http/1.1 ;; esac
  # bare, with the user's key log: the lines it gets without the layer
  SSLKEYLOGFILE=$WORK/bare.keylog chromium_load "$port"
  # the layer's own key log
  fresh
  chromium_load "$port" observe
  quiet "$WORK/chromium.log"
  check "$port" "$proto" 8
  # the user's own
  fresh
  SSLKEYLOGFILE=$WORK/user.keylog chromium_load "$port" observe
  quiet "$WORK/chromium.log"
  check "$port" "$proto" 8
  same_lines "$WORK/user.keylog" "$WORK/bare.keylog"
  no_secret "$WORK/user.keylog"
  ;;
node-https | node-fetch | node-http2 | node-tls12)
  need_cmd node
  skip_if_sanitized "node has an OpenSSL of its own: a sanitized layer does not load libcrypto.so.3 beside it"
  mode=${case_#node-} port=$H1_PORT proto=http/1.1
  [ "$mode" = tls12 ] && mode=https
  [ "$mode" = http2 ] && port=$H2_PORT proto=h2
  urls=("https://127.0.0.1:$port/100b" "https://127.0.0.1:$port/50k?token=QUERYSECRET"
    "https://127.0.0.1:$port/1m")
  NODE_OPTIONS="--tls-keylog=$WORK/bare.keylog" "${NODE_CLIENT[@]}" "$mode" "${urls[@]}" 2>/dev/null ||
    fail "node failed without the layer"
  # the layer's own key log (node says it writes one: its warning)
  fresh
  "${OBS[@]}" "${NODE_CLIENT[@]}" "$mode" "${urls[@]}" 2> "$WORK/node.err" ||
    fail "node failed: $(cat "$WORK/node.err")"
  quiet "$WORK/node.err"
  grep -q "tls-keylog" "$WORK/node.err" || fail "node did not say it writes a key log (the layer's)"
  check "$port" "$proto" 3
  expect_eq "$(q "$DB" "SELECT group_concat(path, ' ') FROM (SELECT path FROM exchange ORDER BY t3_ns)")" \
    "/100b /50k /1m" "node's three requests, without the query"
  expect_true "Dr of /1m at least 1 MiB" [ "$(q "$DB" "SELECT dr FROM exchange WHERE path = '/1m'")" -ge 1048576 ]
  # what the layer decrypted (its report at each connection's end): the
  # heads and frames it reads, not the bodies, so under a tenth of what
  # came
  fresh
  OBSERVE_LOG=2 "${OBS[@]}" "${NODE_CLIENT[@]}" "$mode" "${urls[@]}" 2> "$WORK/node.info" ||
    fail "node failed: $(cat "$WORK/node.info")"
  "$PYTHON" - "$WORK/node.info" <<'PY' || fail "the layer decrypted more than it reads (above)"
import re, sys
got = [tuple(map(int, m)) for m in re.findall(r"TLS decrypted: (\d+) of (\d+) bytes received", open(sys.argv[1]).read())]
dec, rec = sum(d for d, _ in got), sum(r for _, r in got)
print(f"decrypted {dec} of {rec} bytes received, {len(got)} connections")
sys.exit(0 if got and rec > 1048576 and dec * 10 < rec else 1)
PY
  # the user's own --tls-keylog
  fresh
  NODE_OPTIONS="--tls-keylog=$WORK/user.keylog" "${OBS[@]}" \
    "${NODE_CLIENT[@]}" "$mode" "${urls[@]}" 2> "$WORK/node.err" || fail "node failed: $(cat "$WORK/node.err")"
  quiet "$WORK/node.err"
  check "$port" "$proto" 3
  same_lines "$WORK/user.keylog" "$WORK/bare.keylog"
  no_secret "$WORK/user.keylog"
  if [ "$case_" = node-tls12 ]; then
    # each of TLS 1.2's AEADs, asked for: the same
    for cipher in ECDHE-RSA-AES128-GCM-SHA256 ECDHE-RSA-AES256-GCM-SHA384 \
      ECDHE-RSA-CHACHA20-POLY1305; do
      fresh
      NODE_OPTIONS="--tls-cipher-list=$cipher" "${OBS[@]}" "${NODE_CLIENT[@]}" "$mode" "${urls[@]}" \
        2> "$WORK/node.err" || fail "node failed with $cipher: $(cat "$WORK/node.err")"
      quiet "$WORK/node.err"
      check "$port" "$proto" 3
      ok "decrypted with $cipher"
    done
  fi
  if [ "$mode" = https ]; then
    # a node that node started: it writes its secrets where its own layer
    # reads (the parent's --tls-keylog replaced), its requests labelled
    fresh
    "${OBS[@]}" node -e 'const r = require("child_process").spawnSync(process.execPath,
      process.argv.slice(1), { stdio: "inherit" }); process.exit(r.status)' \
      "$WORK/client.js" https "${urls[@]}" 2> "$WORK/node.err" || fail "node's child failed: $(cat "$WORK/node.err")"
    quiet "$WORK/node.err"
    check "$port" "$proto" 3
  fi
  ;;
userfile)
  need_cmd curl
  SSLKEYLOGFILE=$WORK/bare.keylog curl -sSf --http2 --cacert "$WORK/cert.pem" -o /dev/null \
    "https://127.0.0.1:$H2_PORT/100b" || fail "curl failed"
  fresh
  SSLKEYLOGFILE=$WORK/user.keylog "${OBS[@]}" curl -sSf --http2 --cacert "$WORK/cert.pem" \
    -o /dev/null -o /dev/null "https://127.0.0.1:$H2_PORT/100b" "https://127.0.0.1:$H2_PORT/50k?token=QUERYSECRET" ||
    fail "curl failed"
  check "$H2_PORT" h2 2
  same_lines "$WORK/user.keylog" "$WORK/bare.keylog"
  no_secret "$WORK/user.keylog"
  ;;
late)
  need_cmd node
  skip_if_sanitized "node has an OpenSSL of its own: a sanitized layer does not load libcrypto.so.3 beside it"
  cat > "$WORK/late.js" <<'JS'
const https = require('https'), fs = require('fs');
async function main() {
  for (const u of process.argv.slice(2)) {
    const lines = [];
    await new Promise((ok, no) => {
      https.get(u, { agent: false }, (r) => r.resume())
        .on('socket', (s) => { s.on('keylog', (l) => lines.push(l)); s.on('close', ok); })
        .on('error', no);
    });
    fs.appendFileSync(process.env.SSLKEYLOGFILE, Buffer.concat(lines));
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
JS
  fresh
  : > "$WORK/user.keylog"
  NODE_OPTIONS=--tls-keylog=/dev/null SSLKEYLOGFILE=$WORK/user.keylog "${OBS[@]}" node "$WORK/late.js" \
    "https://127.0.0.1:$H1_PORT/100b" "https://127.0.0.1:$H1_PORT/50k?token=QUERYSECRET" \
    "https://127.0.0.1:$H1_PORT/100b" 2> "$WORK/node.err" || fail "node failed: $(cat "$WORK/node.err")"
  quiet "$WORK/node.err"
  expect_eq "$(grep -c CLIENT_TRAFFIC_SECRET_0 "$WORK/user.keylog")" 3 "node wrote the lines of three connections"
  check "$H1_PORT" http/1.1 3
  expect_eq "$(q "$DB" "SELECT count(DISTINCT connection_id) FROM exchange")" 3 "a connection each"
  no_secret "$WORK/user.keylog"
  ;;
nokeys)
  # node writes its key log where the layer does not read (not a regular
  # file): its connection awaits secrets that never come, and is runs of
  # records, one exchange per request as on the default capture
  need_cmd node
  fresh
  NODE_OPTIONS=--tls-keylog=/dev/null "${OBS[@]}" "${NODE_CLIENT[@]}" https "https://127.0.0.1:$H1_PORT/100b" \
    "https://127.0.0.1:$H1_PORT/50k" "https://127.0.0.1:$H1_PORT/1m" 2> "$WORK/node.err" ||
    fail "node failed: $(cat "$WORK/node.err")"
  quiet "$WORK/node.err"
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$H1_PORT" ||
    fail "the database does not match nginx's log"
  expect_eq "$(q "$DB" "SELECT count(*) || ' ' || count(method) || ' ' || count(status) FROM exchange")" "3 0 0" \
    "three exchanges, runs of records, no label"
  ;;
off)
  need_cmd node
  fresh
  OBSERVE_TLS_KEYLOG=0 preload "${NODE_CLIENT[@]}" https "https://127.0.0.1:$H1_PORT/100b" \
    "https://127.0.0.1:$H1_PORT/50k" 2> "$WORK/node.err" || fail "node failed"
  ! grep -q "tls-keylog" "$WORK/node.err" || fail "node was given a key log"
  "$SLICER" -q -o "$DB" "$SPOOL" || fail "slicer failed"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE method IS NOT NULL OR status IS NOT NULL")" 0 \
    "no label: node's TLS is record-level"
  ! OBSERVE_TLS_KEYLOG=0 preload env | grep -E '^(SSLKEYLOGFILE|OBSERVE_KEYLOG_PATH|NODE_OPTIONS)=' ||
    fail "a variable was set with OBSERVE_TLS_KEYLOG=0"
  ok "no variable set"
  ;;
records)
  need_cmd node
  ! preload env | grep -E '^(SSLKEYLOGFILE|OBSERVE_KEYLOG_PATH|NODE_OPTIONS)=' ||
    fail "a variable was set on the default capture"
  ok "no variable set on the default capture"
  fresh
  preload "${NODE_CLIENT[@]}" https "https://127.0.0.1:$H1_PORT/100b" 2> "$WORK/node.err" || fail "node failed"
  ! grep -q "tls-keylog" "$WORK/node.err" || fail "node was given a key log"
  "$SLICER" -q -o "$DB" "$SPOOL" || fail "slicer failed"
  nginx_settle
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$H1_PORT" ||
    fail "the database does not match nginx's log"
  ;;
*) die "unknown case $case_" ;;
esac
