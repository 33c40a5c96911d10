#!/usr/bin/env bash
# follow.sh - slicer --follow DIR (issue 17): while ab runs under the layer,
# every exchange is stored soon after the run's end (the delay printed; the
# bound is generous, a loaded machine may be slow); a writer that restarts
# (a new process, a new spool) is followed; idle, slicer sleeps in poll;
# SIGTERM during a run leaves a consistent database and exit status 0, and
# a slicer started again catches up with what it missed. A spool takes its
# name only once its header is written (strace): a follower never finds one
# empty.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
DB=$WORK/follow.db

sleeping() { grep -q "poll" "/proc/$FPID/wchan" 2>/dev/null && grep -q '^State:.*S' "/proc/$FPID/status"; }
follow_start() {
  "$SLICER" --follow -o "$DB" "$SPOOL" 2>"$WORK/follow.err" &
  FPID=$!
  at_exit "kill $FPID 2>/dev/null || true"
  wait_until 20 test -s "$DB" || fail "slicer --follow made no database: $(cat "$WORK/follow.err")"
  # ready: its first scan done, waiting in poll() (a stop signal before
  # that is taken too, but one before its main() runs is not)
  wait_until 20 sleeping || fail "slicer --follow never waited: $(cat "$WORK/follow.err")"
}
count() { q "$DB" "SELECT count(*) FROM exchange" 2>/dev/null || echo 0; }
stored() { [ "$(count)" -ge "$1" ]; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

follow_start
preload ab -q -k -n 400 -c 4 "$URL/100b" >/dev/null
t_end=$(date +%s%N)
wait_until 30 stored 400 || fail "after the run: $(count) of 400 exchanges stored"
ok "all 400 exchanges stored $(ms_since "$t_end") ms after the run's end"
expect_eq "$(count)" 400 "exchanges stored, none twice"

# the writer restarts: a new process, a new spool file
preload ab -q -n 100 -c 2 "$URL/50k" >/dev/null
t_end=$(date +%s%N)
wait_until 30 stored 500 || fail "after the second run: $(count) of 500 stored"
ok "a new writer followed: 500 exchanges, $(ms_since "$t_end") ms after its end"
expect_eq "$(q "$DB" "SELECT count(*) FROM process") $(q "$DB" "SELECT count(*) FROM exchange WHERE complete = 0")" \
  "2 0" "two processes, nothing left in flight"

# idle: no writer runs, slicer sleeps in poll() (no timer ticking)
wait_until 10 sleeping || fail "idle slicer not asleep in poll: $(cat /proc/$FPID/wchan)"
t1=$(awk '{print $14 + $15}' "/proc/$FPID/stat")
curl -sf -o /dev/null "$URL/100b"   # a program that is not observed: nothing for slicer
wait_until 10 sleeping || fail "idle slicer woke up"
ok "idle: asleep in $(cat "/proc/$FPID/wchan") ($t1 CPU ticks so far)"

# SIGTERM while ab runs: what is stored is consistent, exit status 0
preload ab -q -n 2000 -c 1 "$URL/50k" >/dev/null &
AB=$!
wait_until 30 stored 600 || fail "the third run is not followed"
kill -TERM "$FPID"
set +e
wait "$FPID"
status=$?
set -e
[ "$status" = 0 ] || fail "slicer --follow exit status on SIGTERM: $status: $(cat "$WORK/follow.err")"
ok "slicer --follow exit status on SIGTERM = 0"
n=$(count)
ok "stopped with $n exchanges stored"
expect_eq "$(q "$DB" "PRAGMA integrity_check")" ok "database integrity after SIGTERM"
expect_eq "$(q "$DB" "PRAGMA foreign_key_check" | wc -l)" 0 "no row without its parent"
wait "$AB"

# started again, it catches up with what it missed
follow_start
wait_until 30 stored 2500 || fail "after a restart: $(count) of 2500 stored"
expect_eq "$(count)" 2500 "a restarted slicer stored what it missed"
kill -TERM "$FPID"
wait "$FPID" || fail "second slicer --follow: exit status $?"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE complete = 0")" 0 "nothing left in flight"

# a spool file is made as NAME.spool.new (which no reader takes), its
# header written, then renamed: a follower never finds a spool empty
need_cmd strace
strace -f -e trace=openat,pwrite64,rename,renameat,renameat2 -o "$WORK/strace.log" \
  -E LD_PRELOAD="$LAYER_PRELOAD" -E OBSERVE_DIR="$SPOOL" ab -q -n 1 "$URL/100b" >/dev/null ||
  fail "ab under strace failed"
"$PYTHON" - "$WORK/strace.log" <<'PY' || fail "a spool took its name before its header was written (above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
made = [(i, m) for i, l in enumerate(lines)
        if (m := re.search(r'openat\([^,]+, "([^"]*\.spool[^"]*)", [^)]*O_CREAT[^)]*\) = (\d+)', l))]
assert len(made) == 1, f"one spool made, not {len(made)}"
i, m = made[0]
name, fd = m.group(1), m.group(2)
assert name.endswith(".spool.new"), f"made under its own name: {name}"
after = lines[i + 1:]
w = next(j for j, l in enumerate(after) if re.search(rf"pwrite64\({fd},", l))
r = next(j for j, l in enumerate(after) if "rename" in l and f'"{name}"' in l)
assert w < r and after[r].rstrip().endswith("= 0"), (after[w], after[r])
print(f"{name}: written, then renamed to {name[:-4]}")
PY
ok "a spool takes its name once its header is written"
