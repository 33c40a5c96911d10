#!/usr/bin/env bash
# run-fuzz-core.sh [SECONDS] - build the core's fuzz targets with clang's
# libFuzzer, AddressSanitizer and UBSan and run each for SECONDS (default
# 10; tests/fuzz/run-fuzz-core.sh 600 for a longer run):
#   fuzz_core    the HTTP/1 framer, the WebSocket and HTTP/2 frame followers
#                (HPACK: libnghttp2's inflater, linked), through the
#                capture, and the replay of what they wrote; seeded with
#                the conversations of unit.core (test_core writes them when
#                CORE_SEEDS is set), HTTP/2's among them;
#   fuzz_replay  the replay alone, on any sequence of events, HTTP/2's
#                stream facts among them.
# Exit 77 (skipped) without clang/libFuzzer.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/fuzz.sh"
seconds=${1:-10}
[ -x "$BUILD/bin/test_core" ] || fail "no $BUILD/bin/test_core: build the project first"
fuzz_build fuzz_core fuzz_replay

mkdir -p "$WORK/corpus-core" "$WORK/corpus-replay"
CORE_SEEDS=$WORK/corpus-core "$BUILD/bin/test_core" >/dev/null 2>&1 ||
  fail "test_core failed while writing the seeds"
[ "$(ls "$WORK/corpus-core" | wc -l)" -gt 10 ] || fail "test_core wrote too few seeds"
for target in fuzz_core fuzz_replay; do
  corpus=$WORK/corpus-${target#fuzz_}
  fuzz_run "$WORK/$target" "$corpus" "$seconds"
done
ok "no crash, broken promise, undefined behaviour or hang in 2 x $seconds s"
