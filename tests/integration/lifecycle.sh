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
pids=()
with_nginx=1 # 0: the case talks to no nginx (no access log to hold it to)

case $case in
kill)
  # not through the preload function: $! must be python itself
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" python3 "$client" kill 127.0.0.1 "$NGINX_PORT" > "$WORK/out" &
  pid=$!
  wait_until 60 grep -q ready "$WORK/out" || fail "client did not get ready in 60 s"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE complete = 1 AND dr > 100")" 20 "exchanges kept after SIGKILL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 20 "no exchange made of a send that returned"
  expect_eq "$(q "$DB" "SELECT end_class FROM connection")" unterminated "end class"
  ;;
sendcut)
  # One request answered, then an upload into a server that reads no more:
  # the send blocks, and the process is killed inside it. The upload is
  # still an exchange: begun at its send's entry, nothing after.
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" python3 "$client" sendcut 127.0.0.1 0 > "$WORK/out" &
  pid=$!
  wait_until 60 grep -q '^sending ' "$WORK/out" || fail "the client did not get to its upload in 60 s"
  lport=$(sed -n 's/^sending //p' "$WORK/out")
  # blocked: the main thread asleep, the socket's send queue not empty
  blocked() {
    local tx
    [ "$(awk '{print $3}' "/proc/$pid/task/$pid/stat" 2>/dev/null)" = S ] || return 1
    tx=$(awk -v p="$(printf '%04X' "$lport")" 'NR > 1 { split($2, a, ":"); if (a[2] == p) { split($5, q, ":"); print q[1]; exit } }' "/proc/$pid/net/tcp")
    [ -n "$tx" ] && [ $((16#$tx)) -gt 0 ]
  }
  wait_until 60 blocked || fail "the upload's send did not block in 60 s"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  grep -q 'returned' "$WORK/out" && fail "the upload's send returned: nothing was cut"
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 2 "exchanges: the request answered and the upload cut"
  expect_eq "$(q "$DB" "SELECT method || ' ' || status || ' ' || (t4_ns IS NOT NULL) || ' ' || complete FROM exchange WHERE seq = 1")" "GET 200 1 1" \
    "the first: labelled, answered, complete"
  expect_eq "$(q "$DB" "SELECT (t3_ns IS NOT NULL) || ' ' || (t4_ns IS NULL) || ' ' || (t5_ns IS NULL) || ' ' || (t6_ns IS NULL) || ' ' || ds || ' ' || complete FROM exchange WHERE seq = 2")" "1 1 1 1 0 1" \
    "the upload: T3, nothing after it, complete"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange u JOIN exchange f ON f.connection_id = u.connection_id AND f.seq = 1 WHERE u.seq = 2 AND u.t3_ns >= f.t6_ns")" 1 \
    "the upload began after the first answer"
  expect_eq "$(q "$DB" "SELECT end_class FROM connection")" unterminated "end class"
  # the same through observe: its table says where the send was cut
  rm -f "$SPOOL"/*
  (cd "$WORK" && exec "$OBSERVE" -o "$WORK/observe.db" -- python3 "$client" sendcut 127.0.0.1 0 > "$WORK/out2" 2> "$WORK/table") &
  opid=$!
  wait_until 60 grep -q '^sending ' "$WORK/out2" || fail "the client under observe did not get to its upload in 60 s"
  pid=$(pgrep -P "$opid" | head -n 1) # observe runs the command as its child
  [ -n "$pid" ] || fail "no client under observe"
  lport=$(sed -n 's/^sending //p' "$WORK/out2")
  wait_until 60 blocked || fail "the upload's send under observe did not block in 60 s"
  kill -9 "$pid"
  wait "$opid" 2>/dev/null || true
  grep -Eq '^python[^ ]* +[0-9]+ +127\.0\.0\.1:[0-9]+ +[0-9]+ +2 +cut ' "$WORK/table" ||
    fail "observe's table does not say the upload was cut: $(cat "$WORK/table")"
  with_nginx=0
  ;;
fork)
  parent=$(preload python3 "$client" fork 127.0.0.1 "$NGINX_PORT")
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(find "$SPOOL" -name '*.spool' | wc -l)" 2 "spool files (parent and child)"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id JOIN process p ON p.id = c.process_id WHERE p.pid = $parent")" 2 "parent exchanges"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id JOIN process p ON p.id = c.process_id WHERE p.ppid = $parent")" 3 "child exchanges (ppid = parent)"
  ;;
dnsfork)
  # A name looked up 1.2 s before the process's first connection (which
  # makes its spool), and a child forked after it that connects to the
  # name's address first: the parent's connection takes the lookup's name
  # and times, older than its spool (kept: after the process's start); the
  # child's takes the name only (its parent's lookup is none it waited
  # for, and came before the child's start). No record refused.
  parent=$(preload python3 "$client" dnsfork localhost "$NGINX_PORT") || fail "the client failed"
  "$SLICER" -q -o "$DB" "$SPOOL" 2> "$WORK/slicer.err" || fail "slicer: $(cat "$WORK/slicer.err")"
  ! grep . "$WORK/slicer.err" || fail "the slicer warned"
  ok "no warning from the slicer"
  by="FROM connection c JOIN process p ON p.id = c.process_id"
  expect_eq "$(q "$DB" "SELECT dns_name || ' ' || (dns_end_ns >= dns_start_ns) || ' ' || (t1_ns - dns_end_ns > 1000000000) $by WHERE p.pid = $parent")" \
    "localhost 1 1" "the parent's connection: the lookup's name and times, 1.2 s before it"
  expect_eq "$(q "$DB" "SELECT dns_name || ' ' || coalesce(dns_start_ns, 'none') $by WHERE p.ppid = $parent")" \
    "localhost none" "the child's connection: the inherited lookup's name, no times"
  ;;
threads)
  # 4 threads x 5 requests on their own connections, then 10 requests on
  # one connection that one thread sends on while another receives. Each
  # send() returns 20 ms after the kernel took the request (slowsend.so,
  # below the layer): the reader has the answer before the send returns,
  # every time. Still: the request's method, path and status, and the
  # times in order (T4 <= T5 <= TFB).
  # Then the same shared use of a connection of another protocol (lines,
  # no HTTP), which takes the plain way too: its exchanges unlabelled,
  # each one line and its answer, the times in order.
  SHARED_N=10 SLOWSEND_US=20000 env LD_PRELOAD="$LAYER_PRELOAD:$BUILD/lib/slowsend.so" OBSERVE_DIR="$SPOOL" \
    python3 "$client" threads 127.0.0.1 "$NGINX_PORT" > "$WORK/out" || fail "the client failed"
  "$SLICER" -q -o "$DB" "$SPOOL"
  other=$(sed -n 's/^other_port //p' "$WORK/out")
  [ -n "$other" ] || fail "the client did not say its line server's port"
  on_other="FROM exchange e JOIN connection c ON c.id = e.connection_id WHERE c.peer_port = $other"
  expect_eq "$(q "$DB" "SELECT count(*) $on_other")" 10 "exchanges on the shared connection of another protocol"
  expect_eq "$(q "$DB" "SELECT count(*) $on_other AND e.ds = 7 AND e.dr = 7 AND coalesce(e.method, '') = '' AND coalesce(e.path, '') = '' AND coalesce(e.status, 0) = 0 AND e.t3_ns <= e.t4_ns AND e.t4_ns <= e.t5_ns AND e.t5_ns <= e.tfb_ns AND e.tfb_ns <= e.t6_ns")" 10 \
    "each of them one line and its answer, unlabelled, T3 <= T4 <= T5 <= TFB <= T6"
  echo "$(q "$DB" "SELECT count(*) $on_other AND e.tfb_ns < e.t3_ns + 20000000") of 10 answers on it came before their sends returned"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection WHERE peer_port = $NGINX_PORT")" 5 "connections to nginx"
  expect_eq "$(q "$DB" "SELECT group_concat(n, ' ') FROM (SELECT count(*) n FROM exchange e JOIN connection c ON c.id = e.connection_id WHERE c.peer_port = $NGINX_PORT GROUP BY connection_id ORDER BY n)")" "5 5 5 5 10" "exchanges per connection"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id WHERE c.peer_port = $NGINX_PORT AND dr > 0 AND ds = (SELECT min(ds) FROM exchange x WHERE x.connection_id = e.connection_id) AND dr = (SELECT min(dr) FROM exchange x WHERE x.connection_id = e.connection_id)")" 30 "each exchange one request and its whole response"
  # (every time on an idle machine; a reader held off the CPU for 20 ms by
  # load misses the race for that request, which is then an ordinary one)
  raced=$(q "$DB" "SELECT count(*) FROM exchange_metrics e JOIN (SELECT x.connection_id FROM exchange x JOIN connection c ON c.id = x.connection_id WHERE c.peer_port = $NGINX_PORT GROUP BY x.connection_id HAVING count(*) = 10) s USING (connection_id) WHERE tfb_ns < t3_ns + 20000000")
  [ "$raced" -ge 1 ] || fail "no answer on the shared connection came before its send returned: the race was not run"
  echo "$raced of 10 answers on the shared connection came before their sends returned"
  check_args+=(--http)
  ;;
closeall)
  # three ways to close every fd from 3 up, a connection open across each
  for variant in range from loop; do
    pid=$(preload python3 "$client" closeall 127.0.0.1 "$NGINX_PORT" "$WORK/mine.$variant" "$variant") ||
      fail "$variant: the client failed"
    expect_eq "$(cat "$WORK/mine.$variant" | tr '\n' ' ')" "mine still mine " "$variant: the program's own file holds only what it wrote"
    pids+=("$variant:$pid")
  done
  "$SLICER" -q -o "$DB" "$SPOOL"
  for vp in "${pids[@]}"; do
    variant=${vp%%:*} pid=${vp#*:}
    conns="SELECT c.* FROM connection c JOIN process p ON p.id = c.process_id WHERE p.pid = $pid ORDER BY c.t1_ns"
    expect_eq "$(q "$DB" "SELECT group_concat(n, ' ') FROM (SELECT (SELECT count(*) FROM exchange e WHERE e.connection_id = c.id) n FROM ($conns) c)")" "1 1 2 1" "$variant: exchanges per connection"
    expect_eq "$(q "$DB" "SELECT group_concat(end_class || ':' || (t7_ns IS NOT NULL), ' ') FROM ($conns)")" \
      "client_close:1 client_close:1 client_close:1 client_close:1" "$variant: every connection closed by the program, T7 known (the held one by the close-all)"
  done
  ;;
exec)
  pid=$(preload python3 "$client" exec 127.0.0.1 "$NGINX_PORT")
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM process WHERE pid = $pid")" 2 "process images under one pid"
  expect_eq "$(q "$DB" "SELECT group_concat(CASE WHEN p.program LIKE '%python%' THEN 'python' WHEN p.program LIKE '%curl' THEN 'curl' ELSE p.program END || ':' || x.dr, ' ') FROM (SELECT * FROM process ORDER BY start_ns) p JOIN connection c ON c.process_id = p.id JOIN exchange x ON x.connection_id = c.id" | sed 's/:[0-9]*//g')" "python curl" "python, then curl after exec"
  expect_eq "$(q "$DB" "SELECT count(*) FROM process WHERE ended = 1")" 2 "both images ended"
  ;;
setuid)
  # A process that drops its privileges before it connects (apt's methods
  # become _apt) can no longer make a spool in the starting user's 0700
  # directory: the layer makes it before the change. Root only.
  [ "$(id -u)" = 0 ] || skip "not root: no privileges to drop"
  id nobody >/dev/null 2>&1 || skip "no user nobody"
  preload python3 -c "
import os, sys, http.client, encodings.idna  # (no imports from /root after the drop)
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
c = http.client.HTTPConnection('127.0.0.1', $NGINX_PORT)
for i in range(int(sys.argv[1])):
    c.request('GET', '/100b'); c.getresponse().read()
c.close()" 3 || fail "the client failed"
  for f in "$SPOOL"/*.spool; do
    expect_eq "$(stat -c '%u %a' "$f")" "0 600" "the spool: the starting user's, 0600"
  done
  # beyond the first chunk (128 records: a request's record each, after
  # the first two) it cannot grow: recording stops, said, the program goes
  # on (against a server of ours: nginx's log must hold only what is
  # recorded)
  fault_server delay --delay-ms 0
  OBSERVE_LOG=1 preload python3 -c "
import os, sys, http.client, encodings.idna  # (no imports from /root after the drop)
os.setresuid(65534, 65534, 65534)
c = http.client.HTTPConnection('127.0.0.1', $FAULT_PORT)
for i in range(int(sys.argv[1])):
    c.request('GET', '/100b'); c.getresponse().read()
c.close()" 200 2> "$WORK/drop.err" || fail "the client failed after its spool stopped growing"
  grep -q "runs as uid 65534 now, the spool was made as uid 0: it dropped privileges" "$WORK/drop.err" ||
    fail "no word of why recording stopped: $(cat "$WORK/drop.err")"
  ok "recording stops past the first chunk, and says why"
  if command -v /usr/lib/apt/methods/http >/dev/null && id _apt >/dev/null 2>&1; then
    # apt's own http method, as apt drives it (its sandbox user _apt)
    { printf '601 Configuration\nConfig-Item: APT::Sandbox::User=_apt\n\n600 URI Acquire\nURI: http://127.0.0.1:%s/50k\nFilename: /dev/null\n\n' "$NGINX_PORT"
      wait_until 30 grep -q '^201 URI Done' "$WORK/apt.out"; } |
      preload /usr/lib/apt/methods/http > "$WORK/apt.out" || true
    grep -q '^201 URI Done' "$WORK/apt.out" || fail "apt's http method did not fetch: $(cat "$WORK/apt.out")"
    apt_n=1
  else
    echo "(apt's http method or user _apt missing: python only)"
    apt_n=0
  fi
  rc=0
  "$SLICER" -q -o "$DB" "$SPOOL" 2> "$WORK/slicer.err" || rc=$?
  expect_eq "$rc" 1 "the slicer's exit status: records lost by the layer"
  expect_eq "$(q "$DB" "SELECT count(*) FROM process WHERE dropped > 0")" 1 "records past the first chunk dropped (and counted) in one process"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange e JOIN connection c ON c.id = e.connection_id JOIN process p ON p.id = c.process_id WHERE p.dropped = 0 AND e.status = 200")" "$((3 + apt_n))" \
    "every request of the processes that did not overflow, as user nobody (and _apt)"
  ;;
dup)
  pid=$(preload python3 "$client" dup 127.0.0.1 "$NGINX_PORT" "$WORK/file") || fail "the client failed"
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 3 "connections"
  expect_eq "$(q "$DB" "SELECT group_concat(n, ' ') FROM (SELECT (SELECT count(*) FROM exchange e WHERE e.connection_id = c.id) n FROM connection c ORDER BY t1_ns)")" "3 1 2" \
    "exchanges per connection (through dup and F_DUPFD; the write to the file dup2'd over the socket not counted)"
  expect_eq "$(q "$DB" "SELECT sum(ds) FROM exchange")" "$((6 * $(printf 'GET /100b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' | wc -c)))" "bytes sent: six requests, not the file write"
  expect_eq "$(q "$DB" "SELECT group_concat(end_class || ':' || (t7_ns IS NOT NULL), ' ') FROM (SELECT * FROM connection ORDER BY t1_ns)")" \
    "client_close:1 client_close:1 client_close:1" "every connection closed by the program, T7 known (the first by dup2)"
  grep -q '^GET /100b' "$WORK/file" || fail "the file dup2'd over the socket lost its write"
  ;;
*) fail "unknown case $case" ;;
esac

[ "$with_nginx" = 1 ] || exit 0
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" "${check_args[@]}" ||
  fail "$case: access log and database disagree"
