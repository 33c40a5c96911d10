#!/usr/bin/env bash
# central.sh - a PostgreSQL central store (issue 17): a real server of our
# own (tests/lib/pg.sh). Four clients pulled (one over a real sshd, one
# recorded with OBSERVE_CAPTURE=events: an interim 100 and a CONNECT
# tunnel, the columns of schema version 4), the same into an SQLite
# central database: every table's and view's rows are equal; a store of
# version 3 gets the new columns; pulling again adds nothing; rows in
# flight are brought up to date;
# two pulls at once into a new store give the same rows; stats and report
# read the URI; a wrong password, an unreachable server and a password in
# the URI are refused with the reason and exit status 2, no password shown.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/sshd.sh"
source "$REPO/tests/lib/pg.sh"
source "$REPO/tests/lib/edge.sh"
MANAGER=$BUILD/bin/manager
pg_start
sshd_start
export PGHOST=$PGD PGUSER=observe PGDATABASE=observe

make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
mkdir -p "$WORK/clients" "$WORK/remote"
client_run alpha "$WORK/clients/alpha.db" curl -sf -o /dev/null -o /dev/null "$URL/100b" "$URL/50k"
client_run beta "$WORK/clients/beta.db" ab -q -k -n 40 -c 2 "$URL/100b"
client_run gamma "$WORK/remote/gamma.db" wget -q -O /dev/null "$URL/1m" "$URL/100b"
# epsilon: what the core knows beyond the default's columns (a 100
# Continue; a CONNECT through our server to nginx)
edge_server
head -c 65536 /dev/zero > "$WORK/upload"
client_run epsilon "$WORK/clients/epsilon.db" env OBSERVE_CAPTURE=events \
  curl -sf -o /dev/null -H 'Expect: 100-continue' -T "$WORK/upload" "$EDGE_URL/up"
client_run epsilon "$WORK/clients/epsilon.db" env OBSERVE_CAPTURE=events \
  curl -sf -o /dev/null -p -x "$EDGE_URL" "$URL/100b"
expect_eq "$(q "$WORK/clients/epsilon.db" "SELECT group_concat(coalesce(interim_status, '-') || ' ' ||
  coalesce(tunnel, '-'), ', ') FROM (SELECT * FROM exchange_metrics ORDER BY connection_id, seq)")" \
  "100 -, - 127.0.0.1:$NGINX_PORT, - 127.0.0.1:$NGINX_PORT" "epsilon's interim status and tunnel"
