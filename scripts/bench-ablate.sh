#!/usr/bin/env bash
# bench-ablate.sh [PAIRS] - where the event capture's cost lies: the layer
# built again with one part of the event path cut out, each variant run
# by scripts/bench-cpu.sh (pinned layout: ab and nginx on one CPU) beside
# the records, the events and a bare run, PAIRS alternating runs (default
# 11). The variants, made from the working tree's files in a scratch
# directory (nothing here is changed):
#   noframe   no follower reads the HTTP/1 bytes (capture.c: follow
#             returns at OBS_APP_H1): call events only, no facts
#   nosink    no event reaches the spool (events.c: ev_put returns 0)
#   noentry   no event written at a send's entry (hooks_io.c)
#   none      all three cut: what is left is the hooks, the lock and the
#             capture's bookkeeping of each call
# The difference between two rows' "us added/req" is what the cut part
# costs a request. A variant records wrong or nothing: for measuring only.
cd "$(dirname "$0")/.." || exit 1
pairs=${1:-11}
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

tree=$WORK/ablate
mkdir -p "$tree/src"
git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$tree/src"

# variant NAME CUT...: the tree with each CUT (noframe, nosink, noentry)
# made, built; NAME=its libobserve.so added to $extra
variant() {
  local name=$1 dir=$tree/$1
  shift
  rm -rf "$dir"
  cp -r "$tree/src" "$dir"
  "$PYTHON" - "$dir" "$@" <<'PY' || fail "bench-ablate: cannot cut $name"
import sys
root, cuts = sys.argv[1], sys.argv[2:]
edits = {
    "noframe": ("core/capture.c", "\t\tcase OBS_APP_H1: {\n\t\t\tsize_t k;\n",
                "\t\tcase OBS_APP_H1: {\n\t\t\tsize_t k;\n\t\t\treturn; /* cut */\n"),
    "nosink": ("libobserve/events.c",
               "\tstruct obs_record *labels = NULL, *r = c->ev_call;\n\n",
               "\tstruct obs_record *labels = NULL, *r = c->ev_call;\n\n"
               "\tif (ctx)\n\t\treturn 0; /* cut */\n"),
    "noentry": ("libobserve/hooks_io.c", "if (obs_cap_send_opens(&c->cap))",
                "if (0 && obs_cap_send_opens(&c->cap))"),
}
for cut in cuts:
    path, old, new = edits[cut]
    text = open(f"{root}/{path}").read()
    if text.count(old) != 1:
        sys.exit(f"{path}: the place to cut for {cut} is not found once")
    open(f"{root}/{path}", "w").write(text.replace(old, new))
PY
  if ! cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >/dev/null || ! cmake --build "$dir/build" -j2 --target observe >/dev/null; then
    fail "bench-ablate: $name does not build"
  fi
  extra+=" $name=$dir/build/lib/libobserve.so"
}

extra=""
variant noframe noframe
variant nosink nosink
variant noentry noentry
variant none noframe nosink noentry
SKIP_DEPS=1 BENCH_LAYOUTS=pinned BENCH_EXTRA=$extra scripts/bench-cpu.sh "$pairs"
