#!/usr/bin/env bash
# launcher.sh - observe passes exit status and signals through, appends to
# LD_PRELOAD, warns about what it cannot see; OBSERVE_DISABLE=1 records
# nothing. (What libobserve.so exports: exports.sh.)
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
DB=$WORK/run.db

set +e
"$OBSERVE" -q -o "$DB" -- sh -c 'exit 7' 2>/dev/null
status=$?
set -e
expect_eq "$status" 7 "exit status passed through"

set +e
bash -c "\"$OBSERVE\" -q -o \"$DB\" -- sh -c 'kill -TERM \$\$'" 2>/dev/null
status=$?
set -e
expect_eq "$status" 143 "death by SIGTERM passed through (128+15)"

# observe itself dies by the signal (a plain exit 143 would look the same to a shell)
expect_eq "$(python3 - "$OBSERVE" "$DB" <<'PY'
import subprocess, sys
obs, db = sys.argv[1:]
r1 = subprocess.run([obs, "-q", "-o", db, "--", "sh", "-c", "kill -TERM $$"], stderr=subprocess.DEVNULL)
r2 = subprocess.run([obs, "-q", "-o", db, "--", "sh", "-c", "kill -KILL $$"], stderr=subprocess.DEVNULL)
r3 = subprocess.run([obs, "-q", "-o", db, "--", "sh", "-c", "exit 143"], stderr=subprocess.DEVNULL)
print(r1.returncode, r2.returncode, r3.returncode)
PY
)" "-15 -9 143" "observe's own status: killed by SIGTERM, by SIGKILL; exit 143 stays an exit"

set +e
"$OBSERVE" -q -o "$DB" -- /nonexistent/command 2>"$WORK/err"
status=$?
set -e
expect_eq "$status" 127 "a missing command gives 127"
grep -q "cannot run /nonexistent/command" "$WORK/err" || fail "no message for a missing command"

# appends to LD_PRELOAD instead of replacing it
# (a sanitized observe needs the ASan runtime first, and puts it first)
first=${OBSERVE_PRELOAD_FIRST:+$OBSERVE_PRELOAD_FIRST:}
value=$(LD_PRELOAD=${first}libc.so.6 "$OBSERVE" -q -o "$DB" -- sh -c 'printf %s "$LD_PRELOAD"')
case $value in
  "${first}"*libc.so.6:*libobserve.so) ok "LD_PRELOAD appended: $value" ;;
  *) fail "LD_PRELOAD is '$value'" ;;
esac

# a static program gets a warning
if [ -x /bin/busybox ] || command -v ldconfig >/dev/null; then
  static=$(command -v ldconfig || true)
  if [ -n "$static" ] && ! file -L "$static" 2>/dev/null | grep -q dynamic; then
    "$OBSERVE" -q -o "$DB" -- "$static" --version >/dev/null 2>"$WORK/err" || true
    grep -q "statically linked" "$WORK/err" || fail "no warning for static $static"
    ok "warning for a statically linked program"
  fi
fi

# a real run: the table on stderr, rows in the database
make_site "$WORK/site"
nginx_start "$WORK/site"
"$OBSERVE" -o "$DB" -- curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b" 2>"$WORK/table"
grep -q "Tw ms" "$WORK/table" || fail "no table printed"
grep -q "1 exchanges on 1 connections" "$WORK/table" || fail "summary line: $(tail -1 "$WORK/table")"
ok "observe printed its table"

# diagnostics only when OBSERVE_LOG asks
curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b" 2>"$WORK/bare.err"
preload curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b" 2>"$WORK/observed.err"
cmp -s "$WORK/bare.err" "$WORK/observed.err" || fail "the layer wrote to stderr without OBSERVE_LOG"
ok "silent without OBSERVE_LOG"
OBSERVE_LOG=2 preload curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b" 2>"$WORK/log.err"
grep -q '^observe\[curl:[0-9]*\]: spool ' "$WORK/log.err" || fail "OBSERVE_LOG=2 said: $(cat "$WORK/log.err")"
ok "OBSERVE_LOG=2 names the spool, prefixed with program and pid"

# OBSERVE_DISABLE=1 passes everything through and writes no spool
rm -rf "$SPOOL"; mkdir -p "$SPOOL"
OBSERVE_DISABLE=1 preload curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b"
expect_eq "$(find "$SPOOL" -type f | wc -l)" 0 "spool files with OBSERVE_DISABLE=1"

# a process that never connects leaves no spool
preload sh -c 'echo hi >/dev/null'
expect_eq "$(find "$SPOOL" -type f | wc -l)" 0 "spool files of a process that never connects"

# spool files are private
preload curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b"
expect_eq "$(stat -c %a "$(find "$SPOOL" -name '*.spool' | head -1)")" 600 "spool file mode"
rm -rf "$WORK/newdir"
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/newdir/spool" curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/100b"
expect_eq "$(stat -c %a "$WORK/newdir/spool")" 700 "spool directory mode"
