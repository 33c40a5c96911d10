#!/usr/bin/env bash
# selftest.sh - the zoo's own checks can fail: curl's run through zoo.sh is
# kept, then check.py is run again on its files, doctored one way at a time
# (a request dropped from the log, a status lost, a negative Tw, a Dr above
# what nginx sent, a connection unterminated, another exit status, labels
# over TLS where no TLS library is hooked), and with
# expectations that are wrong (a passing check listed "always", a failure
# not listed, malformed lines); then docs/clients.md against expected.txt.
source "$(dirname "$0")/../lib/common.sh"
need_cmd curl
ZOO_DIR=$REPO/tests/clients

TMPDIR=$WORK KEEP_WORK=1 bash "$ZOO_DIR/zoo.sh" curl >"$WORK/zoo.out" 2>&1 ||
  { cat "$WORK/zoo.out"; fail "zoo.sh curl"; }
zoo=$(echo "$WORK"/observe-test.*)
[ -f "$zoo/plain.db" ] || fail "zoo.sh kept no work directory"
port=$(q "$zoo/plain.db" "SELECT peer_port FROM connection LIMIT 1")
h2port=$(q "$zoo/h2.db" "SELECT peer_port FROM connection LIMIT 1")

# check SCENARIO EXPECTED_FILE [check.py options]: check.py's output in
# $WORK/out, its exit status in RC
check() {
  local scenario=$1 expected=$2 p=$port; shift 2
  [ "$scenario" = h2 ] && p=$h2port
  set +e
  "$PYTHON" "$ZOO_DIR/check.py" --client curl --scenario "$scenario" \
    --scenarios "plain tls h2 h2c" --db "${DB:-$zoo/$scenario.db}" \
    --log "${LOG:-$zoo/$scenario.observed.log}" \
    --bare-log "$zoo/$scenario.bare.log" --port "$p" --exit 0 0 \
    --expected "$expected" --defs "$ZOO_DIR/defs" "$@" >"$WORK/out" 2>&1
  RC=$?
  set -e
}
# expect RC TEXT WHAT: the last check's exit status and a line of its output
expect() {
  [ "$RC" = "$1" ] && grep -qE -- "$2" "$WORK/out" ||
    { cat "$WORK/out"; fail "$3: expected exit $1 and /$2/"; }
  ok "$3"
}
real=$ZOO_DIR/expected.txt
exp() { printf '%s\n' "$@" >"$WORK/expected.txt"; echo "$WORK/expected.txt"; }

check plain "$real"
expect 0 'plain.log +ok' "curl plain as expected.txt says"
head -n -1 "$zoo/plain.observed.log" >"$WORK/short.log"
LOG=$WORK/short.log check plain "$(exp '# nothing known')"
expect 1 'plain.log +FAIL' "an unlisted failure fails"
check plain "$(exp 'curl plain.http always it was broken')"
expect 1 'plain.http +FIXED .*remove the line' "a listed failure that passes fails"
check plain "$(exp 'curl plain.http sometimes a race')"
expect 0 'plain.http +ok .*fails sometimes' "a 'sometimes' failure may pass"
check plain "$(exp 'curl plain.http no-such-word reason')"
expect 1 'expected.txt:1: want' "a malformed line is named"
check plain "$(exp 'nosuch plain.log always reason')"
expect 1 'no client nosuch' "an unknown client is named"
check plain "$(exp 'curl plain.tls always reason')"
expect 1 'no such check runs' "a check the scenario does not run"
check plain "$real" --exit 0 3
expect 1 'plain.exit +FAIL +exit 3 under the layer, 0 bare' "another exit status fails"

# the checks on doctored copies of the run
LOG=$WORK/short.log check plain "$real"
expect 1 'plain.log +FAIL +1 exchanges are no request' "an exchange missing from the log"
awk -F'\t' -v OFS='\t' '{ $11 = 10; print }' "$zoo/plain.observed.log" >"$WORK/small.log"
LOG=$WORK/small.log check plain "$real"
expect 1 'plain.dr +FAIL' "Dr above what nginx sent"
doctor() {  # SQL: a copy of the plain database, changed
  cp "$zoo/plain.db" "$WORK/doctored.db"
  q "$WORK/doctored.db" "$1"
  DB=$WORK/doctored.db check plain "$real"
}
doctor "UPDATE exchange SET status = NULL WHERE seq = 2"
expect 1 'plain.http +FAIL +GET /50k 200 read as GET /50k None' "a lost status"
doctor "UPDATE exchange SET tfb_ns = t4_ns - 1000000 WHERE seq = 1"
expect 1 'plain.durations +FAIL .*tw=-1.000' "a negative Tw"
doctor "UPDATE connection SET end_class = 'unterminated', t7_ns = NULL"
expect 1 'plain.ended +FAIL +1 connections unterminated' "an unterminated connection"
doctor "UPDATE connection SET t7_ns = NULL"
expect 1 'plain.ended +FAIL .*without their close' "a close not seen"
# over TLS: labels where the TLS library is not hooked (no protocol
# known) would come from encrypted bytes; a stream's lost status
cp "$zoo/h2.db" "$WORK/doctored.db"
q "$WORK/doctored.db" "UPDATE connection SET protocol = NULL"
DB=$WORK/doctored.db check h2 "$real"
expect 1 'h2.tls +FAIL +3 exchanges labelled from encrypted bytes' "labels without a hooked TLS library"
cp "$zoo/h2.db" "$WORK/doctored.db"
q "$WORK/doctored.db" "UPDATE exchange SET status = NULL WHERE seq = 3"
DB=$WORK/doctored.db check h2 "$real"
expect 1 'h2.http +FAIL +GET /1m 200 read as GET /1m None' "a stream's lost status"
ok "the zoo's checks fail when they should"

# docs/clients.md's table agrees with expected.txt, and would be caught if not
docs_check() { "$PYTHON" "$ZOO_DIR/docs_check.py" "$1" "$ZOO_DIR/defs" "$real"; }
docs_check "$REPO/docs/clients.md" || fail "docs/clients.md and expected.txt disagree"
ok "docs/clients.md's table matches expected.txt"
sed '/^| curl |/ s/| ✓ |/| A |/' "$REPO/docs/clients.md" >"$WORK/clients.md"  # plain
! cmp -s "$REPO/docs/clients.md" "$WORK/clients.md" || fail "could not doctor curl's row"
docs_check "$WORK/clients.md" >"$WORK/out" && fail "a wrong cell went unnoticed"
grep -q "curl plain: 'A'" "$WORK/out" || fail "docs_check: $(cat "$WORK/out")"
ok "a cell that disagrees with expected.txt is named"
