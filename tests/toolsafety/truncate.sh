#!/usr/bin/env bash
# truncate.sh - issue 13 item 11: a spool cut short while the slicer reads
# it (its writer's file system full, a user's truncate, a cleaner) killed
# the slicer with SIGBUS: it mapped the whole file as it was at open, and
# the pages past the new end cannot be read. Now it reads what is there,
# says that the file shrank, keeps every record before the cut and exits 1.
#
# To cut the file at a known moment, another connection holds the
# database's write lock: the slicer opens the spool, then waits for the
# lock (its busy timeout); the spool is cut to its first 101 records and
# the lock released.
source "$(dirname "$0")/../lib/common.sh"
DB=$WORK/run.db
S=$WORK/spool.d
mkdir -m 0700 "$S"
"$BUILD/bin/spoolgen" "$S/big.spool" 20000 cut
"$SLICER" -q -o "$DB"   # the schema, so that the lock can be taken

"$PYTHON" - "$DB" "$WORK/locked" "$WORK/release" <<'PY' &
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
end = time.time() + 120
while not os.path.exists(sys.argv[3]) and time.time() < end:
    time.sleep(0.01)
db.execute("COMMIT")
PY
LOCKER=$!
at_exit "kill $LOCKER 2>/dev/null"
wait_until 60 test -e "$WORK/locked" || fail "the lock was not taken in 60 s"

"$SLICER" -o "$DB" "$S" 2> "$WORK/slicer.err" &
SLICER_PID=$!
# the spool is open (a descriptor, or a mapping of it)
has_spool() {
  grep -qF "$S/big.spool" "/proc/$SLICER_PID/maps" 2>/dev/null ||
    ls -l "/proc/$SLICER_PID/fd" 2>/dev/null | grep -qF "$S/big.spool"
}
wait_until 60 has_spool || fail "the slicer did not open the spool in 60 s"
truncate -s $((4096 + 101 * 128)) "$S/big.spool"
touch "$WORK/release"
rc=0
wait "$SLICER_PID" || rc=$?
cat "$WORK/slicer.err"
[ "$rc" -lt 128 ] || fail "the slicer died of signal $((rc - 128)) ($(kill -l $((rc - 128))))"
expect_eq "$rc" 1 "the slicer's exit status"
grep -qE "^slicer: $S/big.spool: the file shrank to 17024 bytes while it was read" "$WORK/slicer.err" ||
  fail "the cut is not said"
ok "the cut is said, naming the file"
wait "$LOCKER"   # (its last close checkpoints the database, locked a moment)
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 100 "the exchanges before the cut are kept"
