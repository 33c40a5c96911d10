# fuzz.sh - run a libFuzzer target for the fuzz tests (tests/fuzz).
# shellcheck shell=bash
#
# Source tests/lib/common.sh first.
#
# fuzz_build TARGET...: build each tests/fuzz/TARGET.c with the core
#   (core/*.c, libnghttp2) into $WORK/TARGET under libFuzzer, ASan and
#   UBSan; skips the test (77) when clang cannot.
#
# fuzz_run BINARY CORPUS SECONDS: run BINARY on CORPUS for SECONDS (10 s
#   a run at most, 1 GiB), its log in BINARY.log; when it finds a problem,
#   the log's tail on stderr, the inputs kept in $BUILD/fuzz-artifacts,
#   and the test fails. Prints the count of runs.

fuzz_build() {
  local target
  command -v clang >/dev/null || skip "clang is not installed"
  for target in "$@"; do
    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I"$REPO/core" -I"$REPO/common" -I"$REPO/tests/unit" "$REPO/tests/fuzz/$target.c" \
      "$REPO"/core/*.c -lnghttp2 -o "$WORK/$target" 2>"$WORK/build.log" ||
      { cat "$WORK/build.log" >&2; skip "clang cannot build a libFuzzer target here"; }
  done
  ok "fuzz targets built: $*"
}

fuzz_run() {
  local bin=$1 corpus=$2 seconds=$3
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
    -artifact_prefix="$WORK/" -print_final_stats=1 "$corpus" 2>"$bin.log" ||
    { tail -40 "$bin.log" >&2
      mkdir -p "$BUILD/fuzz-artifacts"; cp "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$BUILD/fuzz-artifacts/" 2>/dev/null || true
      fail "$(basename "$bin") found a problem (inputs kept in $BUILD/fuzz-artifacts)"; }
  echo "$(basename "$bin"): $(grep -E 'stat::number_of_executed_units' "$bin.log")"
}
