#!/usr/bin/env bash
# otlp_export.sh - manager export --otlp from a PostgreSQL central store
# (issue 32), against a receiver of our own on loopback
# (tests/servers/otlp_receiver.py). Two clients pulled into PostgreSQL and
# into an SQLite central database, one of them first as it was while its
# last exchanges were under way:
# - exchanges in flight are held in the mark (pending) and sent once a
#   pull has brought them up to date;
# - the span ids the receiver takes from the PostgreSQL store are, as a
#   multiset, those of the SQLite store's export (and of slicer export
#   --format otlp of it); the metrics are the same data points;
# - a receiver that goes away in the middle of an export and comes back,
#   and an export stopped while it waits then run again: no span lost, none
#   sent twice (the mark is kept in PostgreSQL, table otlp_mark);
# - an export run again sends no span.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/pg.sh"
source "$REPO/tests/lib/otel.sh"
MANAGER=$BUILD/bin/manager
need_cmd ab
need_cmd curl
pg_start

make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
mkdir -p "$WORK/clients"
client_run alpha "$WORK/clients/alpha.db" curl -s -o /dev/null -o /dev/null -o /dev/null \
  "$URL/100b?token=SECRETTOKEN" "$URL/50k" "$URL/missing"
# more than two batches (128 exchanges each) on keep-alive connections
client_run beta "$WORK/clients/beta.db" ab -q -k -n 300 -c 2 "$URL/100b"

# beta's database as it was while its last exchanges were under way
cp "$WORK/clients/beta.db" "$WORK/beta-early.db"
q "$WORK/beta-early.db" "UPDATE exchange SET complete = 0, t6_ns = NULL, dr = 0 WHERE id > (SELECT max(id) - 5 FROM exchange);
  UPDATE connection SET complete = 0, t7_ns = NULL, end_class = NULL WHERE id IN (SELECT connection_id FROM exchange WHERE complete = 0);
  UPDATE process SET ended = 0, end_ns = NULL"

# export_bg NAME STORE: manager export of STORE to the receiver on
# $RECV_PORT in the background (EXPORT_PID), its messages in NAME.log
export_bg() {
  "$MANAGER" export --otlp "http://127.0.0.1:$RECV_PORT" "$2" 2>"$WORK/$1.log" &
  EXPORT_PID=$!
  at_exit "kill $EXPORT_PID 2>/dev/null"
}
# matched NAME: the receiver NAME has each span of the SQLite store once
matched() { "$PYTHON" "$REPO/tests/slicer/check_push.py" match "$WORK/$1" "$WORK/want.json" >"$WORK/match.out"; }
trace_requests() { grep -c '"/v1/traces"' "$WORK/$1/log.jsonl"; }

# the early database first, exported from PostgreSQL: its exchanges in
# flight are held, their ids kept in the mark (pending, a bytea)
C=$WORK/central.db
for target in "$C" "$PG_URI"; do
  "$MANAGER" pull -q -o "$target" "$WORK/beta-early.db" 2>"$WORK/pull.err" ||
    fail "pull into $target: $(cat "$WORK/pull.err")"
done
receiver_start held
export_bg held "$PG_URI"
wait "$EXPORT_PID" || fail "export of the early store: $(cat "$WORK/held.log")"
expect_eq "$(pq "SELECT length(pending) / 8 FROM otlp_mark")" 5 "exchanges held in flight in the mark"

for target in "$C" "$PG_URI"; do
  "$MANAGER" pull -q -o "$target" "$WORK/clients" 2>"$WORK/pull.err" ||
    fail "pull into $target: $(cat "$WORK/pull.err")"
done
n=$(q "$C" "SELECT count(*) FROM exchange")
[ "$n" -gt 256 ] || fail "only $n exchanges: not three batches"
expect_eq "$(pq "SELECT count(*) FROM exchange")" "$n" "exchanges in PostgreSQL"
expect_eq "$(pq "SELECT count(*) FROM exchange WHERE complete = 0")" 0 "exchanges in flight once pulled again"
"$SLICER" export -d "$C" --format otlp -o "$WORK/want.json"

