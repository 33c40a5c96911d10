#!/usr/bin/env bash
# reuse.sh CASE - issue 13 item 10: a socket closed where close() is not
# called kept its state in the layer, and the next file on that fd number
# inherited it: reads of the file counted as received bytes. The client
# (hs_client) fetches /100b from nginx, closes the socket one way, opens
# nginx's 1 MB file (the same fd number comes back) and reads it whole.
#   fclose         fdopen'd socket closed by fclose: ends with it, T7 known
#   syscall-close  syscall(SYS_close) (Node.js does): the same
#   unseen-close   a system call no hook can see: the connection ends as
#                  'lost' (no T7) when the number comes back from open()
# Either way the file's bytes are never counted.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
case=$1
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

preload "$BUILD/bin/hs_client" "$case" "$NGINX_PORT" "$WORK/site/1m" > "$WORK/out" ||
  fail "the client failed: $(cat "$WORK/out")"
cat "$WORK/out"
grep -q 'opened on the same fd: 1048576 bytes read' "$WORK/out" ||
  fail "the file did not get the socket's fd number"
len=$(sed -n 's/^answer \([0-9]*\);.*/\1/p' "$WORK/out")
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) || ' ' || sum(dr) FROM exchange")" "1 $len" "one exchange, Dr the answer (not the file)"
case $case in
unseen-close) want="lost 0" ;;
*) want="client_close 1" ;;
esac
expect_eq "$(q "$DB" "SELECT end_class || ' ' || (t7_ns IS NOT NULL) FROM connection")" "$want" "end class, T7 known"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" ||
  fail "access log and database disagree"
