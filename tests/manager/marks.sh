#!/usr/bin/env bash
# marks.sh - issue 16 item 4: work that adds nothing costs nearly nothing,
# and rows in flight are still brought up to date. The slicer resumes a
# spool at its mark (table ingest_mark), manager pull a source at its mark
# (table pull_mark); both re-read what was in flight.
# 1. A Python client, 2 keep-alive connections, 3,000 requests, then it
#    waits: slice and pull while its connections are open (in flight in
#    both databases); slice and pull again (nothing new: the marks stay,
#    the counts too). Then 3,000 requests more and the client exits: slice
#    and pull again: 6,000 exchanges, each complete, both connections
#    complete with their end, in the client's database and the central one,
#    as many as nginx's log holds.
# 2. Another database under the same name (a new client database in the
#    same file): pulled in full, not from the old mark.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/client.db
C=$WORK/central.db

# 1
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" OBSERVE_CLIENT=alpha \
  "$PYTHON" "$REPO/tests/lib/pausing_client.py" "$NGINX_PORT" "$WORK/go" 3000 > "$WORK/client.out" 2> "$WORK/client.err" &
client=$!
at_exit "kill $client 2>/dev/null"
_waiting() { grep -qs waiting "$WORK/client.out"; }
wait_until 120 _waiting || fail "the client did not reach its pause: $(cat "$WORK/client.err")"
"$SLICER" -q -o "$DB" "$SPOOL"
"$MANAGER" pull -q -o "$C" "$DB"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection WHERE complete = 0")" 2 "connections in flight in the client database"
# recorded as records, each connection's last exchange is in flight (its
# response may go on); as events, an answered exchange is complete: the
# core read where its response ended
if [ "${OBSERVE_CAPTURE:-}" = events ]; then complete=3000; else complete=2998; fi
expect_eq "$(q "$C" "SELECT count(*) || ' ' || sum(complete) FROM exchange")" "3000 $complete" \
  "central: exchanges, complete (as each path knows it)"
mark=$(q "$DB" "SELECT next_offset || ' ' || length(pending) FROM ingest_mark")
pmark=$(q "$C" "SELECT conn_from || ' ' || exch_from FROM pull_mark")
"$SLICER" -q -o "$DB" "$SPOOL"
"$MANAGER" pull -q -o "$C" "$DB"
expect_eq "$(q "$DB" "SELECT next_offset || ' ' || length(pending) FROM ingest_mark")" "$mark" "the slicer's mark, nothing new"
expect_eq "$(q "$C" "SELECT conn_from || ' ' || exch_from FROM pull_mark")" "$pmark" "the pull's mark, nothing new"
read -r next pending <<<"$mark"
# the connections' records and the last exchange of each: in flight
[ "$pending" -ge $((2 * 8)) ] || fail "the slicer's mark keeps $pending bytes of pending offsets, expected the 2 connections"
ok "the slicer's mark: offset $next, $((pending / 8)) records in flight"
read -r kfrom xfrom <<<"$pmark"
expect_eq "$kfrom" 1 "the pull's mark: the first connection (in flight)"
[ "$xfrom" -gt 2990 ] || fail "the pull's mark starts at exchange $xfrom: the complete ones are read again"
ok "the pull's mark: connection $kfrom, exchange $xfrom"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange")" 3000 "central: exchanges after pulling again"
touch "$WORK/go"
wait "$client" || fail "the client failed: $(cat "$WORK/client.err")"
nginx_wait_log 6000
"$SLICER" -q -o "$DB" "$SPOOL"
"$MANAGER" pull -q -o "$C" "$DB"
logged=$(awk -F'\t' '$6 == "/100b" && $7 == 200' "$NGINX_LOG" | wc -l)
expect_eq "$logged" 6000 "requests in nginx's log"
for db in "$DB" "$C"; do
  expect_eq "$(q "$db" "SELECT count(*) || ' ' || sum(complete) || ' ' || sum(status = 200) || ' ' || count(t6_ns) FROM exchange")" \
    "6000 6000 6000 6000" "$(basename "$db"): exchanges, complete, 200, with T6"
  expect_eq "$(q "$db" "SELECT count(*) || ' ' || sum(complete) || ' ' || count(t7_ns) FROM connection")" "2 2 2" \
    "$(basename "$db"): connections, complete, with T7"
done
expect_eq "$(q "$DB" "SELECT count(*) FROM ingest_mark WHERE pending IS NULL")" 1 "the slicer's mark: nothing in flight"
expect_eq "$(q "$C" "SELECT exch_from FROM pull_mark")" "$(( $(q "$DB" "SELECT max(id) FROM exchange") + 1 ))" \
  "the pull's mark: past the last exchange"

# 2
rm -f "$DB" "$DB"-wal "$DB"-shm
rm -rf "${SPOOL:?}"/*
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" OBSERVE_CLIENT=beta curl -sf -o /dev/null -o /dev/null \
  "$NGINX_URL/100b" "$NGINX_URL/100b"
"$SLICER" -q -o "$DB" "$SPOOL"
"$MANAGER" pull -q -o "$C" "$DB"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange_metrics WHERE client = 'beta'")" 2 \
  "another database under the same name: its rows from the first"
