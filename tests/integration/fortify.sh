#!/usr/bin/env bash
# fortify.sh CLIENT - a client built with -O2 -D_FORTIFY_SOURCE=2 calls
# __read_chk/__recv_chk, which glibc never routes through read()/recv().
# Each exchange's Ds and Dr must be exactly the bytes the client wrote and read.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
client=$1
[ -x "$client" ] || fail "no client binary $client"
nm -D "$client" | grep -q '__read_chk' || fail "$client does not import __read_chk"
nm -D "$client" | grep -q '__recv_chk' || fail "$client does not import __recv_chk"
ok "the client imports __read_chk and __recv_chk"
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db
preload "$client" "$NGINX_PORT" /50k 4 > "$WORK/out" || fail "the client failed"
expect_eq "$(sed -n 1p "$WORK/out")" 204800 "body bytes the client read"
raw=$(sed -n 2p "$WORK/out")
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 1 "connections"
# exchanges 1 and 3 were read with read() (__read_chk), 2 and 4 with recv() (__recv_chk)
expect_eq "$(q "$DB" "SELECT group_concat(dr, ' ') FROM (SELECT dr FROM exchange ORDER BY seq)")" "$raw" "Dr of each exchange = bytes the client read"
reqlen=$(printf 'GET /50k HTTP/1.1\r\nHost: x\r\n\r\n' | wc -c)
expect_eq "$(q "$DB" "SELECT group_concat(ds, ' ') FROM (SELECT ds FROM exchange ORDER BY seq)")" "$reqlen $reqlen $reqlen $reqlen" "Ds of each exchange"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE tfb_ns IS NOT NULL AND t6_ns >= tfb_ns AND t5_ns IS NOT NULL")" 4 "receive times recorded"
expect_eq "$(q "$DB" "SELECT end_class FROM connection")" client_close "end class"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" || fail "access log and database disagree"
