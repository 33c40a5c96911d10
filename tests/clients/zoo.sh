#!/usr/bin/env bash
# zoo.sh CLIENT - one client of the zoo (tests/clients/defs/CLIENT.sh), run
# unchanged against a real nginx, first bare, then under the layer, in each
# of its scenarios:
#   plain  HTTP/1.1 over TCP
#   tls    HTTP/1.1 over TLS (a certificate made here; ALPN offers http/1.1)
#   h2     HTTP/2 over TLS (ALPN offers h2 and http/1.1)
#   h2c    HTTP/2 over TCP, prior knowledge (no upgrade)
# The observed run is sliced and checked against nginx's access log by
# check.py (one exchange per request, method/path/status, no negative
# duration, Dr within what nginx sent, every connection ended, the exit
# status and the requests of the bare run); tests/clients/expected.txt lists
# the failures known today: any other failure fails the test, and so does a
# known failure that no longer happens.
# Exit status 0 when all is as expected, 1 otherwise, 77 when the client is
# not installed. KEEP_WORK=1 keeps the work directory (spools, databases,
# logs, the clients' output).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"

client=${1:?usage: zoo.sh CLIENT}
ZOO_DIR=$REPO/tests/clients
def=$ZOO_DIR/defs/$client.sh
[ -f "$def" ] || die "no client definition $def"

# --- the definition: what it needs, its scenarios, how it runs -------------
# A definition (bash, sourced) sets
#   ZOO_NEED      commands that must exist (else the test is skipped)
#   ZOO_PACKAGE   the Debian package, named in the skip message
#   ZOO_SCENARIOS which of plain, tls, h2, h2c it runs (default "plain tls")
#   ZOO_TIMEOUT   seconds a run may take (default 60; then it is killed)
#   ZOO_SAME      all (default) or distinct: see check.py's "same"
# and defines zoo_run SCENARIO URL... (below); optionally zoo_version (one
# line), zoo_probe (fails, saying why, when the client cannot run here) and
# zoo_prepare (run once, bare, e.g. to compile).
ZOO_NEED=() ZOO_PACKAGE="" ZOO_SCENARIOS="plain tls" ZOO_TIMEOUT=60 ZOO_SAME=all
source "$def"
declare -F zoo_run >/dev/null || die "$def defines no zoo_run"
for cmd in "${ZOO_NEED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 ||
    skip "$client: $cmd is not installed (Debian package ${ZOO_PACKAGE:-?}; scripts/deps.sh installs it)"
done
if declare -F zoo_probe >/dev/null && ! why=$(zoo_probe 2>&1); then
  skip "$client: not usable here: $why (Debian package ${ZOO_PACKAGE:-?})"
fi
if declare -F zoo_version >/dev/null; then
  echo "client: $client: $(zoo_version 2>&1 | head -n 1)"
fi

# --- nginx: plain, TLS (HTTP/1.1), TLS with HTTP/2, h2c ---------------------
need_cmd openssl
make_site "$WORK/site"
# (127.0.0.1 as the common name and as a DNS name too: lynx and w3m compare
# the host with those, not with the IP address entry)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:127.0.0.1 2>/dev/null ||
  fail "openssl could not make a certificate"
TLS_PORT=$(free_port)
H2_PORT=$(free_port)
H2C_PORT=$(free_port)
while [ "$H2_PORT" = "$TLS_PORT" ]; do H2_PORT=$(free_port); done
while [ "$H2C_PORT" = "$TLS_PORT" ] || [ "$H2C_PORT" = "$H2_PORT" ]; do H2C_PORT=$(free_port); done
ZOO_LOG=$WORK/nginx/logs/zoo.log
# The fields of tests/lib/nginx.sh's log, then 11 $bytes_sent (headers and
# body), 12 $server_port, 13 $server_protocol, 14 $ssl_protocol.
export NGINX_HTTP_EXTRA="log_format zoo \"\$remote_addr\t\$remote_port\t\$connection\t\$connection_requests\t\$request_method\t\$request_uri\t\$status\t\$body_bytes_sent\t\$request_time\t\$msec\t\$bytes_sent\t\$server_port\t\$server_protocol\t\$ssl_protocol\";"
export NGINX_EXTRA="access_log $ZOO_LOG zoo;
    listen 127.0.0.1:$TLS_PORT ssl; listen 127.0.0.1:$H2_PORT ssl http2;
    listen 127.0.0.1:$H2C_PORT http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;"
nginx_start "$WORK/site" "$WORK/nginx"

# zoo_idle: until nginx holds no connection but the one asking (30 s at
# most; a warning then): every request the client made is then in the
# access log, and none of its connections is left for the next run.
_zoo_nginx_alone() {
  curl -s -m 10 "http://127.0.0.1:$NGINX_PORT/.nginx-status" 2>/dev/null |
    grep -q '^Active connections: 1 *$'
}
zoo_idle() {
  wait_until 30 _zoo_nginx_alone || echo "warning: nginx still holds connections of the client" >&2
}

