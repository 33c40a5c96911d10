#!/usr/bin/env bash
# bench/keylog-late.sh [RUNS] [N] - how many of node's short TLS
# connections stay unlabelled on the event capture (OBSERVE_CAPTURE=events;
# docs/clients.md, L): node writes its key log's lines from its thread
# pool, and a connection of one small request may close before they come
# (the layer then keeps its end until they do). node https.get with
# agent: false (a connection a request, its own --tls-keylog through the
# layer) fetches 100 B N times (default 30) from a TLS 1.3 nginx on
# loopback, RUNS times (default 6); prints the exchanges and those without
# method or status. All traffic is to 127.0.0.1.
# Usage: bench/keylog-late.sh 6 30     (about half a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_NO_DEPS=1
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
runs=${1:-6}
n=${2:-30}
need_cmd node
make_site "$WORK/site"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
  die "openssl could not make a certificate"
export NODE_EXTRA_CA_CERTS=$WORK/cert.pem
port=$(free_port)
export NGINX_EXTRA="listen 127.0.0.1:$port ssl;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv1.3;"
nginx_start "$WORK/site"
cat > "$WORK/client.js" <<'JS'
const https = require('https');
const [url, n] = process.argv.slice(2);
(async () => {
  for (let i = 0; i < +n; i++)
    await new Promise((ok, no) => https.get(url, { agent: false }, (r) => {
      r.resume(); r.on('end', ok);
    }).on('error', no));
})();
JS
all=0 bare=0
for ((r = 0; r < runs; r++)); do
  rm -rf "$WORK/run.db" "$WORK/spool"
  OBSERVE_CAPTURE=events "$OBSERVE" -q -o "$WORK/run.db" -d "$WORK/spool" -- \
    node "$WORK/client.js" "https://127.0.0.1:$port/100b" "$n" 2> "$WORK/node.err" ||
    die "node failed: $(cat "$WORK/node.err")"
  all=$((all + $(q "$WORK/run.db" "SELECT count(*) FROM exchange")))
  bare=$((bare + $(q "$WORK/run.db" "SELECT count(*) FROM exchange WHERE method IS NULL OR status IS NULL")))
done
echo "node, $runs runs of $n requests, a connection each: $all exchanges, $bare without labels"
