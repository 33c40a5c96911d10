#!/usr/bin/env bash
# concurrency.sh - two slicers writing one database while a reader queries
# it both succeed and lose nothing (WAL + busy timeout); slicing the spool of
# a process that is still running is safe and picks up the rest later.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT/100b
DB=$WORK/shared.db

for d in a b; do
  mkdir -p "$WORK/$d"
  for i in 1 2 3 4; do
    env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/$d" ab -q -k -n 3000 -c 1 "$URL" >/dev/null
  done
done

# the schema first (an empty directory slices to an empty database), then a
# reader that queries all along; it must never see an error
mkdir -p "$WORK/empty"
"$SLICER" -q -o "$DB" "$WORK/empty"
( while [ ! -e "$WORK/done" ]; do
    sqlite3 -batch "$DB" "PRAGMA busy_timeout = 10000; SELECT count(*) FROM exchange_metrics;" >/dev/null 2>>"$WORK/reader.err" || echo "reader failed" >>"$WORK/reader.err"
  done ) &
reader=$!
"$SLICER" -q -o "$DB" "$WORK/a" & one=$!
"$SLICER" -q -o "$DB" "$WORK/b" & two=$!
wait "$one" || fail "first slicer failed"
wait "$two" || fail "second slicer failed"
touch "$WORK/done"
wait "$reader" || true
[ ! -s "$WORK/reader.err" ] || fail "the reader saw errors: $(head -3 "$WORK/reader.err")"
ok "a reader queried throughout without an error"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 24000 "exchanges from two slicers at once"
expect_eq "$(q "$DB" "SELECT count(*) FROM process")" 8 "processes"

# a live spool: slice while the client runs, then once more after it ended
LIVE=$WORK/live.db
mkdir -p "$WORK/c"
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/c" "$PYTHON" -c '
import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for _ in range(100):
    c.request("GET", "/100b")
    c.getresponse().read()
    time.sleep(0.03)
c.close()' "$NGINX_PORT" &
client=$!
# live_slice: slice the live spool; true once it holds an exchange
live_slice() {
  "$SLICER" -q -o "$LIVE" "$WORK/c" 2>/dev/null || true
  during=$(q "$LIVE" "SELECT count(*) FROM exchange" 2>/dev/null || echo 0)
  [ "$during" -gt 0 ]
}
during=0
wait_until 60 live_slice || true  # (60 s at most; judged below)
running=0
kill -0 "$client" 2>/dev/null && running=1
open_during=$(q "$LIVE" "SELECT count(*) FROM connection WHERE end_class IS NULL")
wait "$client"
"$SLICER" -q -o "$LIVE" "$WORK/c"
[ "$during" -gt 0 ] || fail "nothing sliced while the client ran"
if [ "$running" = 1 ]; then
  [ "$during" -lt 100 ] || fail "all exchanges sliced though the client still ran"
  expect_eq "$open_during" 1 "the connection still open in the live slice"
fi
ok "sliced $during of 100 exchanges while the client ran"
expect_eq "$(q "$LIVE" "SELECT count(*) FROM exchange")" 100 "exchanges after the client ended"
expect_eq "$(q "$LIVE" "SELECT count(*) FROM exchange WHERE complete = 1 AND dr > 0")" 100 "all complete, with their responses"
expect_eq "$(q "$LIVE" "SELECT end_class FROM connection")" client_close "the connection's end brought up to date"
