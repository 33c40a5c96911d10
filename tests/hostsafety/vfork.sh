#!/usr/bin/env bash
# vfork.sh - issue 13 item 8: Python's subprocess starts children with
# vfork, and the child (sharing the parent's memory) calls close_range,
# dup2 and execve through the hooks: the layer used to drop the parent's
# connections from its table and mark the parent's spool ended. A python
# program with a keep-alive connection runs subprocess.run(["true"]) between
# requests, then waits: read while it is still running, every request must
# be on that one connection and the process not marked ended; after it
# exits, nginx's log and the database must agree.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db
mkfifo "$WORK/go"

env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" "$PYTHON" - "$NGINX_PORT" "$WORK/go" > "$WORK/out" <<'PY' &
import http.client, subprocess, sys
port, go = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port)
for i in range(8):
    c.request("GET", "/100b")
    r = c.getresponse()
    assert r.status == 200 and len(r.read()) == 100
    if i % 2 == 0:
        subprocess.run(["true"], check=True)   # vfork, close_range, execve
print("ready", flush=True)
open(go).read()                                # until the test has looked
c.close()
PY
pid=$!
at_exit "kill $pid 2>/dev/null"
for _ in $(seq 200); do grep -q ready "$WORK/out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$WORK/out" || fail "the client did not get ready"

"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 1 "connections"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 8 "requests recorded on it, children or not"
expect_eq "$(q "$DB" "SELECT ended FROM process")" 0 "the parent, still running, is not marked ended"
expect_eq "$(q "$DB" "SELECT end_class IS NULL AND t7_ns IS NULL FROM connection")" 1 "the connection still open"
echo > "$WORK/go"
wait "$pid" || fail "the client failed"
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT ended FROM process")" 1 "ended once it exited"
expect_eq "$(q "$DB" "SELECT end_class FROM connection")" client_close "closed by the program"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" ||
  fail "access log and database disagree"
