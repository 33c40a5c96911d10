#!/usr/bin/env bash
# waterfall.sh - manager waterfall: headless Chromium loads a page with its
# stylesheet, script and images from nginx under observe; its waterfall
# (SVG) has a row for each of the page's requests in nginx's log, the rows
# in start order and each segment where and as long as the database says
# (check_waterfall.py); the PNG is drawn too. Then the filters (--pid,
# --program, --where), the cut at --rows (said), a path that is not UTF-8
# (the SVG is still XML), the file's mode (0600 under umask 022), and the
# errors: a name that is neither .svg nor .png, nothing selected, no
# database.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/chromium.sh"
MANAGER=$BUILD/bin/manager
need_cmd gnuplot
need_cmd file
need_cmd chromium
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
DB=$WORK/page.db

"$OBSERVE" -q -o "$DB" -- timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/chromium" \
  --dump-dom "$URL/index.html" >"$WORK/dom.html" 2>"$WORK/chromium.log" || true
grep -q "observe demo" "$WORK/dom.html" || fail "chromium did not load the page"
nginx_settle
# the paths nginx served: the page, its stylesheet, script, images, frames
mapfile -t paths < <(cut -f6 "$NGINX_LOG" | sort -u)
[ "${#paths[@]}" -ge 6 ] || fail "nginx served ${#paths[*]} paths: ${paths[*]}"
ok "chromium loaded the page: ${#paths[@]} paths (${paths[*]})"

"$MANAGER" waterfall "$DB" -o "$WORK/page.svg" > "$WORK/out" 2> "$WORK/err"
[ ! -s "$WORK/err" ] || fail "waterfall complained: $(cat "$WORK/err")"
expect_eq "$(cat "$WORK/out")" "$WORK/page.svg" "the file's path on stdout"
grep -q "<svg" "$WORK/page.svg" || fail "page.svg is not SVG"
"$PYTHON" "$REPO/tests/manager/check_waterfall.py" "$DB" "$WORK/page.svg" "${paths[@]}" ||
  fail "the waterfall disagrees with the database"
"$MANAGER" waterfall "$DB" -o "$WORK/page.png" -q
file "$WORK/page.png" | grep -q "PNG image data, 1000 x" || fail "page.png: $(file "$WORK/page.png")"
ok "page.png: $(file -b "$WORK/page.png")"

# a second program in the same database: the filters choose
"$OBSERVE" -q -o "$DB" -- ab -q -n 150 -c 1 "$URL/100b" >/dev/null
ab_pid=$(q "$DB" "SELECT pid FROM process WHERE program LIKE '%/ab'")
"$MANAGER" waterfall "$DB" --pid "$ab_pid" --rows 10 -o "$WORK/ab.svg" -q 2> "$WORK/ab.err"
grep -q "the first 10 of 300 rows drawn" "$WORK/ab.err" || fail "the cut is not said: $(cat "$WORK/ab.err")"
expect_eq "$(grep -c '<text>GET /100b 200</text>' "$WORK/ab.svg")" 5 "--rows 10: 5 connections of one exchange each"
grep -q "first 10 of 300 rows" "$WORK/ab.svg" || fail "the title does not say the cut"
"$MANAGER" waterfall "$DB" --pid "$ab_pid" -o "$WORK/ab200.svg" -q 2> "$WORK/ab200.err"
grep -q "the first 200 of 300 rows drawn" "$WORK/ab200.err" || fail "the default cut (200 rows) is not said"
"$MANAGER" waterfall "$DB" --program chromium -o "$WORK/chromium.svg" -q
"$PYTHON" "$REPO/tests/manager/check_waterfall.py" --where "program LIKE '%/chromium'" \
  "$DB" "$WORK/chromium.svg" "${paths[@]}" || fail "--program chromium"
"$PYTHON" "$REPO/tests/manager/check_waterfall.py" "$DB" "$WORK/chromium.svg" >/dev/null &&
  fail "check_waterfall.py does not see ab's rows missing"
"$MANAGER" waterfall "$DB" --where "path = '/style.css'" -o "$WORK/css.svg" -q
"$PYTHON" "$REPO/tests/manager/check_waterfall.py" --where "path = '/style.css'" \
  "$DB" "$WORK/css.svg" /style.css || fail "--where path = '/style.css'"
expect_eq "$(grep -c '<text>GET /index.html 200</text>' "$WORK/css.svg")" 0 \
  "--where: the other exchange on its connection left out"
ok "--pid, --program, --where select; --rows cuts and says so"

# a request path that is not UTF-8: U+FFFD in its label, the SVG still XML;
# the file private whatever the umask
"$OBSERVE" -q -o "$WORK/odd.db" -- "$PYTHON" - "$NGINX_PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /p\xff\xe9t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
while s.recv(65536):
    pass
PY
(umask 022 && "$MANAGER" waterfall "$WORK/odd.db" -o "$WORK/odd.svg" -q)
"$PYTHON" - "$WORK/odd.svg" <<'PY' || fail "a path that is not UTF-8 broke the SVG"
import sys, xml.etree.ElementTree as ET
texts = [t.text for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text")]
assert any(t and "/p\ufffd\ufffdt" in t for t in texts), texts
print("ok: a path that is not UTF-8 reads /p\ufffd\ufffdt; the SVG parses as XML")
PY
expect_eq "$(stat -c %a "$WORK/odd.svg")" 600 "the SVG's mode under umask 022"

# errors: the reason said, a status that says what went wrong
set +e
"$MANAGER" waterfall "$DB" -o "$WORK/page.txt" 2> "$WORK/e1"; s1=$?
"$MANAGER" waterfall "$DB" --where "dr > 1e15" -o "$WORK/none.svg" 2> "$WORK/e2"; s2=$?
echo "not sqlite" > "$WORK/junk.db"
"$MANAGER" waterfall "$WORK/junk.db" -o "$WORK/junk.svg" 2> "$WORK/e3"; s3=$?
"$MANAGER" waterfall "$DB" --rows 0 -o "$WORK/x.svg" 2> "$WORK/e4"; s4=$?
set -e
expect_eq "$s1 $(cat "$WORK/e1")" "2 manager: -o $WORK/page.txt: the file's name ends in .svg or .png" "a file that is neither SVG nor PNG"
expect_eq "$s2 $(cat "$WORK/e2")" "1 manager: $DB: no connection matches the filter: nothing drawn" "nothing selected"
[ ! -e "$WORK/none.svg" ] || fail "an empty selection left a file"
[ "$s3" = 2 ] && grep -q "junk.db" "$WORK/e3" || fail "a file that is no database: $s3 $(cat "$WORK/e3")"
expect_eq "$s4 $(cat "$WORK/e4")" "2 manager: --rows 0: a number from 1 to 2000" "--rows 0"
