#!/usr/bin/env bash
# utf8.sh - issue 13 item 11: bytes that are not UTF-8 in a program's
# path, a client name, a request's Host or path went raw into the JSON
# Lines and HAR exports, which were then no JSON at all (a JSON text is
# UTF-8). Now each such byte is written as U+FFFD (in CSV and OTLP too),
# and the exports read back with Python's json and the HAR checker.
#   - a client program (tests/hostsafety's hs_client) copied to a name
#     that is not UTF-8, client name not UTF-8 (OBSERVE_CLIENT);
#   - python sending a Host that is not UTF-8, and a request line whose
#     path holds an invalid byte, a surrogate in UTF-8 form, an overlong
#     form and a cut sequence.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db
mkdir "$WORK/bin"
prog=$WORK/bin/$'cl\xffient\xc0'
cp "$BUILD/bin/hs_client" "$prog"

OBSERVE_CLIENT=$'lab\xfe' preload "$prog" get "$NGINX_PORT" > /dev/null ||
  fail "a client under a name that is not UTF-8 failed"
OBSERVE_CLIENT=$'lab\xfe' preload "$PYTHON" - "$NGINX_PORT" <<'PY' || fail "the python client failed"
import socket, sys
for line, host in ((b"GET /100b", b"h\xff\xfeost"),
                   (b"GET /p\xff\xe9t\xed\xa0\x80\xc0\xaf\xe2\x82", b"127.0.0.1")):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(line + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
    while s.recv(65536):
        pass
    s.close()
PY
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 3 "exchanges recorded"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE program = CAST(X'$(printf %s "$prog" | xxd -p | tr -d '\n')' AS TEXT)")" 1 \
  "the database keeps the program's bytes as they are"

"$SLICER" export -d "$DB" --format jsonl -o "$WORK/run.jsonl"
"$PYTHON" -m json.tool --json-lines "$WORK/run.jsonl" > /dev/null || fail "the JSON Lines export is not JSON"
ok "the JSON Lines export reads as JSON"
"$SLICER" export -d "$DB" --format har -o "$WORK/run.har"
"$PYTHON" "$REPO/tests/slicer/check_har.py" "$WORK/run.har" 3 || fail "the HAR export"
"$SLICER" export -d "$DB" --format csv -o "$WORK/run.csv"
"$PYTHON" - "$WORK/run.jsonl" "$WORK/run.har" "$WORK/run.csv" "$WORK/bin" <<'PY' || fail "what the exports say"
import csv, json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
har = json.load(open(sys.argv[2], encoding="utf-8"))["log"]["entries"]
table = list(csv.DictReader(open(sys.argv[3], encoding="utf-8", newline="")))
# as Python decodes them: one U+FFFD per maximal ill-formed subpart
fix = lambda b: b.decode("utf-8", "replace")
prog = sys.argv[4] + fix(b"/cl\xffient\xc0")
path = fix(b"/p\xff\xe9t\xed\xa0\x80\xc0\xaf\xe2\x82")
host = fix(b"h\xff\xfeost")
want = {}
for fmt in ("jsonl", "csv"):
    want.update({(fmt, "program"): prog, (fmt, "client"): fix(b"lab\xfe"),
                 (fmt, "host"): host, (fmt, "path"): path})
got = {}
for fmt, rs in (("jsonl", rows), ("csv", table)):
    got[(fmt, "program")] = next(r["program"] for r in rs if r["program"].startswith(sys.argv[4]))
    got[(fmt, "client")] = rs[0]["client"]
    got[(fmt, "host")] = next(r["host"] for r in rs if r["host"] not in ("", None, "127.0.0.1"))
    got[(fmt, "path")] = next(r["path"] for r in rs if r["path"] != "/100b")
for k, v in want.items():
    if got[k] != v:
        sys.exit(f"{k}: {got[k]!r}, expected {v!r}")
    print(f"ok: {k[0]} {k[1]} = {v!r}")
urls = sorted(e["request"]["url"] for e in har)
if "http://" + host + "/100b" not in urls or not any(u.endswith(path) for u in urls):
    sys.exit(f"HAR urls: {urls!r}")
print(f"ok: HAR urls {urls!r}")
PY
"$SLICER" export -d "$DB" --format otlp -o "$WORK/run.otlp.json"
"$PYTHON" - "$WORK/run.otlp.json" "$WORK/bin" <<'PY' || fail "the OTLP export"
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
fix = lambda b: b.decode("utf-8", "replace")
values = set()
for res in r["resourceSpans"]:
    spans = [s for scope in res["scopeSpans"] for s in scope["spans"]]
    for a in res["resource"]["attributes"] + [a for s in spans for a in s["attributes"]]:
        values.add(a["value"].get("stringValue"))
for want in (sys.argv[2] + fix(b"/cl\xffient\xc0"), fix(b"cl\xffient\xc0"), fix(b"lab\xfe"),
             "http://" + fix(b"h\xff\xfeost") + "/100b", fix(b"h\xff\xfeost")):
    if want not in values:
        sys.exit(f"OTLP: {want!r} not among {sorted(v for v in values if v)!r}")
if not any(v and v.endswith(fix(b"/p\xff\xe9t\xed\xa0\x80\xc0\xaf\xe2\x82")) for v in values):
    sys.exit("OTLP: no url.full with the path")
print("ok: OTLP reads as JSON, with U+FFFD in the program, client, Host and path")
PY
