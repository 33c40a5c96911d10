#!/usr/bin/env bash
# exit.sh CASE - issue 14 item 5: a program that leaves with a keep-alive
# connection open (exit, _exit, exec) used to leave it 'unterminated', with
# no T7 and no Tt. The layer ends it as the process leaves: class 'exit',
# T7 that moment (after the last answer, not after the process's end).
#   exit   python: the socket's fd kept from Python's finalisation, sys.exit
#   _exit  python: os._exit
#   exec   python: os.execv of /bin/true (the socket is close-on-exec)
#   java   Java's keep-alive HttpURLConnection, then System.exit
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
case=$1
[ "$case" != java ] || need_cmd java
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

if [ "$case" = java ]; then
  cat > "$WORK/Exit.java" <<'JAVA'
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;

public class Exit {
    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 3; i++) {
            URL url = new URL(args[0]);
            HttpURLConnection c = (HttpURLConnection) url.openConnection();
            try (InputStream in = c.getInputStream()) {
                in.readAllBytes(); // back to the keep-alive cache
            }
        }
        System.exit(0);
    }
}
JAVA
  preload java "$WORK/Exit.java" "http://127.0.0.1:$NGINX_PORT/100b" || fail "java failed"
else
preload "$PYTHON" - "$case" "$NGINX_PORT" <<'PY' || fail "the client failed"
import http.client, os, sys
case, port = sys.argv[1], int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(3):
    c.request("GET", "/100b")
    r = c.getresponse()
    assert r.status == 200 and len(r.read()) == 100
c.sock.detach()          # nobody closes the fd: open when the process leaves
if case == "exit":
    sys.exit(0)
elif case == "_exit":
    os._exit(0)
elif case == "exec":
    os.execv("/bin/true", ["true"])
sys.exit(2)
PY
fi
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 1 "connections"
expect_eq "$(q "$DB" "SELECT end_class FROM connection")" exit "end class"
expect_eq "$(q "$DB" "SELECT t7_ns >= (SELECT max(t6_ns) FROM exchange) FROM connection")" 1 "T7 after the last answer"
expect_eq "$(q "$DB" "SELECT p.ended = 1 AND c.t7_ns <= p.end_ns FROM connection c JOIN process p ON p.id = c.process_id")" 1 "T7 no later than the process's end"
expect_eq "$(q "$DB" "SELECT tt_ms IS NOT NULL FROM connection_metrics")" 1 "Tt known"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" ||
  fail "access log and database disagree"
