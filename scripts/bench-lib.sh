# bench-lib.sh - what the benchmark scripts share. Source it from the
# repository's top directory (after `cd "$(dirname "$0")/.."`):
#   the Debian packages (scripts/deps.sh) unless SKIP_DEPS is set or the
#   script set BENCH_NO_DEPS=1; a RelWithDebInfo build in $OBSERVE_BUILD
#   (default ./build); the test helpers (tests/lib/common.sh and nginx.sh:
#   $WORK, $BUILD, $SLICER, $LAYER_PRELOAD, make_site, nginx_start, q...);
#   bench_dir and step below.
build=${OBSERVE_BUILD:-build}
[[ -n ${SKIP_DEPS:-} || ${BENCH_NO_DEPS:-0} == 1 ]] || scripts/deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null
export OBSERVE_BUILD=$build
# shellcheck source=tests/lib/common.sh
source tests/lib/common.sh
# shellcheck source=tests/lib/nginx.sh
source tests/lib/nginx.sh

# bench_dir DIR: DIR (created) as an absolute path, or $WORK when DIR is
# empty: where a script keeps its spools and databases (BENCH_DIR=...).
bench_dir() {
  if [[ -n $1 ]]; then
    mkdir -p "$1"
    (cd "$1" && pwd)
  else
    echo "$WORK"
  fi
}

# step NAME CMD...: run CMD, print NAME (STEP_WIDTH wide, default 32), its
# wall seconds and peak RSS in MiB (/usr/bin/time); its output is shown
# only when it fails.
step() {
  local name=$1 secs kib
  shift
  /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" > "$WORK/step.out" 2>&1 ||
    { cat "$WORK/step.out"; fail "$name failed"; }
  read -r secs kib < "$WORK/time"
  printf "%-${STEP_WIDTH:-32}s %9.2f s %8d MiB\n" "$name" "$secs" $((kib / 1024))
}
