#!/usr/bin/env bash
# otlp.sh - slicer export --format otlp on real traffic (curl over HTTP/1.1,
# HTTPS and HTTP/2, Python's http.client after a name lookup, against nginx),
# checked with OpenTelemetry's own protobuf definitions: the .proto files of
# opentelemetry-proto as @opentelemetry/otlp-grpc-exporter-base@0.38.0 ships
# them (the last version to ship the .proto files themselves), read by
# protobufjs (tests/slicer/check_otlp.js), both from npm into
# $BUILD/npm-otel once; then every exchange against its span
# (tests/slicer/check_otlp.py). Ids are the same in two exports and in an
# export of another database sliced from the same spools; no query string
# nor credential reaches the file; the filters and standard output work as
# for the other formats. Skipped (77) when npm cannot fetch its packages.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/otel.sh"
need_cmd node
need_cmd npm

otel_npm_fetch || skip "npm could not fetch $PROTOBUFJS and $PROTO_PACKAGE (offline? $NPM_DIR/npm.log)"

make_site "$WORK/site"
tls=0
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
    fail "openssl could not make a certificate"
  TLS_PORT=$(free_port)
  export NGINX_EXTRA="listen 127.0.0.1:$TLS_PORT ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;"
  tls=1
fi
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT

# one keep-alive connection with a query string and userinfo (curl sends
# them as the request target's query and an Authorization header), a 404;
# a name lookup (python's http.client); HTTPS over HTTP/1.1 and HTTP/2
preload curl -s -o /dev/null -o /dev/null -o /dev/null \
  "http://user:SECRETPASS@127.0.0.1:$NGINX_PORT/100b?token=SECRETTOKEN" "$URL/50k" "$URL/missing"
preload "$PYTHON" - "$NGINX_PORT" <<'PY'
import http.client, socket, sys
port = int(sys.argv[1])
# the name looked up for IPv4 only: the connect that uses the lookup is
# the one that works, wherever ::1 does not
ai = socket.getaddrinfo("localhost", port, socket.AF_INET, socket.SOCK_STREAM)[0]
conn = http.client.HTTPConnection("localhost", port)
conn.sock = socket.create_connection(ai[4])
conn.request("GET", "/1m?q=SECRETQUERY")
conn.getresponse().read()
PY
if [ "$tls" = 1 ]; then
  preload curl -sSf --http1.1 --cacert "$WORK/cert.pem" -o /dev/null "https://127.0.0.1:$TLS_PORT/100b?k=SECRETTLS"
  preload curl -sSf --http2 --cacert "$WORK/cert.pem" -o /dev/null -o /dev/null \
    "https://127.0.0.1:$TLS_PORT/50k" "https://127.0.0.1:$TLS_PORT/100b"
fi
DB=$WORK/run.db
"$SLICER" -q -o "$DB" "$SPOOL"
total=$(q "$DB" "SELECT count(*) FROM exchange")
expect_eq "$total" $((tls ? 7 : 4)) "exchanges recorded"

"$SLICER" export -d "$DB" --format otlp -o "$WORK/run.otlp.json"
otel_check "$WORK/run.otlp.json" "$WORK/decoded.json" || fail "the OTLP file is not OTLP/JSON"
"$PYTHON" "$REPO/tests/slicer/check_otlp.py" "$DB" "$WORK/decoded.json" ||
  fail "the spans do not match the database"
# the phases real traffic has: connects, python's lookup, the handshakes
"$PYTHON" - "$WORK/decoded.json.phases" "$tls" <<'PY' || fail "phase spans"
import json, sys
seen, tls = json.load(open(sys.argv[1])), sys.argv[2] == "1"
assert seen["socket connect"] == 2 + 2 * tls, seen  # connections
assert seen["DNS lookup"] >= 1, seen
assert seen["TLS client handshake"] == 2 * tls, seen
PY
ok "phase spans: $(cat "$WORK/decoded.json.phases")"

# no query string, password or header in the file
for secret in SECRETPASS SECRETTOKEN SECRETQUERY SECRETTLS \
  "$(printf user:SECRETPASS | base64)" '?' '@'; do
  if grep -qF -- "$secret" "$WORK/run.otlp.json"; then
    fail "'$secret' is in the export"
  fi
done
ok "no query string, userinfo or Authorization in the export"
grep -q '"stringValue":"404"' "$WORK/run.otlp.json" || fail "no error.type 404"

# stable ids: the same file twice; the same spans from another database
# sliced from the same spools; the file on standard output is the same
"$SLICER" export -d "$DB" --format otlp -o "$WORK/again.json"
cmp -s "$WORK/run.otlp.json" "$WORK/again.json" || fail "a second export differs"
"$SLICER" -q -o "$WORK/other.db"  # an empty database, rows ahead of ours:
q "$WORK/other.db" "INSERT INTO client(id, name) VALUES(7, 'padding');
  INSERT INTO process(id, client_id, pid, start_ns) VALUES(7, 7, 1, 1);
  INSERT INTO connection(id, process_id, seq) VALUES(7, 7, 1);"
"$SLICER" -q -o "$WORK/other.db" "$SPOOL"
"$SLICER" export -d "$WORK/other.db" --format otlp -o "$WORK/other.json"
"$PYTHON" - "$WORK/run.otlp.json" "$WORK/other.json" <<'PY' || fail "ids differ between databases"
import json, sys
def ids(f):
    r = json.load(open(f))
    return sorted((s["traceId"], s["spanId"], s.get("parentSpanId", ""))
                  for x in r["resourceSpans"] for y in x["scopeSpans"] for s in y["spans"])
a, b = ids(sys.argv[1]), ids(sys.argv[2])
assert a == b and len(a) > 0, (len(a), len(b))
print("otlp: the same", len(a), "span ids from another database")
PY
"$SLICER" export -d "$DB" --format otlp > "$WORK/stdout.json"
cmp -s "$WORK/run.otlp.json" "$WORK/stdout.json" || fail "standard output differs from -o"
ok "ids stable across exports and databases"

# the filters keep the same exchanges as for the other formats
python_program=$(q "$DB" "SELECT DISTINCT program FROM process WHERE program LIKE '%python%'")
"$SLICER" export -d "$DB" --format otlp --program "$python_program" --where 'dr > 10000' \
  -o "$WORK/python.json"
otel_check "$WORK/python.json" "$WORK/python.decoded.json" || fail "filtered OTLP file"
"$PYTHON" "$REPO/tests/slicer/check_otlp.py" "$DB" "$WORK/python.decoded.json" \
  --where "program = '$python_program' AND dr > 10000" || fail "filtered spans"
"$SLICER" export -d "$DB" --format otlp --where 'dr < 0' -o "$WORK/none.json"
otel_check "$WORK/none.json" "$WORK/none.decoded.json" || fail "an empty export"
set +e
"$SLICER" export -d "$DB" --format otlp --where 'dr >>> 1' -o "$WORK/bad.json" 2>"$WORK/err"
status=$?
set -e
expect_eq "$status" 2 "an invalid expression"
[ ! -e "$WORK/bad.json" ] || fail "a file was written for an invalid expression"
