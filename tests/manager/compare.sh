#!/usr/bin/env bash
# compare.sh - manager compare on real runs: a Python client makes 40
# keep-alive requests to a server that answers at once (A) and to one that
# waits 20 ms first (B). Compared by path, Tw is 20 ms slower in B with
# p < 0.01 (Tr is not: with a timeout, Python waits in poll() and calls
# recv() once the answer is there), and every figure of the CSV agrees with the rows (nearest rank
# percentiles, the change, and SciPy's Mann-Whitney p-value when Debian's
# python3-scipy is installed); a run against itself shows change 1 and p
# 1 everywhere; one database split by --a-where/--b-where gives the same
# verdict; by server (the default) each server is on one side only; errors.
source "$(dirname "$0")/../lib/common.sh"
MANAGER=$BUILD/bin/manager
fault_server delay --delay-ms 0
FAST=$FAULT_PORT
fault_server delay --delay-ms 20
SLOW=$FAULT_PORT

run() {  # PORT DB: 40 requests on one connection
  "$OBSERVE" -q -o "$2" -- "$PYTHON" -c "
import http.client
c = http.client.HTTPConnection('127.0.0.1', $1, timeout=30)
for i in range(40):
    c.request('GET', '/item')
    c.getresponse().read()
c.close()"
}
run "$FAST" "$WORK/a.db"
run "$SLOW" "$WORK/b.db"
run "$FAST" "$WORK/both.db"
run "$SLOW" "$WORK/both.db"
ok "40 requests each: $(q "$WORK/a.db" 'SELECT count(*) FROM exchange') in a.db, $(q "$WORK/b.db" 'SELECT count(*) FROM exchange') in b.db"

"$MANAGER" compare "$WORK/a.db" "$WORK/b.db" --by path --csv > "$WORK/ab.csv"
expect_eq "$(head -1 "$WORK/ab.csv")" \
  "group,metric,n_a,n_b,p50_a,p50_b,p90_a,p90_b,p99_a,p99_b,change,p_value" "the CSV's header"

# the figures against the rows; SciPy's p-value where it is installed
py=$PYTHON
/usr/bin/python3 -c "import scipy.stats" 2>/dev/null && py=/usr/bin/python3
check() {  # CSV A.db A-WHERE B.db B-WHERE
  "$py" - "$@" <<'PY'
import csv, math, sqlite3, sys
path, a_db, a_where, b_db, b_where = sys.argv[1:]
try:
    from scipy.stats import mannwhitneyu
except ImportError:
    mannwhitneyu = None
cols = {"Te ms": ("te_ms", True, 1), "Ts ms": ("ts_ms", False, 1), "Tw ms": ("tw_ms", False, 1),
        "Tr ms": ("tr_ms", False, 1), "Tt ms": ("tt_ms", True, 1), "Rr MB/s": ("rr", False, 1e-6)}
def values(db, where, group, metric):
    col, per_conn, scale = cols[metric]
    con = sqlite3.connect(db)
    if per_conn:  # grouped under "(connections)" by path
        sql = (f"SELECT {col} FROM connection_metrics WHERE {col} IS NOT NULL AND connection_id IN"
               f" (SELECT connection_id FROM exchange_metrics WHERE {where})")
        rows = con.execute(sql).fetchall() if group == "(connections)" else []
    else:
        rows = con.execute(f"SELECT {col} FROM exchange_metrics WHERE {col} IS NOT NULL AND"
                           f" ({where}) AND path = ?", (group,)).fetchall()
    return sorted(v * scale for (v,) in rows)
rank = lambda v, p: v[max(1, math.ceil(p / 100 * len(v))) - 1]
n = 0
for row in csv.DictReader(open(path)):
    a = values(a_db, a_where, row["group"], row["metric"])
    b = values(b_db, b_where, row["group"], row["metric"])
    assert (int(row["n_a"]), int(row["n_b"])) == (len(a), len(b)), (row, len(a), len(b))
    for p in (50, 90, 99):
        for side, v in (("a", a), ("b", b)):
            assert abs(float(row[f"p{p}_{side}"]) - rank(v, p)) <= 5e-7 + 1e-9 * abs(rank(v, p)), (row, p, side)
    change = rank(b, 50) / rank(a, 50)
    assert abs(float(row["change"]) - change) <= 5e-7 + 1e-6 * change, (row, change)
    if mannwhitneyu:
        want = mannwhitneyu(a, b, alternative="two-sided").pvalue
        got = float(row["p_value"])
        # printed with 6 significant digits
        assert abs(got - want) <= 5e-6 * want + 1e-300, (row, want)
    n += 1
print(f"ok: {n} rows agree with the database" +
      (" and SciPy's Mann-Whitney p-values" if mannwhitneyu else " (python3-scipy not installed: p-values not checked)"))
PY
}
check "$WORK/ab.csv" "$WORK/a.db" 1 "$WORK/b.db" 1 || fail "the figures disagree with the rows"
field() {  # CSV GROUP METRIC COLUMN
  "$PYTHON" -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if (r["group"], r["metric"]) == (sys.argv[2], sys.argv[3]):
        print(r[sys.argv[4]])' "$@"
}
p=$(field "$WORK/ab.csv" /item "Tw ms" p_value)
change=$(field "$WORK/ab.csv" /item "Tw ms" change)
p50=$(field "$WORK/ab.csv" /item "Tw ms" p50_b)
awk -v p="$p" -v c="$change" -v m="$p50" 'BEGIN { exit !(p < 0.01 && c > 1 && m >= 20) }' ||
  fail "Tw: B waits 20 ms more, yet p = $p, change = $change, p50(B) = $p50"
