#!/usr/bin/env bash
# errors.sh - manager stats and manager report when a query fails while its
# rows are read (a filter that SQLite accepts but that fails on the rows:
# abs() of the smallest integer overflows): exit status 2 and SQLite's
# reason on stderr, for the table and every view; the report neither
# crashes (it freed the query's text twice on that path) nor leaves a page.
source "$(dirname "$0")/../lib/common.sh"
MANAGER=$BUILD/bin/manager
[ -x "$BUILD/bin/spoolgen" ] || fail "$BUILD/bin/spoolgen is not built"
"$BUILD/bin/spoolgen" "$WORK/a.spool" 300
"$SLICER" -q -o "$WORK/a.db" "$WORK/a.spool"
expect_eq "$(q "$WORK/a.db" "SELECT count(*) FROM exchange")" 300 "exchanges"
bad='abs(-9223372036854775807 - 1) > 0'

for view in "" endings keepalive size family; do
  what=${view:+--view $view}
  rc=0
  "$MANAGER" stats "$WORK/a.db" ${view:+--view "$view"} --where "$bad" >"$WORK/out" 2>"$WORK/err" || rc=$?
  expect_eq "$rc" 2 "manager stats ${what:-(table)}: exit status"
  grep -q '^manager: .*integer overflow$' "$WORK/err" || fail "manager stats ${what:-(table)}: no reason on stderr: $(cat "$WORK/err")"
  ok "manager stats ${what:-(table)}: $(cat "$WORK/err")"
  # and with a filter that holds, a table
  "$MANAGER" stats "$WORK/a.db" ${view:+--view "$view"} --where 'dr > 0' >"$WORK/out"
  [ "$(wc -l < "$WORK/out")" -ge 2 ] || fail "manager stats ${what:-(table)}: no rows with a good filter"
done

rc=0
"$MANAGER" findings "$WORK/a.db" --where "$bad" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "$rc" 2 "manager findings: exit status"
grep -q '^manager: .*integer overflow$' "$WORK/err" || fail "manager findings: no reason on stderr: $(cat "$WORK/err")"
ok "manager findings: $(cat "$WORK/err")"
"$MANAGER" findings "$WORK/a.db" --where 'dr > 0' --csv >"$WORK/out" ||
  fail "manager findings: a good filter failed"
rc=0
"$MANAGER" report "$WORK/a.db" -o "$WORK/report" --where "$bad" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "$rc" 2 "manager report: exit status (not killed by a signal)"
grep -q "^manager: $WORK/a.db: integer overflow$" "$WORK/err" || fail "manager report: no reason: $(cat "$WORK/err")"
! grep -qi 'free\|abort' "$WORK/err" || fail "manager report: $(cat "$WORK/err")"
[ ! -e "$WORK/report/index.html" ] || fail "manager report: a page after an error"
ok "manager report: $(head -1 "$WORK/err")"
