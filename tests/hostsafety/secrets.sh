#!/usr/bin/env bash
# secrets.sh - issue 13 item 9: what curl is given on its command line
# (-u user:password, Authorization and Cookie headers, URL userinfo, a query
# string with an API key) used to land whole in the spool header and in
# process.argv. Run real curl under the layer against nginx: the secrets
# must appear nowhere in the spool files, the database or its HAR export,
# and process.argv must read as the redaction rule (docs/layer.md,
# "Secrets") says; the tokens curl sends in its HTTP headers (the Basic
# credentials, the bearer token, the cookie) are never stored either.
# With "events" the layer records with OBSERVE_CAPTURE=events, and a path
# parameter (;jsessionid=...) must not be stored either.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

[ "${1:-}" = events ] && export OBSERVE_CAPTURE=events
url="http://bob:UrlPassQ7@127.0.0.1:$NGINX_PORT/100b?api_key=K3yQuery9&x=1"
preload curl -sf -o /dev/null -u alice:S3cretPass1 \
  -H 'Authorization: Bearer T0kenABC2' -H 'Cookie: sid=C00kieXYZ3' "$url" ||
  fail "curl failed"
"$SLICER" -q -o "$DB" "$SPOOL"
"$SLICER" export -d "$DB" --format har -o "$WORK/run.har"
sqlite3 "$DB" .dump > "$WORK/dump.sql"

basic=$(printf 'alice:S3cretPass1' | base64)
for secret in S3cretPass1 T0kenABC2 C00kieXYZ3 UrlPassQ7 K3yQuery9 "$basic"; do
  if grep -rqaF -- "$secret" "$SPOOL" "$WORK/dump.sql" "$WORK/run.har"; then
    fail "'$secret' is stored: $(grep -rlaF -- "$secret" "$SPOOL" "$WORK/dump.sql" "$WORK/run.har")"
  fi
done
ok "no secret in the spool, the database or the HAR"
expect_eq "$(q "$DB" "SELECT argv FROM process WHERE argv LIKE '%-u%'")" \
  "curl -sf -o /dev/null -u *** -H Authorization: *** -H Cookie: *** http://***@127.0.0.1:$NGINX_PORT/100b?***" \
  "process.argv, redacted"
expect_eq "$(q "$DB" "SELECT path || ' ' || status FROM exchange")" "/100b 200" "the request's path (no query) and status"
nginx_settle
expect_eq "$(cut -f6 "$NGINX_LOG")" "/100b?api_key=K3yQuery9&x=1" "nginx got the request as curl sent it"

if [ "${1:-}" = events ]; then
  # a path parameter: kept neither from the request nor from argv
  mkdir -m 0700 "$WORK/spool2"
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/spool2" \
    curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b;jsessionid=S3ssion4id" ||
    fail "curl failed"
  "$SLICER" -q -o "$WORK/s2.db" "$WORK/spool2"
  sqlite3 "$WORK/s2.db" .dump > "$WORK/s2.sql"
  if grep -rqaF S3ssion4id "$WORK/spool2" "$WORK/s2.sql"; then
    fail "the path parameter is stored"
  fi
  expect_eq "$(q "$WORK/s2.db" "SELECT path FROM exchange")" "/100b" "the path without its parameter"
fi
