#!/usr/bin/env bash
# tokens.sh - issue 13 item 9: tokens in HTTP headers are never stored.
# The layer sees every byte a program sends and receives; of a request it
# keeps the method, the path before '?' and Host, of a response the
# status. Here the secrets are nowhere on the command line (so the argv
# redaction cannot be what hides them): curl reads its headers, body and
# URL from a config file (-K), a Python program builds them in code, and
# nginx answers with a Set-Cookie. No secret may appear in the spool
# files, the database (its -wal too), any export or the report.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
need_cmd gnuplot
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
NGINX_EXTRA='add_header Set-Cookie "sid=RespC00kieR7; HttpOnly";' nginx_start "$WORK/site"
DB=$WORK/run.db

cat > "$WORK/curl.cfg" <<CFG
silent
fail
output = "/dev/null"
header = "Authorization: Bearer T0kenHdrA1"
header = "Cookie: sid=C00kieHdrB2"
header = "X-Api-Key: ApiK3yHdrC3"
url = "http://127.0.0.1:$NGINX_PORT/100b?access_token=QueryT0kD4&x=1"
CFG
preload curl -K "$WORK/curl.cfg" || fail "curl failed"
cat > "$WORK/post.cfg" <<CFG
silent
output = "/dev/null"
header = "Proxy-Authorization: Basic UHJveHlQYXNzRTU="
data = "password=B0dyPassF6"
url = "http://127.0.0.1:$NGINX_PORT/100b"
CFG
preload curl -K "$WORK/post.cfg" || true   # nginx refuses POST to a file: 405
preload "$PYTHON" - "$NGINX_PORT" <<'PY' || fail "the python client failed"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for path in ("/100b?session=PyQueryG7#frag", "/50k"):
    c.request("GET", path, headers={"Authorization": "Token PyT0kenI9",
                                    "Cookie": "auth=PyC00kieJ0"})
    c.getresponse().read()
c.close()
PY
"$SLICER" -q -o "$DB" "$SPOOL"
nginx_settle
expect_eq "$(grep -c . "$NGINX_LOG")" 4 "requests nginx answered"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 4 "exchanges recorded"
"$SLICER" export -d "$DB" --format csv -o "$WORK/run.csv"
"$SLICER" export -d "$DB" --format jsonl -o "$WORK/run.jsonl"
"$SLICER" export -d "$DB" --format har -o "$WORK/run.har"
sqlite3 "$DB" .dump > "$WORK/dump.sql"
"$MANAGER" pull -q -o "$WORK/central.db" "$DB"
"$MANAGER" stats "$WORK/central.db" --by path > "$WORK/stats.txt"
"$MANAGER" report -q "$WORK/central.db" -o "$WORK/report"

secrets=(T0kenHdrA1 C00kieHdrB2 ApiK3yHdrC3 QueryT0kD4 UHJveHlQYXNzRTU ProxyPassE5
         B0dyPassF6 PyQueryG7 PyT0kenI9 PyC00kieJ0 RespC00kieR7)
files=("$SPOOL" "$DB" "$WORK/dump.sql" "$WORK/run.csv" "$WORK/run.jsonl" "$WORK/run.har"
       "$WORK/central.db" "$WORK/stats.txt" "$WORK/report")
for f in "$DB-wal" "$WORK/central.db-wal"; do [ ! -e "$f" ] || files+=("$f"); done
for secret in "${secrets[@]}"; do
  if grep -rqaF -- "$secret" "${files[@]}"; then
    fail "'$secret' is stored: $(grep -rlaF -- "$secret" "${files[@]}" | tr '\n' ' ')"
  fi
done
ok "none of ${#secrets[@]} secrets in the spools, databases, exports, stats or report"
expect_eq "$(q "$DB" "SELECT group_concat(coalesce(method, '-') || ' ' || path, ', ') FROM (SELECT method, path FROM exchange ORDER BY t3_ns)")" \
  "GET /100b, POST /100b, GET /100b, GET /50k" \
  "what is kept of the requests: method and path before '?'"
