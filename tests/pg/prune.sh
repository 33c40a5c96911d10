#!/usr/bin/env bash
# prune.sh - manager prune --before DATE on both engines (issue 17): three
# clients on three consecutive days pulled into an SQLite central database
# and a PostgreSQL store; pruning the first day removes exactly its
# connections, exchanges and processes on both (the same rows remain), on
# PostgreSQL as whole day partitions; the day pulled again comes back. A
# date that is no date is refused with exit status 2.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/pg.sh"
MANAGER=$BUILD/bin/manager
pg_start
export PGHOST=$PGD PGUSER=observe PGDATABASE=observe

"$BUILD/bin/spoolgen" "$WORK/one.spool" 300
"$SLICER" -q -o "$WORK/day0.db" "$WORK/one.spool"
# the same client's database moved back one and two days, under other names
for back in 1 2; do
  cp "$WORK/day0.db" "$WORK/day$back.db"
  "$PYTHON" - "$WORK/day$back.db" "$back" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
shift = int(sys.argv[2]) * 86400 * 10**9
for table in ("process", "connection", "exchange"):
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1].endswith("_ns")]
    db.execute(f"UPDATE {table} SET " + ", ".join(f"{c} = {c} - {shift}" for c in cols))
db.execute(f"UPDATE client SET name = 'back{sys.argv[2]}'")
db.commit()
PY
done
day() { date -u -d "@$(( $(q "$WORK/day$1.db" "SELECT min(t1_ns) FROM connection") / 1000000000 ))" +%F; }
D0=$(day 0) D1=$(day 1) D2=$(day 2)
n=$(q "$WORK/day0.db" "SELECT count(*) FROM exchange")
nc=$(q "$WORK/day0.db" "SELECT count(*) FROM connection")
C=$WORK/central.db
for target in "$C" "$PG_URI"; do
  "$MANAGER" pull -q -o "$target" "$WORK/day0.db" "$WORK/day1.db" "$WORK/day2.db"
done
expect_eq "$(pq "SELECT count(*) FROM exchange")" $((3 * n)) "exchanges of three days in PostgreSQL"
expect_eq "$(pq "SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid WHERE i.inhparent = 'connection'::regclass")" \
  "connection_${D2//-/} connection_${D1//-/} connection_${D0//-/} connection_undated" "a connection partition per day"

# a date that is no date: refused, nothing removed
set +e
"$MANAGER" prune --before 2024-13-45 "$PG_URI" 2>"$WORK/err"; status=$?
set -e
expect_eq "$status" 2 "prune --before 2024-13-45: exit status"
grep -q "not a date" "$WORK/err" || fail "not said: $(cat "$WORK/err")"

for target in "$C" "$PG_URI"; do
  "$MANAGER" prune --before "$D1" "$target" 2>"$WORK/prune.err"
  grep -q "$nc connections, $n exchanges before $D1 removed" "$WORK/prune.err" ||
    fail "prune of $target: $(cat "$WORK/prune.err")"
done
ok "prune --before $D1: $nc connections and $n exchanges removed on both engines"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange") $(pq "SELECT count(*) FROM exchange")" "$((2 * n)) $((2 * n))" \
  "exchanges left"
expect_eq "$(pq "SELECT count(*) FROM process p JOIN client c ON c.id = p.client_id WHERE c.name = 'back2'")" 0 \
  "the first day's processes are gone"
expect_eq "$(pq "SELECT count(*) FROM pg_class WHERE relname IN ('connection_${D2//-/}', 'exchange_${D2//-/}')")" 0 \
  "the first day's partitions are dropped"
"$PYTHON" "$REPO/tests/pg/same_rows.py" "$C" process connection exchange exchange_metrics connection_metrics ||
  fail "after prune: rows differ"
expect_eq "$(q "$C" "PRAGMA foreign_key_check" | wc -l)" 0 "SQLite: no row left without its parent"
"$MANAGER" stats "$PG_URI" > /dev/null || fail "stats after prune"

# the day pulled again comes back in a partition made anew
"$MANAGER" pull -q -o "$PG_URI" "$WORK/day2.db"
expect_eq "$(pq "SELECT count(*) FROM exchange_${D2//-/}")" "$n" "the pruned day pulled again"