# the held ones go once they are final, with what is new
export_bg held "$PG_URI"
wait "$EXPORT_PID" || fail "export of the final store: $(cat "$WORK/held.log")"
matched held || fail "exchanges held, then final: $(cat "$WORK/match.out")"
receiver_stop
ok "exchanges in flight held in the mark, sent once final: $(cat "$WORK/match.out")"

# the reference: the SQLite central store's export
receiver_start lite
export_bg lite "$C"
wait "$EXPORT_PID" || fail "export of the SQLite store: $(cat "$WORK/lite.log")"
matched lite || fail "the SQLite store's export: $(cat "$WORK/match.out")"
receiver_stop
ok "SQLite store: $(cat "$WORK/match.out")"

# PostgreSQL: the receiver answers one batch and goes away; started again
# on its port, the export's retry finds it and goes on
receiver_start pg --exit-after 1
export_bg pg "$PG_URI"
wait_until 30 grep -qs "to retry in" "$WORK/pg.log" ||
  fail "no retry said while the receiver was away: $(cat "$WORK/pg.log")"
wait "$RECV_PID" || true
receiver_start pg --port "$RECV_PORT"
wait "$EXPORT_PID" || fail "export across the receiver's restart: $(cat "$WORK/pg.log")"
grep -q "http://127.0.0.1:$RECV_PORT/v1/traces: .*; [0-9]* spans to retry in" "$WORK/pg.log" ||
  fail "the failed request was not said with its URL: $(cat "$WORK/pg.log")"
matched pg || fail "PostgreSQL store, receiver restarted: $(cat "$WORK/match.out")"
ok "PostgreSQL store, receiver gone after a batch and back: $(cat "$WORK/match.out")"

# run again: no span sent twice (the metrics go again, cumulative)
before=$(trace_requests pg)
"$MANAGER" export -q --otlp "http://127.0.0.1:$RECV_PORT" "$PG_URI" 2>"$WORK/again.log" ||
  fail "export again: $(cat "$WORK/again.log")"
expect_eq "$(trace_requests pg)" "$before" "trace requests of an export run again"
matched pg || fail "export again: $(cat "$WORK/match.out")"
receiver_stop

# the export itself stopped while it waits for a receiver gone away, then
# run again: it goes on from its mark in PostgreSQL
receiver_start stopped --exit-after 1
export_bg stopped "$PG_URI"
wait_until 30 grep -qs "to retry in" "$WORK/stopped.log" ||
  fail "no retry said while the receiver was away: $(cat "$WORK/stopped.log")"
kill -TERM "$EXPORT_PID"
wait "$EXPORT_PID" 2>/dev/null || true
wait "$RECV_PID" || true
expect_eq "$(trace_requests stopped)" 1 "trace requests before the export was stopped"
receiver_start stopped --port "$RECV_PORT"
"$MANAGER" export --otlp "http://127.0.0.1:$RECV_PORT" "$PG_URI" 2>"$WORK/stopped2.log" ||
  fail "export after a stopped one: $(cat "$WORK/stopped2.log")"
matched stopped || fail "PostgreSQL store, export stopped and run again: $(cat "$WORK/match.out")"
ok "PostgreSQL store, export stopped and run again: $(cat "$WORK/match.out")"
receiver_stop
expect_eq "$(pq "SELECT count(*) FROM otlp_mark WHERE pending IS NULL AND next_id > 0")" 3 \
  "marks kept in PostgreSQL, one per receiver, nothing pending"

# the same metrics: every series' count, buckets and sum (to rounding)
"$PYTHON" - "$WORK/lite" "$WORK/pg" <<'PY' || fail "the metrics of the two stores differ"
import json, os, sys

