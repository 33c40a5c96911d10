#!/usr/bin/env bash
# lifecycle.sh CASE - processes that die, fork, run threads or close every fd.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
case=$1
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db
client=$REPO/tests/integration/clients/lifecycle.py
check_args=()

case $case in
kill)
  # not through the preload function: $! must be python itself
  env LD_PRELOAD="$LIBOBSERVE" OBSERVE_DIR="$SPOOL" python3 "$client" kill 127.0.0.1 "$NGINX_PORT" > "$WORK/out" &
  pid=$!
  for _ in $(seq 100); do grep -q ready "$WORK/out" 2>/dev/null && break; sleep 0.1; done
  grep -q ready "$WORK/out" || fail "client did not get ready"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE complete = 1 AND dr > 100")" 20 "exchanges kept after SIGKILL"
  expect_eq "$(q "$DB" "SELECT end_class FROM connection")" unterminated "end class"
  ;;
fork)
  parent=$(preload python3 "$client" fork 127.0.0.1 "$NGINX_PORT")
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(find "$SPOOL" -name '*.spool' | wc -l)" 2 "spool files (parent and child)"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id JOIN process p ON p.id = c.process_id WHERE p.pid = $parent")" 2 "parent exchanges"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id JOIN process p ON p.id = c.process_id WHERE p.ppid = $parent")" 3 "child exchanges (ppid = parent)"
  ;;
threads)
  preload python3 "$client" threads 127.0.0.1 "$NGINX_PORT"
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 25 "exchanges from 4 threads x 5 + 5 on a shared connection"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 5 "connections"
  check_args+=(--no-order)  # a receive may start in one thread before the other's send returns
  ;;
closeall)
  preload python3 "$client" closeall 127.0.0.1 "$NGINX_PORT" "$WORK/mine.txt"
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 4 "exchanges before and after closing every fd"
  expect_eq "$(cat "$WORK/mine.txt")" mine "the program's own file"
  ;;
exec)
  pid=$(preload python3 "$client" exec 127.0.0.1 "$NGINX_PORT")
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM process WHERE pid = $pid")" 2 "process images under one pid"
  expect_eq "$(q "$DB" "SELECT group_concat(CASE WHEN p.program LIKE '%python%' THEN 'python' WHEN p.program LIKE '%curl' THEN 'curl' ELSE p.program END || ':' || x.dr, ' ') FROM (SELECT * FROM process ORDER BY start_ns) p JOIN connection c ON c.process_id = p.id JOIN exchange x ON x.connection_id = c.id" | sed 's/:[0-9]*//g')" "python curl" "python, then curl after exec"
  expect_eq "$(q "$DB" "SELECT count(*) FROM process WHERE ended = 1")" 2 "both images ended"
  ;;
*) fail "unknown case $case" ;;
esac

nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" "${check_args[@]}" ||
  fail "$case: access log and database disagree"
