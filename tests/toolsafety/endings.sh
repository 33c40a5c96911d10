#!/usr/bin/env bash
# endings.sh - manager stats --view endings and the report's plot of it
# predate the end classes 'exit' (open when the process left) and 'lost'
# (closed where the layer could not see): their connections were counted
# in the total but in no class, so the shares did not add up to the
# whole, and a server whose clients all left with keep-alive connections
# open looked as if nothing ended them. Now each class has its column
# and, per server and window, the classes add up to the connections.
# Real programs against nginx: curl (client_close), python reading to the
# server's close (server_close) then leaving with a keep-alive connection
# open (exit), a close no hook can see (lost), a refused
# connect.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
need_cmd gnuplot
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

preload curl -sf -o /dev/null "$NGINX_URL/100b" || fail "curl"
preload "$PYTHON" - "$NGINX_PORT" <<'PY' || fail "python"
import http.client, socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))   # read to the server's FIN
s.sendall(b"GET /100b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
while s.recv(65536):
    pass
s.close()
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("GET", "/100b")
c.getresponse().read()
c.sock.detach()          # nobody closes the fd: open when the process leaves
PY
preload "$BUILD/bin/hs_client" unseen-close "$NGINX_PORT" "$WORK/site/100b" > /dev/null || fail "hs_client"
preload curl -s -o /dev/null "http://127.0.0.1:$(free_port)/" && fail "a connect to a closed port worked"
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT group_concat(end_class, ' ') FROM (SELECT end_class FROM connection ORDER BY end_class)")" \
  "client_close exit lost refused server_close" "the end classes recorded"

"$MANAGER" stats "$DB" --view endings --csv > "$WORK/endings.csv"
"$MANAGER" stats "$DB" --view endings > "$WORK/endings.txt"
cat "$WORK/endings.txt"
"$PYTHON" - "$WORK/endings.csv" "$WORK/endings.txt" <<'PY' || fail "the classes do not add up"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
classes = ["server_close", "client_close", "reset", "timeout", "refused",
           "exit", "lost", "unterminated"]
missing = [c for c in classes if c not in rows[0]]
if missing:
    sys.exit(f"no column for {missing}")
total = {c: 0 for c in classes}
for r in rows:
    s = sum(int(r[c]) for c in classes)
    if s != int(r["connections"]):
        sys.exit(f"{r['server']}: classes add up to {s}, connections {r['connections']}")
    for c in classes:
        total[c] += int(r[c])
print(f"ok: per server, the classes add up to the connections: {total}")
want = {"server_close": 1, "client_close": 1, "refused": 1, "exit": 1, "lost": 1}
if any(total[c] != want.get(c, 0) for c in classes):
    sys.exit(f"counts {total}, expected {want}")
# the text view: the shares of each row add up to 100 %
lines = open(sys.argv[2]).read().splitlines()
head = lines[0].split()
for line in lines[1:]:
    shares = [float(x.rstrip("%")) for x in line.split() if x.endswith("%")]
    if abs(sum(shares[:-1]) - 100) > 0.5:   # the last one, aborted, overlaps
        sys.exit(f"shares add up to {sum(shares[:-1])}: {line}")
print("ok: the text view's shares add up to 100 % per row")
PY
"$MANAGER" report -q "$DB" -o "$WORK/report"
grep -qE 'refused +exit +lost +unterm' "$WORK/report/summary.txt" ||
  fail "the report's endings table has no exit or lost column"
for f in "$WORK"/report/endings.svg; do
  grep -q 'exit' "$f" && grep -q 'lost' "$f" || fail "the endings plot has no exit or lost class"
done
ok "the report's endings plot shows exit and lost"