def points(recv):
    """The data points of the last metrics request recv took."""
    log = [json.loads(l) for l in open(os.path.join(recv, "log.jsonl"))]
    n = [r["n"] for r in log if r["path"] == "/v1/metrics"][-1]
    req = json.load(open(os.path.join(recv, "%04d.json" % n)))
    out = {}
    for rm in req["resourceMetrics"]:
        for sm in rm["scopeMetrics"]:
            for m in sm["metrics"]:
                for p in m["histogram"]["dataPoints"]:
                    key = (m["name"], json.dumps(sorted(json.dumps(a, sort_keys=True)
                                                        for a in p.get("attributes", []))))
                    out[key] = (p["count"], p.get("bucketCounts"), p["startTimeUnixNano"],
                                float(p.get("sum", 0)))
    return out

lite, pg = points(sys.argv[1]), points(sys.argv[2])
assert lite.keys() == pg.keys(), (set(lite) ^ set(pg))
for k in lite:
    a, b = lite[k], pg[k]
    assert a[:3] == b[:3], (k, a, b)
    assert abs(a[3] - b[3]) <= 1e-9 * max(1.0, abs(a[3])), (k, a, b)
print("metrics: %d series, the same counts, buckets and sums" % len(lite))
PY
ok "the metrics of the PostgreSQL store are the SQLite store's"
! grep -lF SECRETTOKEN "$WORK"/{lite,pg,stopped}/[0-9]*.json || fail "a query string was sent"

# a writer under way (a pull's transaction, open on exchange): the export
# waits for it to end before it reads past its mark, so that no row
# numbered before those it sends can commit after them
mkfifo "$WORK/writer.sql"
psql -X -q -v ON_ERROR_STOP=1 -h "$PGD" -U observe -d observe <"$WORK/writer.sql" >"$WORK/writer.out" 2>&1 &
WRITER_PID=$!
at_exit "kill $WRITER_PID 2>/dev/null"
exec 9>"$WORK/writer.sql"
echo "BEGIN; INSERT INTO exchange(connection_id, seq, t3_ns, complete)
  SELECT connection_id, seq + 1000, t3_ns, 1 FROM exchange ORDER BY id DESC LIMIT 1;" >&9
writing() { [ "$(pq "SELECT count(*) FROM pg_locks WHERE relation = 'exchange'::regclass AND mode = 'RowExclusiveLock'")" -ge 1 ]; }
export_waits() { [ "$(pq "SELECT count(*) FROM pg_locks WHERE relation = 'exchange'::regclass AND NOT granted")" -ge 1 ]; }
wait_until 30 writing || fail "the writer's transaction did not start: $(cat "$WORK/writer.out")"
receiver_start writer
export_bg writer "$PG_URI"
wait_until 30 export_waits || fail "the export did not wait for the writer: $(cat "$WORK/writer.log")"
expect_eq "$(trace_requests writer 2>/dev/null || echo 0)" 0 "trace requests while a writer is under way"
# \q: the processes started since hold the pipe open too
printf 'COMMIT;\n\\q\n' >&9
exec 9>&-
wait "$WRITER_PID" || fail "the writer: $(cat "$WORK/writer.out")"
wait "$EXPORT_PID" || fail "export after the writer: $(cat "$WORK/writer.log")"
"$PYTHON" - "$WORK/writer/log.jsonl" "$(grep -o '"spanId"' "$WORK/want.json" | wc -l)" <<'PY' ||
import collections, json, sys
got = collections.Counter(s for l in open(sys.argv[1]) for r in [json.loads(l)]
                          if r["path"] == "/v1/traces" and r["status"] == 200 for s in r["spans"])
assert max(got.values()) == 1, "a span twice"
assert sum(got.values()) == int(sys.argv[2]) + 1, (sum(got.values()), sys.argv[2])
PY
  fail "the export after the writer: not every span once, the writer's one among them"
ok "an export waits for a writer under way, then sends its row too"
