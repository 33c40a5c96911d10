#!/usr/bin/env bash
# modes.sh - issue 13 item 9: the files the tools make hold what a user's
# programs did on the network, and used to be made 0644 (0666 under
# umask 0): readable by everyone on the machine. Now, whatever the umask
# (0, 022, 0277), a new database and its -wal and -shm files (slicer,
# observe, manager pull), an export (slicer export -o) are 0600 and a
# report directory (manager report -o) 0700; what already exists keeps its
# mode, never widened nor narrowed.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
need_cmd gnuplot
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
preload curl -sf -o /dev/null "$NGINX_URL/100b" || fail "curl failed"

mode() { stat -c %a "$1"; }

for mask in 000 022 0277; do
  d=$WORK/u$mask
  mkdir "$d"
  # observe opens its database (WAL) before it runs the command: the
  # command sees the database and its -wal and -shm files as they are made
  (umask "$mask"; "$OBSERVE" -q -o "$d/observe.db" -- \
    sh -c 'stat -c %a "$1" "$1-wal" "$1-shm"; curl -sf -o /dev/null "$2"' sh "$d/observe.db" "$NGINX_URL/100b") \
    > "$d/observe.modes" || fail "umask $mask: observe failed"
  expect_eq "$(tr '\n' ' ' < "$d/observe.modes")" "600 600 600 " "umask $mask: observe's database, -wal, -shm"
  (umask "$mask"; "$SLICER" -q -o "$d/slicer.db" "$SPOOL") || fail "umask $mask: slicer failed"
  expect_eq "$(mode "$d/slicer.db")" 600 "umask $mask: slicer's new database"
  (umask "$mask"; "$SLICER" export -d "$d/slicer.db" --format csv -o "$d/x.csv") ||
    fail "umask $mask: export failed"
  expect_eq "$(mode "$d/x.csv")" 600 "umask $mask: slicer export -o"
  (umask "$mask"; "$MANAGER" pull -q -o "$d/central.db" "$d/slicer.db") || fail "umask $mask: pull failed"
  expect_eq "$(mode "$d/central.db")" 600 "umask $mask: manager pull's central database"
  (umask "$mask"; "$MANAGER" report -q "$d/central.db" -o "$d/report") || fail "umask $mask: report failed"
  expect_eq "$(mode "$d/report")" 700 "umask $mask: manager report's directory"
done

# what exists keeps its mode (never widened, never narrowed)
chmod 0640 "$WORK/u022/slicer.db"
(umask 000; "$SLICER" -q -o "$WORK/u022/slicer.db" "$SPOOL") || fail "slicer into an existing database"
expect_eq "$(mode "$WORK/u022/slicer.db")" 640 "an existing database keeps its mode"
chmod 0644 "$WORK/u022/x.csv"
(umask 000; "$SLICER" export -d "$WORK/u022/slicer.db" --format csv -o "$WORK/u022/x.csv") || fail "export over a file"
expect_eq "$(mode "$WORK/u022/x.csv")" 644 "an existing export file keeps its mode"
mkdir -m 0750 "$WORK/mine"
(umask 000; "$MANAGER" report -q "$WORK/u022/central.db" -o "$WORK/mine") || fail "report into a directory"
expect_eq "$(mode "$WORK/mine")" 750 "an existing report directory keeps its mode"
# export to standard output by name still works (a link to a pipe)
"$SLICER" export -d "$WORK/u022/slicer.db" --format csv -o /dev/stdout | grep -q '^connection_id,' ||
  fail "export -o /dev/stdout"
ok "export -o /dev/stdout"