SSH_URL="ssh://$ME@127.0.0.1:$PORT$WORK/remote/gamma.db"
sum=0
for db in "$WORK"/clients/*.db "$WORK/remote/gamma.db"; do
  sum=$((sum + $(q "$db" "SELECT count(*) FROM exchange")))
done
expect_eq "$sum" 47 "exchanges in the four client databases"

# rows in flight: beta's database as it was while its last exchanges were
# under way (not complete, no end) is pulled first, then the finished one
cp "$WORK/clients/beta.db" "$WORK/beta-early.db"
q "$WORK/beta-early.db" "UPDATE exchange SET complete = 0, t6_ns = NULL, dr = 0 WHERE id > (SELECT max(id) - 5 FROM exchange);
  UPDATE connection SET complete = 0, t7_ns = NULL, end_class = NULL WHERE id IN (SELECT connection_id FROM exchange WHERE complete = 0)"

C=$WORK/central.db
for target in "$C" "$PG_URI"; do
  "$MANAGER" pull -q -o "$target" "$WORK/beta-early.db"
  "$MANAGER" pull -o "$target" -e "$RSH" "$WORK/clients" "$SSH_URL" 2>"$WORK/pull.err" ||
    fail "pull into $target: $(cat "$WORK/pull.err")"
done
grep -q "4 sources, 0 skipped, 7 exchanges new -> postgresql://observe@/observe?host=$PGD" "$WORK/pull.err" ||
  fail "the pull's summary: $(cat "$WORK/pull.err")"
expect_eq "$(pq "SELECT count(*) FROM exchange")" "$sum" "exchanges in PostgreSQL"
expect_eq "$(pq "SELECT count(*) FROM exchange WHERE complete = 0")" \
  "$(q "$C" "SELECT count(*) FROM exchange WHERE complete = 0")" "in-flight rows brought up to date as in SQLite"
"$PYTHON" "$REPO/tests/pg/same_rows.py" "$C" client process connection exchange connection_metrics exchange_metrics ||
  fail "PostgreSQL's rows differ from SQLite's"
ok "every table's and view's rows equal SQLite's"
expect_eq "$(pq "SELECT interim_status || ' ' || (round(interim_wait_ms * 1e6) = interim_ns - t4_ns) FROM exchange_metrics
                 WHERE interim_status IS NOT NULL")" "100 true" "the interim status and its wait in PostgreSQL"
expect_eq "$(pq "SELECT tunnel || ' ' || websocket FROM connection_metrics WHERE tunnel IS NOT NULL")" \
  "127.0.0.1:$NGINX_PORT 0" "the tunnel's target in PostgreSQL"

# the same SQL on both: the partitions are below the tables, unseen
expect_eq "$(pq "SELECT count(*) FROM pg_inherits WHERE inhparent = 'exchange'::regclass")" 2 \
  "exchange: one day's partition and the DEFAULT one"
expect_eq "$(pq "SELECT version FROM observe_schema")" "$(q "$C" "PRAGMA user_version")" "schema version"

# pulling again adds nothing
"$MANAGER" pull -o "$PG_URI" -e "$RSH" "$WORK/clients" "$SSH_URL" 2>"$WORK/pull.err"
grep -q "0 exchanges new" "$WORK/pull.err" || fail "pulling again: $(cat "$WORK/pull.err")"
expect_eq "$(pq "SELECT count(*) FROM exchange") $(pq "SELECT count(*) FROM connection") $(pq "SELECT count(*) FROM process")" \
  "$sum $(q "$C" "SELECT count(*) FROM connection") $(q "$C" "SELECT count(*) FROM process")" "pulling again adds nothing"

# two pulls at once into a new store: the same rows, none twice
psql -X -q -d postgres -c "CREATE DATABASE twice"
URI2="postgresql://observe@/twice?host=$PGD"
"$MANAGER" pull -q -o "$URI2" -e "$RSH" "$WORK/beta-early.db" "$WORK/clients" "$SSH_URL" 2>"$WORK/p1.err" & p1=$!
"$MANAGER" pull -q -o "$URI2" -e "$RSH" "$WORK/beta-early.db" "$WORK/clients" "$SSH_URL" 2>"$WORK/p2.err" & p2=$!
wait $p1 || fail "first of two pulls at once: $(cat "$WORK/p1.err")"
wait $p2 || fail "second of two pulls at once: $(cat "$WORK/p2.err")"
PGDATABASE=twice "$PYTHON" "$REPO/tests/pg/same_rows.py" "$C" client process connection exchange exchange_metrics ||
  fail "two pulls at once: rows differ from SQLite's"
ok "two pulls at once: the same rows as SQLite's"

# a store of schema version 3 (before the core's columns) gets them, and
# its views again, when a pull opens it
tq() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d twice -c "$1"; }
tq "DROP VIEW connection_metrics, exchange_metrics;
  ALTER TABLE exchange DROP COLUMN interim_status, DROP COLUMN interim_ns;
  ALTER TABLE connection DROP COLUMN tunnel, DROP COLUMN websocket,
    DROP COLUMN ws_messages_sent, DROP COLUMN ws_messages_received;
  UPDATE observe_schema SET version = 3" || fail "cannot make a store of version 3"
"$MANAGER" pull -q -o "$URI2" "$WORK/clients/epsilon.db" 2>"$WORK/p3.err" ||
  fail "pull into a store of version 3: $(cat "$WORK/p3.err")"
expect_eq "$(tq "SELECT version FROM observe_schema") $(tq "SELECT count(*) FROM information_schema.columns
  WHERE table_name IN ('exchange', 'connection') AND column_name IN ('interim_status', 'interim_ns',
  'tunnel', 'websocket', 'ws_messages_sent', 'ws_messages_received')")" "4 6" "version 3 upgraded: the version, the columns"
expect_eq "$(tq "SELECT count(interim_wait_ms) || ' ' || count(*) FROM exchange_metrics")" "0 $sum" \
  "version 3 upgraded: its rows in the views, NULL in the new columns"

# stats and report from the URI: what they say of the SQLite database
"$MANAGER" stats "$C" > "$WORK/stats-sqlite.txt"
"$MANAGER" stats "$PG_URI" > "$WORK/stats-pg.txt"
diff "$WORK/stats-sqlite.txt" "$WORK/stats-pg.txt" || fail "stats of the URI differ from the SQLite database's"
ok "stats of the URI: the same table ($(wc -l < "$WORK/stats-pg.txt") lines)"
"$MANAGER" stats "$PG_URI" --by server --where "status = 200" --csv > "$WORK/stats-pg.csv"
"$MANAGER" stats "$C" --by server --where "status = 200" --csv | diff - "$WORK/stats-pg.csv" ||
  fail "filtered stats differ"
"$MANAGER" findings "$C" --csv > "$WORK/findings-sqlite.csv"
"$MANAGER" findings "$PG_URI" --csv | diff "$WORK/findings-sqlite.csv" - || fail "findings of the URI differ"
ok "findings of the URI: the same ($(wc -l < "$WORK/findings-sqlite.csv") lines)"
"$MANAGER" report "$PG_URI" -o "$WORK/report" >/dev/null 2>"$WORK/report.err" ||
  fail "report of the URI: $(cat "$WORK/report.err")"
[ -s "$WORK/report/index.html" ] || fail "no index.html"
grep -q "beta" "$WORK/report/summary.txt" || fail "the report's summary lacks beta"
ok "report of the URI ($(ls "$WORK/report" | wc -l) files)"
! compgen -G "${TMPDIR:-/tmp}/observe-pg-*/snapshot.db" >/dev/null || fail "a snapshot file was left behind"

