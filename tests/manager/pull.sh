#!/usr/bin/env bash
# pull.sh - manager pull merges several clients' databases into one central
# database: counts equal the sum of the clients', pulling again adds
# nothing, a source that grew adds exactly its new rows, a corrupt or
# foreign source is named and skipped while the others still merge.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
mkdir -p "$WORK/clients"

# three client machines, simulated by their OBSERVE_CLIENT names
client_run alpha "$WORK/clients/alpha.db" curl -sf -o /dev/null -o /dev/null "$URL/100b" "$URL/50k"
client_run beta "$WORK/clients/beta.db" ab -q -k -n 30 -c 2 "$URL/100b"
client_run gamma "$WORK/clients/gamma.db" wget -q -O /dev/null "$URL/1m"

sum=0
for db in "$WORK"/clients/*.db; do
  sum=$((sum + $(q "$db" "SELECT count(*) FROM exchange")))
done
expect_eq "$sum" 33 "exchanges in the three client databases"

C=$WORK/central.db
"$MANAGER" pull -q -o "$C" "$WORK/clients"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange")" "$sum" "exchanges in the central database"
expect_eq "$(q "$C" "SELECT group_concat(name, ' ') FROM (SELECT name FROM client ORDER BY name)")" "alpha beta gamma" "clients"
expect_eq "$(q "$C" "SELECT client || ':' || count(*) FROM exchange_metrics GROUP BY client ORDER BY client" | tr '\n' ' ')" "alpha:2 beta:30 gamma:1 " "exchanges per client"

"$MANAGER" pull -q -o "$C" "$WORK/clients" "$WORK/clients/alpha.db"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange")" "$sum" "pulling again adds nothing"

# alpha's machine goes on working: its database grows by two exchanges
client_run alpha "$WORK/clients/alpha.db" curl -sf -o /dev/null -o /dev/null "$URL/100b" "$URL/100b"
"$MANAGER" pull -q -o "$C" "$WORK/clients/alpha.db"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange_metrics WHERE client = 'alpha'")" 4 "a grown source adds exactly its new rows"

# a corrupt source and a foreign database are named and skipped; a good one
# in the same pull still merges
head -c 8192 /dev/urandom > "$WORK/corrupt.db"
sqlite3 "$WORK/foreign.db" "CREATE TABLE t(x); INSERT INTO t VALUES(1);"
client_run delta "$WORK/clients/delta.db" curl -sf -o /dev/null "$URL/100b"
set +e
"$MANAGER" pull -q -o "$C" "$WORK/corrupt.db" "$WORK/foreign.db" "$WORK/clients/delta.db" 2>"$WORK/err"
status=$?
set -e
expect_eq "$status" 1 "exit status when a source was skipped"
grep -q "corrupt.db: .*(skipped)" "$WORK/err" || fail "corrupt source not named: $(cat "$WORK/err")"
grep -q "foreign.db: not an observe database" "$WORK/err" || fail "foreign source not named: $(cat "$WORK/err")"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange_metrics WHERE client = 'delta'")" 1 "the good source still merged"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange")" $((sum + 3)) "nothing merged before was lost"
expect_eq "$(q "$C" "PRAGMA integrity_check")" ok "central database integrity"

# statistics, checked against values computed here from the rows
for by in client server; do
  "$MANAGER" stats "$C" --by $by --csv > "$WORK/stats-$by.csv"
  "$PYTHON" - "$C" "$WORK/stats-$by.csv" "$by" <<'PY' || fail "manager stats --by $by"
import csv, math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
by = {"client": "client", "server": "peer_addr || ':' || peer_port"}[sys.argv[3]]
metrics = {"Tt ms": ("tt_ms", "connection_metrics"), "Te ms": ("te_ms", "connection_metrics"),
           "Ts ms": ("ts_ms", "exchange_metrics"), "Tw ms": ("tw_ms", "exchange_metrics"),
           "Tr ms": ("tr_ms", "exchange_metrics"), "Rs MB/s": ("rs / 1e6", "exchange_metrics"),
           "Rr MB/s": ("rr / 1e6", "exchange_metrics"), "Ra MB/s": ("ra / 1e6", "connection_metrics")}
def rank(v, p):  # nearest rank
    return v[max(1, math.ceil(p / 100 * len(v))) - 1]
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows, "no statistics"
seen = 0
for r in rows:
    col, view = metrics[r["metric"]]
    v = sorted(x for (x,) in db.execute(
        f"SELECT {col} FROM {view} WHERE {col} IS NOT NULL AND {by} = ?", (r["group"],)))
    assert int(r["count"]) == len(v), (r, len(v))
    want = [sum(v) / len(v), rank(v, 50), rank(v, 90), rank(v, 99), v[-1]]
    got = [float(r[k]) for k in ("mean", "p50", "p90", "p99", "max")]
    for w, g in zip(want, got):
        assert abs(w - g) <= 1e-6 * max(1.0, abs(w)), (r, want)
    seen += 1
print(f"stats --by {sys.argv[3]}: {seen} rows agree with the database")
PY
done
