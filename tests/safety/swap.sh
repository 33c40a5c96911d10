#!/usr/bin/env bash
# swap.sh CASE - the spool replaced between its creation and its growth:
# growth never writes anything but the very file the layer created.
#   symlink  the spool file moved away, a symlink to a file outside put in
#            its place
#   file     the spool file moved away, another file put in its place
#   dir      the spool directory moved away, another one (with a file of
#            the spool's name) put in its place
# A python client makes one request (the spool is made), waits while the
# test swaps, then makes 5000 more (10,000 records: the spool must grow,
# past its first 128 records here and past 1 MiB in the old writer). The
# file put in place is never written; the layer says once that it stopped;
# the client gets every answer; the spool moved away keeps what was
# recorded, every lost record counted once.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/safety/lib.sh"
case=${1:?usage: swap.sh CASE}
N=5000
make_site "$WORK/site"
nginx_start "$WORK/site"

mkfifo "$WORK/go"
observed "$SPOOL" "$PYTHON" "$REPO/tests/safety/clients/grow.py" 127.0.0.1 "$NGINX_PORT" "$N" \
  < "$WORK/go" > "$WORK/client.out" 2> "$WORK/client.err" &
pid=$!
at_exit "kill $pid 2>/dev/null"
exec 3> "$WORK/go"
for _ in $(seq 100); do grep -q ready "$WORK/client.out" && break; sleep 0.1; done
grep -q ready "$WORK/client.out" || fail "the client did not get ready: $(cat "$WORK/client.err")"
spool=$(find "$SPOOL" -name '*.spool')
[ "$(printf '%s\n' "$spool" | wc -l)" -eq 1 ] && [ -f "$spool" ] || fail "expected one spool: $spool"
name=$(basename "$spool")

printf 'precious\n' > "$WORK/outside"
case $case in
symlink)
  mv "$spool" "$WORK/moved.spool"
  ln -s "$WORK/outside" "$spool"
  target=$WORK/outside pattern="cannot open it again: Too many levels of symbolic links"
  ;;
file)
  mv "$spool" "$WORK/moved.spool"
  cp "$WORK/outside" "$spool"
  target=$spool pattern="it is no longer the file created"
  ;;
dir)
  mv "$SPOOL" "$WORK/moved"
  ln "$WORK/moved/$name" "$WORK/moved.spool"
  mkdir -m 0700 "$SPOOL"
  cp "$WORK/outside" "$SPOOL/$name"
  target=$SPOOL/$name pattern="$SPOOL is no longer the directory it was made in"
  ;;
*) fail "unknown case $case" ;;
esac
before=$(stat -c '%s %.9Y' "$target")

echo go >&3
exec 3>&-
rc=0
wait "$pid" || rc=$?
expect_eq "$rc" 0 "the client's exit status"
expect_eq "$(tail -n 1 "$WORK/client.out")" "$((N + 1))" "answers the client got"
expect_eq "$(cat "$target")" precious "$case: what was put in the spool's place still holds only its own content"
expect_eq "$(stat -c '%s %.9Y' "$target")" "$before" "$case: its size and mtime unchanged"
expect_one_warning client "$pattern; recording stopped"
expect_counted_once "$WORK/moved.spool"
mkdir "$WORK/read"
mv "$WORK/moved.spool" "$WORK/read/$name"
rc=0
"$SLICER" -q -o "$WORK/run.db" "$WORK/read" 2>/dev/null || rc=$?
expect_eq "$rc" 1 "the slicer's exit status (records were lost)"
n=$(q "$WORK/run.db" "SELECT count(*) FROM exchange WHERE dr > 100")
[ "$n" -ge 1 ] && [ "$n" -lt $((N + 1)) ] || fail "$n exchanges recorded in the spool moved away"
ok "$n exchanges recorded in the spool moved away, before growth stopped"
