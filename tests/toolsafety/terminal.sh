#!/usr/bin/env bash
# terminal.sh - issue 13 item 11: control characters never go raw to a
# terminal. The tools print names that come from the data: spool and
# database file names, program paths, client names, request paths. Raw,
# an escape sequence in one of them drives the user's terminal (retitle
# it, clear it, hide lines, on some terminals answer back as if typed).
# Now every control character (C0, DEL, C1) and every byte that is not
# UTF-8 is shown as \xNN in the messages of slicer and manager, observe's
# table, manager stats' tables and views, and in CSV and JSON written to
# a terminal.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd script
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db
ESC=$'\e]0;pwned\a\e[2J\e[31m'   # retitle, clear the screen, red
C1=$'\xc2\x9b'                   # CSI as one C1 character
mkdir "$WORK/bin"
prog=$WORK/bin/${ESC}client$C1
cp "$BUILD/bin/hs_client" "$prog"   # GET /100b

# clean TAG FILE [cut]: FILE has no control character but newline (and CR
# from a terminal, or a progress bar's), and shows the escape as \x1b
# (JSON: \u001b) unless the names may be cut before it (cut)
clean() {
  "$PYTHON" - "$1" "$2" "${3:-}" <<'PY' || fail "$1: raw control characters"
import re, sys
# (the progress bars' own "erase the line" aside)
data = open(sys.argv[2], "rb").read().replace(b"\x1b[K", b"")
bad = re.findall(rb"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]", data)
if bad:
    sys.exit(f"{sys.argv[1]}: {len(bad)} raw control characters {sorted(set(bad))!r}")
if b"\\x1b" not in data and b"\\u001b" not in data and sys.argv[3] != "cut":
    sys.exit(f"{sys.argv[1]}: the escape is not shown as \\x1b: {data[:400]!r}")
print(f"ok: {sys.argv[1]}: no raw control character in {len(data)} bytes")
PY
}
# on_tty TAG CMD...: CMD's output as a terminal shows it (script(1))
on_tty() {
  local tag=$1 cmd
  shift
  printf -v cmd '%q ' "$@"
  # script(1) runs CMD with $SHELL; %q quoting ($'...') needs bash (dash,
  # the login shell on some machines, would run "$/tmp/...\E]0;...")
  SHELL=$(command -v bash) script -qec "$cmd" /dev/null > "$WORK/$tag.tty" || true
  clean "$tag" "$WORK/$tag.tty"
}

# observe's table: the program's name
"$OBSERVE" -o "$DB" -c "lab$ESC" -- "$prog" get "$NGINX_PORT" > /dev/null 2> "$WORK/observe.err" ||
  fail "observe: $(cat "$WORK/observe.err")"
clean observe "$WORK/observe.err"
on_tty observe-tty "$OBSERVE" -o "$DB" -c "lab$ESC" -- "$prog" get "$NGINX_PORT"
# a request path
preload "$PYTHON" - "$NGINX_PORT" "$ESC" <<'PY' || fail "the python client failed"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /x" + sys.argv[2].encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          b"Connection: close\r\n\r\n")
while s.recv(65536):
    pass
PY
# the slicer's messages: a damaged spool's name, on a terminal too
printf 'not a spool' > "$SPOOL/$ESC.spool"
"$SLICER" -o "$DB" "$SPOOL" 2> "$WORK/slicer.err" && fail "the slicer took a damaged spool"
grep -q 'not a spool file' "$WORK/slicer.err" || fail "slicer: $(cat "$WORK/slicer.err")"
clean slicer "$WORK/slicer.err"
on_tty slicer-tty "$SLICER" -o "$DB" "$SPOOL"

# manager stats: tables by client, program and path; a view
for by in client program path; do
  "$MANAGER" stats "$DB" --by $by > "$WORK/stats-$by.out"
  clean "stats --by $by" "$WORK/stats-$by.out" "$([ $by != program ] || echo cut)"
  on_tty "stats-$by-csv-tty" "$MANAGER" stats "$DB" --by $by --csv
done
# manager pull: a source's name
mkdir "$WORK/dbs"
cp "$DB" "$WORK/dbs/good.db"
printf 'not a database' > "$WORK/dbs/$ESC.db"
"$MANAGER" pull -o "$WORK/central.db" "$WORK/dbs" 2> "$WORK/pull.err" && fail "pull took a bad source"
clean pull "$WORK/pull.err"
on_tty pull-tty "$MANAGER" pull -o "$WORK/central.db" "$WORK/dbs"
# slicer export to a terminal: CSV, JSON Lines
on_tty export-csv-tty "$SLICER" export -d "$DB" --format csv
on_tty export-jsonl-tty "$SLICER" export -d "$DB" --format jsonl
# to a file, CSV keeps the bytes (it is data), JSON escapes them
"$SLICER" export -d "$DB" --format csv -o "$WORK/run.csv"
grep -qF "$ESC" "$WORK/run.csv" || fail "CSV to a file: the bytes are not kept"
ok "CSV to a file keeps the bytes"
"$SLICER" export -d "$DB" --format jsonl -o "$WORK/run.jsonl"
"$PYTHON" - "$WORK/run.jsonl" "$prog" <<'PY' || fail "JSON Lines to a file"
import json, re, sys
data = open(sys.argv[1], "rb").read()
if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", data):
    sys.exit("raw control characters in the JSON Lines")
progs = {json.loads(l)["program"] for l in data.decode().splitlines()}
if sys.argv[2] not in progs:
    sys.exit(f"{sys.argv[2]!r} not among {progs!r}")
print("ok: JSON Lines escape the control characters and read back the same")
PY