# refused clearly, exit status 2, no password shown
refused() {  # WHAT PATTERN ENV-AND-COMMAND...
  local what=$1 pattern=$2 status; shift 2
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  status=$?
  set -e
  expect_eq "$status" 2 "$what: exit status"
  grep -q -- "$pattern" "$WORK/err" || fail "$what: not said: $(cat "$WORK/err")"
  ! grep -qF -- "$PGPASSWORD" "$WORK/err" "$WORK/out" || fail "$what: the password was shown"
  ! grep -qF -- "s3cret" "$WORK/err" "$WORK/out" || fail "$what: the password was shown"
  ok "$what: $(head -1 "$WORK/err")"
}
refused "a wrong password" "cannot connect: .*password authentication failed for user \"observe\"" \
  env PGPASSWORD=s3cret "$MANAGER" pull -q -o "$PG_URI" "$WORK/clients/alpha.db"
refused "a wrong password (stats)" "password authentication failed" \
  env PGPASSWORD=s3cret "$MANAGER" stats "$PG_URI"
DEAD=$(free_port)
refused "an unreachable server" "postgresql://observe@127.0.0.1:$DEAD/observe: cannot connect: .*Connection refused" \
  "$MANAGER" pull -q -o "postgresql://observe@127.0.0.1:$DEAD/observe" "$WORK/clients/alpha.db"
refused "an unreachable server (report)" "cannot connect" \
  "$MANAGER" report "postgresql://observe@127.0.0.1:$DEAD/observe" -o "$WORK/r2"
refused "a password in the URI" "a password in the URI would show in the process list" \
  "$MANAGER" pull -q -o "postgresql://observe:s3cret@/observe?host=$PGD" "$WORK/clients/alpha.db"
expect_eq "$(pq "SELECT count(*) FROM exchange")" "$sum" "nothing changed by the refused pulls"

# a client that may reach the store pushes to it: slicer -o URI
mkdir -p "$WORK/spool-delta"
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/spool-delta" OBSERVE_CLIENT=delta \
  curl -sf -o /dev/null -o /dev/null -o /dev/null "$URL/100b" "$URL/100b" "$URL/50k"
for _ in 1 2; do
  "$SLICER" -o "$PG_URI" "$WORK/spool-delta" 2>"$WORK/push.err" || fail "slicer -o URI: $(cat "$WORK/push.err")"
done
grep -q "postgresql://observe@/observe?host=$PGD (0 exchanges new there)" "$WORK/push.err" ||
  fail "pushing again: $(cat "$WORK/push.err")"
expect_eq "$(pq "SELECT count(*) FROM exchange_metrics WHERE client = 'delta'")" 3 "slicer -o URI pushed delta's exchanges, once"
! compgen -G "${TMPDIR:-/tmp}/observe-push-*" >/dev/null || fail "slicer -o URI left its temporary database"
refused "slicer -o URI, a wrong password" "password authentication failed" \
  env PGPASSWORD=s3cret "$SLICER" -o "$PG_URI" "$WORK/spool-delta"
