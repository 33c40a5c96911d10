#!/usr/bin/env bash
# fortify.sh CLIENT - a client built with -O2 -D_FORTIFY_SOURCE=2 calls
# __read_chk/__recv_chk, which glibc never routes through read()/recv().
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
client=$1
nm -D "$client" | grep -q '__read_chk' || fail "$client does not import __read_chk"
nm -D "$client" | grep -q '__recv_chk' || fail "$client does not import __recv_chk"
ok "the client imports __read_chk and __recv_chk"
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db
got=$(preload "$client" "$NGINX_PORT" /50k 4)
expect_eq "$got" 204800 "body bytes the client read"
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE dr > 51200")" 4 "exchanges with the whole response"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" || fail "access log and database disagree"
