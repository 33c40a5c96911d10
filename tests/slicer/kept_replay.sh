#!/usr/bin/env bash
# kept_replay.sh - a connection recorded as events, still open when the
# slicer passes: its replay is kept in the database (ingest_replay) and
# taken up again by the next pass. A Python client makes three requests on
# one keep-alive connection and waits; the slicer (under valgrind when it
# is there: nothing unset in the state it keeps) stores them and keeps the
# connection's replay; the client makes three more and exits; the next
# pass stores those three, once each, and forgets the replay.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/kept.db
export OBSERVE_CAPTURE=events
preload "$PYTHON" - "$NGINX_PORT" "$WORK/go" > "$WORK/client.out" 2>&1 <<'PY' &
import os, socket, sys, time
port, go = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
def get():
    s.sendall(b"GET /100b HTTP/1.1\r\nHost: h\r\n\r\n")
    d = b""
    while b"\r\n\r\n" not in d or len(d.split(b"\r\n\r\n", 1)[1]) < 100:
        d += s.recv(4096)
for _ in range(3):
    get()
print("waiting", flush=True)
for _ in range(600):  # 60 s at most
    if os.path.exists(go):
        break
    time.sleep(0.1)
for _ in range(3):
    get()
s.close()
print("done", flush=True)
PY
client=$!
at_exit "kill $client 2>/dev/null || true"
_waiting() { grep -q waiting "$WORK/client.out"; }
wait_until 60 _waiting || fail "the client did not make its first requests: $(cat "$WORK/client.out")"
slice() {
  if command -v valgrind >/dev/null && [ -z "${OBSERVE_SANITIZE:-}" ]; then
    valgrind --quiet --error-exitcode=99 "$SLICER" -q -o "$DB" "$SPOOL" ||
      fail "valgrind found errors in the slicer (status $?)"
  else
    "$SLICER" -q -o "$DB" "$SPOOL"
  fi
}
slice
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 3 "exchanges stored while the connection is open"
expect_eq "$(q "$DB" "SELECT count(*) FROM ingest_replay")" 1 "its replay kept"
touch "$WORK/go"
wait "$client" || fail "the client failed: $(cat "$WORK/client.out")"
slice
expect_eq "$(q "$DB" "SELECT count(*) || ' ' || sum(status = 200) || ' ' || count(DISTINCT connection_id) FROM exchange")" \
  "6 6 1" "all six, once each, on one connection"
expect_eq "$(q "$DB" "SELECT count(*) FROM ingest_replay")" 0 "no replay kept once it ended"
