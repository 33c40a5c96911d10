#!/usr/bin/env bash
# filters_exports.sh - slicer --where and the convenience filters keep
# exactly the exchanges they should (checked against counts computed from
# an unfiltered slice); an invalid expression writes nothing; exports in CSV,
# JSON Lines and HAR 1.2 are read back by independent readers (Python's csv
# and json, tests/slicer/check_har.py).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
preload curl -sf -o /dev/null -o /dev/null -o /dev/null "$URL/100b" "$URL/50k" "$URL/1m"
preload ab -q -k -n 20 -c 1 "$URL/100b" >/dev/null
ALL=$WORK/all.db
"$SLICER" -q -o "$ALL" "$SPOOL"
total=$(q "$ALL" "SELECT count(*) FROM exchange")
expect_eq "$total" 23 "exchanges without a filter"

# --where: the same rows as the query on the unfiltered database
"$SLICER" -q -o "$WORK/big.db" --where 'dr > 10000' "$SPOOL"
expect_eq "$(q "$WORK/big.db" "SELECT count(*) FROM exchange")" \
  "$(q "$ALL" "SELECT count(*) FROM exchange_metrics WHERE dr > 10000")" "--where 'dr > 10000'"
expect_eq "$(q "$WORK/big.db" "SELECT count(*) FROM connection")" 1 "connections kept with their exchanges"
"$SLICER" -q -o "$WORK/big.db" --where 'dr > 10000' "$SPOOL"
expect_eq "$(q "$WORK/big.db" "SELECT count(*) FROM exchange")" 2 "re-slicing with the filter adds nothing"

"$SLICER" -q -o "$WORK/ab.db" --program ab --min-bytes 300 "$SPOOL"
expect_eq "$(q "$WORK/ab.db" "SELECT count(*) FROM exchange")" \
  "$(q "$ALL" "SELECT count(*) FROM exchange_metrics WHERE program LIKE '%/ab' AND ds + dr >= 300")" "--program ab --min-bytes 300"
"$SLICER" -q -o "$WORK/peer.db" --peer "localhost:$NGINX_PORT" "$SPOOL"
expect_eq "$(q "$WORK/peer.db" "SELECT count(*) FROM exchange")" "$total" "--peer localhost:PORT"
"$SLICER" -q -o "$WORK/none.db" --peer "127.0.0.1:1" "$SPOOL"
expect_eq "$(q "$WORK/none.db" "SELECT count(*) FROM exchange")" 0 "--peer another port"
"$SLICER" -q -o "$WORK/net.db" --peer "127.0.0.0/8:$NGINX_PORT" "$SPOOL"
expect_eq "$(q "$WORK/net.db" "SELECT count(*) FROM exchange")" "$total" "--peer 127.0.0.0/8:PORT (CIDR)"
"$SLICER" -q -o "$WORK/net2.db" --peer 10.0.0.0/8 "$SPOOL"
expect_eq "$(q "$WORK/net2.db" "SELECT count(*) FROM exchange")" 0 "--peer 10.0.0.0/8"
"$SLICER" export -d "$ALL" --format csv --where "cidr_match(peer_addr, '127.0.0.1/32')" -o "$WORK/net.csv"
expect_eq "$(($(wc -l < "$WORK/net.csv") - 1))" "$total" "cidr_match() in an export filter"
set +e
"$SLICER" -q -o "$WORK/bad.db" --peer 127.0.0.1/33 "$SPOOL" 2>"$WORK/err"
status=$?
set -e
expect_eq "$status" 2 "a bad network is refused"
grep -q "not a network" "$WORK/err" || fail "message: $(cat "$WORK/err")"
"$SLICER" -q -o "$WORK/old.db" --until 2000-01-01 "$SPOOL"
expect_eq "$(q "$WORK/old.db" "SELECT count(*) FROM exchange")" 0 "--until 2000-01-01"
"$SLICER" -q -o "$WORK/new.db" --since "$(( $(date +%s) - 3600 ))" "$SPOOL"
expect_eq "$(q "$WORK/new.db" "SELECT count(*) FROM exchange")" "$total" "--since an hour ago"

# an invalid expression: SQLite's message and the expression, nothing written
set +e
"$SLICER" -o "$WORK/bad.db" --where 'dr >>> 3' "$SPOOL" 2>"$WORK/err"
status=$?
set -e
expect_eq "$status" 2 "exit status for an invalid expression"
grep -q 'syntax error: dr >>> 3' "$WORK/err" || fail "message: $(cat "$WORK/err")"
[ ! -e "$WORK/bad.db" ] || fail "a database was written for an invalid expression"
ok "invalid expression refused before anything is written"
set +e
"$SLICER" -o "$WORK/bad.db" --where '1); DROP TABLE exchange; (1' "$SPOOL" 2>/dev/null
status=$?
set -e
expect_eq "$status" 2 "a second statement is refused"

