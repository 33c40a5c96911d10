#!/usr/bin/env bash
# rollover.sh - issue 16 item 3: no cap that loses data. A spool that
# fills its segment (OBSERVE_SPOOL_SEGMENT_MB, 1 MiB here: 8,192 records,
# where a spool used to stop for good at its cap) rolls over into numbered
# segments; the slicer takes the finished ones while the program runs and,
# with --delete, deletes them once stored; disk use is bounded by
# OBSERVE_SPOOL_LIMIT_MB, and what that bound costs is counted and said.
# 1. A Python client, 2 keep-alive connections, 20,000 requests (a record
#    each: the same request again writes no HTTP record of its own), then it
#    waits (a file it polls for): three segments; slicer --delete while
#    it waits stores every request so far and deletes the sealed segments
#    with nothing in flight, keeps segment 0 (the connections' records are
#    in flight) and the current one. Then 20,000 requests more, it exits;
#    slicer --delete again: every request in the database once (40,000,
#    as in nginx's log), nothing lost, the spool directory empty.
# 2. ab -k -n 20000 (about 20,000 records, 2.4 MiB) under a limit of 2 MiB,
#    no slicer: every request done, the layer says once that the roll-over
#    waits, the segments on disk within the limit, and the slicer counts
#    the records lost and exits 1.
# 3. observe around ab -k -n 20000 in 1 MiB segments: its summary counts
#    one process and every request.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/safety/lib.sh"
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site"

# 1
env OBSERVE_SPOOL_SEGMENT_MB=1 LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" OBSERVE_LOG=1 \
  "$PYTHON" "$REPO/tests/lib/pausing_client.py" "$NGINX_PORT" "$WORK/go" 20000 > "$WORK/client.out" 2> "$WORK/client.err" &
client=$!
at_exit "kill $client 2>/dev/null"
_waiting() { grep -qs waiting "$WORK/client.out"; }
wait_until 120 _waiting || fail "the client did not reach its pause: $(cat "$WORK/client.err")"
segments=$(find "$SPOOL" -name '*.spool' | wc -l)
[ "$segments" -ge 3 ] || fail "only $segments spool files after 20,000 requests"
ok "$segments segments after 20,000 requests"
"$SLICER" --delete -o "$WORK/run.db" "$SPOOL" 2> "$WORK/slice1.err" || fail "slicer: $(cat "$WORK/slice1.err")"
cat "$WORK/slice1.err"
expect_eq "$(q "$WORK/run.db" "SELECT count(*) FROM exchange WHERE status = 200")" 20000 \
  "requests stored while the client runs"
left=$(find "$SPOOL" -name '*.spool' | wc -l)
grep -q ", $((segments - left)) files deleted" "$WORK/slice1.err" || fail "the summary does not count the deletions"
[ "$left" -lt "$segments" ] || fail "no segment deleted while the client runs"
ok "$((segments - left)) finished segments deleted while the client runs, $left kept"
[ -n "$(find "$SPOOL" -name '*.[0-9]*.[0-9]*.spool' ! -name '*.[0-9][0-9][0-9][0-9][0-9][0-9].spool')" ] ||
  fail "segment 0 (its connections in flight) was deleted"
ok "segment 0 kept (its connections are in flight)"
touch "$WORK/go"
wait "$client" || fail "the client failed: $(cat "$WORK/client.err")"
expect_eq "$(tail -1 "$WORK/client.out")" "done" "the client's end"
expect_eq "$(layer_lines client)" "" "nothing said by the layer"
nginx_wait_log 40000
"$SLICER" --delete -o "$WORK/run.db" "$SPOOL" 2> "$WORK/slice2.err" || fail "slicer: $(cat "$WORK/slice2.err")"
cat "$WORK/slice2.err"
expect_eq "$(q "$WORK/run.db" "SELECT count(*) FROM exchange WHERE status = 200 AND complete")" 40000 \
  "every request stored, once"
expect_eq "$(q "$WORK/run.db" "SELECT count(*) FROM exchange WHERE path = '/100b' AND host LIKE '127.0.0.1:%'")" 40000 \
  "every request's host and path (most by reference to an earlier one's)"
expect_eq "$(awk -F'\t' '$6 == "/100b" && $7 == 200' "$NGINX_LOG" | wc -l)" 40000 "requests in nginx's log"
expect_eq "$(q "$WORK/run.db" "SELECT count(*) || ' ' || sum(dropped) FROM process")" "1 0" \
  "one process, no record lost"
expect_eq "$(q "$WORK/run.db" "SELECT count(*) FROM connection WHERE complete")" 2 "both connections, complete"
expect_eq "$(q "$WORK/run.db" "SELECT count(DISTINCT seq) FROM exchange")" 20000 "exchange numbers 1..20000 on each connection"
expect_eq "$(find "$SPOOL" -name '*.spool' | wc -l)" 0 "spool files left once everything is stored"

# 2
mkdir -m 0700 "$WORK/lim"
export OBSERVE_SPOOL_SEGMENT_MB=1 OBSERVE_SPOOL_LIMIT_MB=2
host_run ab - observed "$WORK/lim" ab -q -k -n 20000 "$NGINX_URL/100b"
unset OBSERVE_SPOOL_SEGMENT_MB OBSERVE_SPOOL_LIMIT_MB
expect_eq "$(cat "$WORK/ab.rc")" 0 "ab's exit status"
expect_eq "$(awk '/^Complete requests:/ { print $3 }' "$WORK/ab.out")" 20000 "ab: complete requests"
expect_one_warning ab 'the limit \(OBSERVE_SPOOL_LIMIT_MB\) is 2 MiB; records are counted as dropped'
bytes=$(find "$WORK/lim" -name '*.spool' -printf '%s\n' | awk '{ s += $1 - 4096 } END { print s }')
[ "$bytes" -le $((2 << 20)) ] || fail "the segments hold $bytes bytes of records, past 2 MiB"
ok "the segments hold $bytes bytes of records, within 2 MiB"
rc=0
"$SLICER" -o "$WORK/lim.db" "$WORK/lim" 2> "$WORK/lim.err" || rc=$?
cat "$WORK/lim.err"
expect_eq "$rc" 1 "the slicer's exit status (records were lost)"
lost=$(q "$WORK/lim.db" "SELECT dropped FROM process")
[ "$lost" -gt 0 ] || fail "no record counted as lost"
grep -qE "^slicer: .* $lost records lost by the layer" "$WORK/lim.err" || fail "the summary does not say $lost records were lost"
stored=$(q "$WORK/lim.db" "SELECT count(*) FROM exchange")
ok "$stored exchanges stored, $lost records counted as lost"

# 3. observe over a spool that rolls over: one process, every request
export OBSERVE_SPOOL_SEGMENT_MB=1
"$OBSERVE" -o "$WORK/observe.db" -- ab -q -k -n 20000 "$NGINX_URL/100b" > /dev/null 2> "$WORK/observe.err" ||
  fail "observe: $(cat "$WORK/observe.err")"
unset OBSERVE_SPOOL_SEGMENT_MB
grep -q "^observe: 20000 exchanges on 1 connections in 1 processes" "$WORK/observe.err" ||
  fail "observe's summary: $(tail -1 "$WORK/observe.err")"
ok "observe: $(tail -1 "$WORK/observe.err")"