# --- the runs ----------------------------------------------------------------
# What a definition's zoo_run sees (it runs in a bash of its own, in an empty
# directory $ZOO_OUT, with its own $HOME; $ZOO_CACHE keeps what zoo_prepare
# made): zoo_run SCENARIO URL... where the
# URLs are the scenario's server's /100b, /50k?q=zoo (a query string) and
# /1m (100 B, 51,200 B, 1,048,576 B). Its exit status is the client's.
export ZOO_DIR ZOO_CERT=$WORK/cert.pem ZOO_PY=/usr/bin/python3 HOME=$WORK/home
export ZOO_DEF=$def ZOO_OUT=$WORK/out ZOO_CACHE=$WORK/cache
mkdir -p "$HOME" "$ZOO_CACHE"
if declare -F zoo_prepare >/dev/null; then  # e.g. compile, once, bare
  zoo_prepare || fail "$client: could not prepare the client (zoo_prepare)"
fi
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy

# zoo_each COMMAND [ARG...] -- URL...: for a client that takes one URL a
# run: COMMAND ARG... URL for each URL in turn; the exit status is the last
# failure's, 0 if none failed. (For the definitions: exported.)
zoo_each() {
  local cmd=() url rc=0
  while [ "$1" != -- ]; do cmd+=("$1"); shift; done
  shift
  for url; do "${cmd[@]}" "$url" || rc=$?; done
  return "$rc"
}
export -f zoo_each

# run_client bare|observed SCENARIO URL...: one run, bounded by ZOO_TIMEOUT;
# sets RC. Output goes to $WORK/SCENARIO.MODE.{out,err}.
run_client() {
  local mode=$1 scenario=$2; shift 2
  local preload=()
  [ "$mode" = observed ] && preload=(LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/spool.$scenario")
  : > "$ZOO_LOG"
  rm -rf "$ZOO_OUT" && mkdir -p "$ZOO_OUT"
  set +e
  (cd "$ZOO_OUT" && env "${preload[@]}" timeout -k 5 "$ZOO_TIMEOUT" \
    bash -c 'source "$ZOO_DEF"; zoo_run "$@"' zoo "$scenario" "$@" \
    </dev/null >"$WORK/$scenario.$mode.out" 2>"$WORK/$scenario.$mode.err")
  RC=$?
  set -e
  zoo_idle
  cp "$ZOO_LOG" "$WORK/$scenario.$mode.log"
}

failed=0
for scenario in $ZOO_SCENARIOS; do
  case $scenario in
    plain) base=http://127.0.0.1:$NGINX_PORT port=$NGINX_PORT ;;
    tls) base=https://127.0.0.1:$TLS_PORT port=$TLS_PORT ;;
    h2) base=https://127.0.0.1:$H2_PORT port=$H2_PORT ;;
    h2c) base=http://127.0.0.1:$H2C_PORT port=$H2C_PORT ;;
    *) die "$def: unknown scenario $scenario" ;;
  esac
  urls=("$base/100b" "$base/50k?q=zoo" "$base/1m")
  echo "== $client $scenario: bare"
  run_client bare "$scenario" "${urls[@]}"
  rc_bare=$RC
  echo "   exit $rc_bare, $(wc -l < "$WORK/$scenario.bare.log") requests in nginx's log"
  echo "== $client $scenario: under the layer"
  run_client observed "$scenario" "${urls[@]}"
  rc_observed=$RC
  echo "   exit $rc_observed, $(wc -l < "$WORK/$scenario.observed.log") requests in nginx's log"
  mkdir -p "$WORK/spool.$scenario"
  "$SLICER" -q -o "$WORK/$scenario.db" "$WORK/spool.$scenario" ||
    echo "warning: the slicer failed on $WORK/spool.$scenario" >&2
  "$PYTHON" "$ZOO_DIR/check.py" --client "$client" --scenario "$scenario" \
    --db "$WORK/$scenario.db" --log "$WORK/$scenario.observed.log" \
    --bare-log "$WORK/$scenario.bare.log" --port "$port" \
    --exit "$rc_bare" "$rc_observed" --expected "$ZOO_DIR/expected.txt" \
    --scenarios "$ZOO_SCENARIOS" --defs "$ZOO_DIR/defs" --same "$ZOO_SAME" || failed=1
done
if [ "$failed" = 1 ]; then
  echo "client output: KEEP_WORK=1 keeps $WORK (SCENARIO.MODE.out/.err)" >&2
  fail "$client: the zoo's checks differ from tests/clients/expected.txt"
fi
ok "$client: every check as tests/clients/expected.txt says"
