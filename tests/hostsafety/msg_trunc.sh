#!/usr/bin/env bash
# msg_trunc.sh - issue 13 item 4: recv(fd, NULL, n, MSG_TRUNC) on TCP drops
# the bytes and writes nothing; the layer must not read the caller's buffer
# (it used to, and the program died of SIGSEGV). Five answers from nginx on
# one connection: the first read, the others discarded with a NULL buffer
# through recv, recvfrom, recvmsg and recvmmsg. The program must run to its
# end, and every answer must be counted whole.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

preload "$BUILD/bin/hs_client" trunc "$NGINX_PORT" > "$WORK/out" 2>&1 ||
  fail "the client died under the layer (status $?): $(cat "$WORK/out")"
cat "$WORK/out"
expect_eq "$(grep -c 'MSG_TRUNC NULL discarded' "$WORK/out")" 4 "answers discarded with a NULL buffer"
"$SLICER" -q -o "$DB" "$SPOOL"
len=$(sed -n 's/^read //p' "$WORK/out")
expect_eq "$(q "$DB" "SELECT group_concat(dr, ' ') FROM (SELECT dr FROM exchange ORDER BY seq)")" \
  "$len $len $len $len $len" "Dr of each exchange: the whole answer, discarded or not"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" ||
  fail "access log and database disagree"
