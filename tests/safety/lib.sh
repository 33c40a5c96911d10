# lib.sh - sourced by the safety tests after tests/lib/common.sh: run a host
# program with and without the layer and compare what it shows; read the
# counters and slots of a spool.
# shellcheck shell=bash

# host_run TAG LIMIT CMD...: run CMD in a subshell under `ulimit LIMIT`
# ("-" for none); its stdout goes to $WORK/TAG.out, its stderr to
# $WORK/TAG.err, its exit status to $WORK/TAG.rc. The caller's environment
# says whether the layer is there (observed, below).
host_run() {
  local tag=$1 limit=$2 rc=0
  shift 2
  # shellcheck disable=SC2086
  ( if [ "$limit" != - ]; then ulimit $limit; fi; "$@" ) \
    > "$WORK/$tag.out" 2> "$WORK/$tag.err" || rc=$?
  echo "$rc" > "$WORK/$tag.rc"
}

# observed DIR CMD...: CMD with the layer preloaded, spools into DIR,
# warnings on (OBSERVE_LOG=1)
observed() {
  local dir=$1
  shift
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$dir" OBSERVE_LOG=1 "$@"
}

# layer_lines TAG: the layer's lines in TAG's stderr ("observe[prog:pid]: ",
# one write each, possibly in the middle of one of the host's lines)
layer_lines() {
  grep -o 'observe\[[^]]*:[0-9]*\]: .*' "$WORK/$1.err" || true
}

# host_stderr TAG: TAG's stderr without the layer's lines
host_stderr() {
  perl -0pe 's/observe\[[^\]\n]*:\d+\]: [^\n]*\n//g' "$WORK/$1.err"
}

# expect_same_host BARE OBSERVED: the run with the layer showed what the run
# without it showed: exit status, stdout, stderr (the layer's lines aside)
expect_same_host() {
  local bare=$1 obs=$2
  expect_eq "$(cat "$WORK/$obs.rc")" "$(cat "$WORK/$bare.rc")" "$obs: exit status as without the layer"
  cmp -s "$WORK/$bare.out" "$WORK/$obs.out" ||
    fail "$obs: stdout differs from the run without the layer: $(diff "$WORK/$bare.out" "$WORK/$obs.out" | head -5)"
  ok "$obs: stdout as without the layer ($(wc -c < "$WORK/$obs.out") bytes)"
  host_stderr "$obs" | cmp -s - "$WORK/$bare.err" ||
    fail "$obs: stderr differs from the run without the layer: $(host_stderr "$obs" | diff "$WORK/$bare.err" - | head -5)"
  ok "$obs: stderr as without the layer, the layer's lines aside"
}

# expect_one_warning TAG PATTERN: the layer said exactly one thing in TAG's
# stderr, and it matches PATTERN (grep -E)
expect_one_warning() {
  local lines
  lines=$(layer_lines "$1")
  expect_eq "$(printf '%s' "$lines" | grep -c '^')" 1 "$1: lines from the layer"
  grep -qE "$2" <<<"$lines" || fail "$1: the layer's line does not match '$2': $lines"
  ok "$1: the layer said: ${lines#*]: }"
}

# spool_counts FILE: "reserved used dropped": the header's records_reserved
# and records_dropped, and the slots that hold a record
spool_counts() {
  "$PYTHON" - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
reserved, dropped = struct.unpack_from("<QQ", data, 64)
used = sum(1 for off in range(4096, len(data) - 127, 128)
           if struct.unpack_from("<I", data, off)[0] != 0)
print(reserved, used, dropped)
PY
}

# expect_counted_once FILE: every record asked for is in the file or counted
# as dropped, once (the process has exited); at least one was dropped
expect_counted_once() {
  local reserved used dropped
  read -r reserved used dropped < <(spool_counts "$1")
  [ "$dropped" -gt 0 ] || fail "records_dropped is 0 ($reserved asked for, $used in the file)"
  expect_eq "$((used + dropped))" "$reserved" "records in the file ($used) + dropped ($dropped) = records asked for"
}
