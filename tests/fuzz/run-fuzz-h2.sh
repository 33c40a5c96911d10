#!/usr/bin/env bash
# run-fuzz-h2.sh [SECONDS] - build the HTTP/2 follower's fuzz target
# (fuzz_h2.c with core/h2.c) with clang's libFuzzer, AddressSanitizer
# and UBSan, seed it with the unit tests' connections (test_h2 writes them
# when H2_SEEDS is set) and run it: briefly in CI (default 20 s), longer on
# demand (tests/fuzz/run-fuzz-h2.sh 600). The target links libnghttp2 and
# gives its inflater to the follower. Exit 77 (skipped) without
# clang/libFuzzer.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/fuzz.sh"
seconds=${1:-20}
command -v clang >/dev/null || skip "clang is not installed"
[ -x "$BUILD/bin/test_h2" ] || fail "no $BUILD/bin/test_h2: build the project first"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$REPO/core" -I"$REPO/tests/unit" "$REPO/tests/fuzz/fuzz_h2.c" \
  "$REPO/core/h2.c" -lnghttp2 -o "$WORK/fuzz_h2" 2>"$WORK/build.log" ||
  { cat "$WORK/build.log" >&2; skip "clang cannot build a libFuzzer target here"; }
ok "fuzz target built"

mkdir -p "$WORK/corpus"
H2_SEEDS=$WORK/corpus "$BUILD/bin/test_h2" >/dev/null 2>&1 || fail "test_h2 failed while writing the seeds"
[ "$(ls "$WORK/corpus" | wc -l)" -gt 10 ] || fail "test_h2 wrote too few seeds"
fuzz_run "$WORK/fuzz_h2" "$WORK/corpus" "$seconds"
ok "no crash, broken promise, undefined behaviour or hang in $seconds s"