# exports, read back by independent readers
"$SLICER" export -d "$ALL" --format csv -o "$WORK/all.csv"
python3 - "$WORK/all.csv" "$ALL" <<'PY' || fail "CSV export"
import csv, sqlite3, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
db = sqlite3.connect(sys.argv[2])
cols = [d[0] for d in db.execute("SELECT * FROM exchange_metrics LIMIT 0").description]
assert rows[0] == cols, (rows[0], cols)
assert len(rows) - 1 == db.execute("SELECT count(*) FROM exchange").fetchone()[0]
dr = cols.index("dr")
assert sorted(int(r[dr]) for r in rows[1:]) == sorted(x for (x,) in db.execute("SELECT dr FROM exchange"))
print("csv: header and", len(rows) - 1, "rows match the database")
PY
"$SLICER" export -d "$ALL" --format jsonl --where 'tw_ms IS NOT NULL' -o "$WORK/all.jsonl"
python3 - "$WORK/all.jsonl" "$total" <<'PY' || fail "JSON Lines export"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert len(rows) == int(sys.argv[2]), len(rows)
assert all(r["tw_ms"] >= 0 and r["peer_port"] > 0 for r in rows)
print("jsonl:", len(rows), "objects")
PY
"$SLICER" export -d "$ALL" --format har -o "$WORK/all.har"
python3 "$REPO/tests/slicer/check_har.py" "$WORK/all.har" "$total" || fail "HAR export"
"$SLICER" export -d "$ALL" --format har --program curl -o "$WORK/curl.har"
python3 "$REPO/tests/slicer/check_har.py" "$WORK/curl.har" 3 || fail "filtered HAR export"
python3 - "$WORK/curl.har" "$ALL" <<'PY' || fail "HAR timings"
import json, sqlite3, sys
har = json.load(open(sys.argv[1]))["log"]["entries"]
db = sqlite3.connect(sys.argv[2])
rows = db.execute("SELECT seq, te_ms, ts_ms, tw_ms, trecv_ms FROM exchange_metrics "
                  "WHERE program LIKE '%curl' ORDER BY t3_ns").fetchall()
for e, (seq, te, ts, tw, trecv) in zip(har, rows):
    t = e["timings"]
    assert abs(t["connect"] - (te if seq == 1 else -1)) < 0.001, (t, te)
    assert abs(t["send"] - ts) < 0.001 and abs(t["wait"] - tw) < 0.001
    assert abs(t["receive"] - trecv) < 0.001
print("har: timings are the database's Te, Ts, Tw, Trecv")
PY
set +e
"$SLICER" export -d "$WORK/site/100b" --format csv 2>"$WORK/err"
status=$?
set -e
expect_eq "$status" 2 "export from a file that is not a database"
grep -q "100b" "$WORK/err" || fail "message does not name the file: $(cat "$WORK/err")"

# text that needs quoting in every format: a client name with a comma,
# quotes, a backslash and a line break
mkdir -p "$WORK/odd"
weird=$'we,ird "client" \\ \nname'
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/odd" OBSERVE_CLIENT="$weird" \
  curl -sf -o /dev/null "$URL/100b"
"$SLICER" -q -o "$WORK/odd.db" "$WORK/odd"
for fmt in csv jsonl har; do
  "$SLICER" export -d "$WORK/odd.db" --format $fmt -o "$WORK/odd.$fmt"
done
"$PYTHON" - "$WORK/odd" "$weird" <<'PY' || fail "quoting in the exports"
import csv, json, sys
base, weird = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(base + ".csv", newline="")))
assert len(rows) == 1 and rows[0]["client"] == weird, rows
obj = json.loads(open(base + ".jsonl").read())
assert obj["client"] == weird, obj["client"]
json.load(open(base + ".har"))
print("csv, jsonl and har carry", repr(weird), "intact")
PY
python3 "$REPO/tests/slicer/check_har.py" "$WORK/odd.har" 1 || fail "HAR with odd text"

# a directory without permission: one line naming it, exit 1, the readable
# input still stored (run as nobody: root reads every directory)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$WORK/perm/locked" "$WORK/perm/open"
  cp "$WORK/odd"/*.spool "$WORK/perm/open/"
  cp "$WORK/odd"/*.spool "$WORK/perm/locked/"
  chmod 000 "$WORK/perm/locked"
  chmod 777 "$WORK/perm"
  chmod 755 "$WORK/perm/open"
  chmod 644 "$WORK/perm/open"/*.spool
  chmod 755 "$WORK"
  set +e
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$SLICER" -q -o "$WORK/perm/nobody.db" "$WORK/perm/locked" "$WORK/perm/open" 2>"$WORK/perm.err"
  status=$?
  set -e
  expect_eq "$status" 1 "exit status with an unreadable directory"
  grep -q "$WORK/perm/locked: cannot read directory: Permission denied" "$WORK/perm.err" ||
    fail "message: $(cat "$WORK/perm.err")"
  expect_eq "$(q "$WORK/perm/nobody.db" "SELECT count(*) FROM exchange")" 1 "the readable spool still stored"
  chmod 755 "$WORK/perm/locked"
fi
