#!/usr/bin/env bash
# live.sh - observe --live under a pseudo terminal (script -q): during a
# 3-second ApacheBench run the table is drawn at least twice, names
# nginx's address, its counts of exchanges grow and stay within what the
# database ends with, and the usual per-exchange table and summary line
# follow it. Without a terminal, --live adds nothing.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd script
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT

# 3 s at most, 200,000 requests at most
script -q -e -c "'$OBSERVE' --live -o '$WORK/live.db' -- ab -q -t 3 -n 200000 -c 2 '$URL/100b' >/dev/null" \
  "$WORK/tty.log" </dev/null >/dev/null || fail "observe --live under script: status $?"
"$PYTHON" - "$WORK/tty.log" "$NGINX_PORT" "$(q "$WORK/live.db" 'SELECT count(*) FROM exchange')" <<'PY' ||
import re, sys
log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
port, final = sys.argv[2], int(sys.argv[3])
heads = [m.start() for m in re.finditer(r"observe --live: ", log)]
assert len(heads) >= 2, f"{len(heads)} refreshes in a 3 s run"
counts = [int(n) for n in re.findall(r"observe --live: .*?, (\d+) exchanges", log)]
rows = re.findall(r"\n127\.0\.0\.1:" + port + r" +(\d+) +([\d.]+) ", log)
assert len(rows) == len(heads), ("a row for nginx in every refresh", rows)
assert counts == sorted(counts) and counts[-1] > counts[0] and counts[-1] <= final, (counts, final)
assert [int(n) for n, _ in rows] == counts, (rows, counts)
assert float(rows[-1][1]) > 0, rows  # a rate
tail = log[heads[-1]:]
# the live table erased (cursor up, clear), then the usual table and line
summary = tail.find("program        pid peer")
assert summary > 0 and "\x1b[J" in tail[:summary], "the usual table does not follow"
assert re.search(r"observe: %d exchanges on \d+ connections in 1 processes" % final, tail), tail[-300:]
print(f"ok: {len(heads)} refreshes, exchanges {counts}, then the usual table ({final} exchanges)")
PY
  fail "the live view: $(tail -c 600 "$WORK/tty.log" | cat -v)"

# no terminal: nothing more than without --live
"$OBSERVE" --live -o "$WORK/quiet.db" -- ab -q -n 20 "$URL/100b" >/dev/null 2>"$WORK/err"
! grep -q "observe --live" "$WORK/err" || fail "--live drew on a file"
grep -q "^observe: 20 exchanges on 20 connections" "$WORK/err" || fail "no summary: $(tail -2 "$WORK/err")"
ok "without a terminal --live adds nothing: $(tail -1 "$WORK/err")"