ok "Tw: the 20 ms server is slower: p50(B) $p50 ms, change $change, p = $p"

# a run against itself: nothing changed
"$MANAGER" compare "$WORK/a.db" "$WORK/a.db" --by path --csv > "$WORK/aa.csv"
"$PYTHON" - "$WORK/aa.csv" <<'PY' || fail "a run against itself"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 6, rows
for r in rows:
    assert r["n_a"] == r["n_b"] and r["p50_a"] == r["p50_b"] and r["p99_a"] == r["p99_b"], r
    assert float(r["change"]) == 1 and float(r["p_value"]) == 1, r
print(f"ok: a run against itself: change 1, p 1 in all {len(rows)} rows")
PY

# one database, a filter per side
"$MANAGER" compare "$WORK/both.db" --a-where "peer_port = $FAST" --b-where "peer_port = $SLOW" \
  --by path --csv > "$WORK/both.csv"
check "$WORK/both.csv" "$WORK/both.db" "peer_port = $FAST" "$WORK/both.db" "peer_port = $SLOW" ||
  fail "--a-where/--b-where: the figures disagree with the rows"
p=$(field "$WORK/both.csv" /item "Tw ms" p_value)
awk -v p="$p" 'BEGIN { exit !(p < 0.01) }' || fail "--a-where/--b-where: Tw p = $p"
ok "--a-where/--b-where on one database: Tw p = $p"

# by server, the default: each server on one side only; the text table
"$MANAGER" compare "$WORK/a.db" "$WORK/b.db" > "$WORK/ab.txt"
grep -q "^A: $WORK/a.db$" "$WORK/ab.txt" && grep -q "^B: $WORK/b.db$" "$WORK/ab.txt" ||
  fail "the text does not name the sides: $(head -2 "$WORK/ab.txt")"
grep -Eq "^127.0.0.1:$FAST +Tw ms +40 +0 .* - +- *$" "$WORK/ab.txt" ||
  fail "the fast server is not on side A alone: $(grep "$FAST" "$WORK/ab.txt")"
grep -Eq "^127.0.0.1:$SLOW +Tw ms +0 +40 " "$WORK/ab.txt" || fail "the slow server is not on side B alone"
ok "by server: each server on its side, no change and no p-value"

set +e
"$MANAGER" compare "$WORK/a.db" "$WORK/b.db" --by program 2> "$WORK/e1"; s1=$?
"$MANAGER" compare "$WORK/a.db" "$WORK/b.db" --b-where "no_such > 1" 2> "$WORK/e2"; s2=$?
"$MANAGER" compare "$WORK/a.db" "$WORK/b.db" "$WORK/a.db" 2> /dev/null; s3=$?
set -e
expect_eq "$s1 $(cat "$WORK/e1")" "2 manager: --by program: server, path or client" "--by program"
[ "$s2" = 2 ] && grep -q "$WORK/b.db: .*no such column: no_such" "$WORK/e2" ||
  fail "a bad --b-where: $s2 $(cat "$WORK/e2")"
ok "a bad --b-where: $(cat "$WORK/e2")"
expect_eq "$s3" 2 "three databases: a usage error"
