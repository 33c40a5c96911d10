# edge.sh - start our HTTP/1.1 server of the edges of RFC 9112
# (tests/servers/h1edges.py: 100 Continue, 103 Early Hints, WebSocket,
# CONNECT to 127.0.0.1) on a free loopback port.
# shellcheck shell=bash
#
# Source tests/lib/common.sh first (wait_until, at_exit, fail, $WORK).
#
# edge_server: starts it (600 s at most), stopped when the script exits;
# waits (60 s at most) until it says its port. Sets EDGE_PORT, EDGE_URL
# (http://127.0.0.1:PORT) and EDGE_LOG (a line per request it answered:
# client port, number on the connection, method, target, status).
edge_server() {
  local portfile=$WORK/edge.port
  EDGE_LOG=$WORK/edge.log
  : > "$EDGE_LOG"
  "$PYTHON" "$REPO/tests/servers/h1edges.py" "$portfile" "$EDGE_LOG" --lifetime 600 &
  local pid=$!
  at_exit "kill $pid 2>/dev/null"
  wait_until 60 test -s "$portfile" || fail "h1edges.py did not start in 60 s"
  EDGE_PORT=$(cat "$portfile")
  EDGE_URL=http://127.0.0.1:$EDGE_PORT
}
