#!/usr/bin/env bash
# test.sh - the README's second command (and .ci/run): install what is
# missing, build with warnings as errors, run every unit and integration
# test under CTest; then build everything again with AddressSanitizer and
# UndefinedBehaviorSanitizer (libobserve.so included) and run the unit,
# integration, safety and client tests under them (not the accuracy tests
# and experiments: they measure time, and the sanitizers slow every call;
# not the fuzz targets: they build their own sanitized binaries, and ran
# in the first pass).
# The build directories are ./build and ./build-san, or $OBSERVE_BUILD and
# $OBSERVE_BUILD-san. OBSERVE_SANITIZE_RUN=0 skips the sanitized run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=${OBSERVE_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOBSERVE_WERROR=ON >/dev/null
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2 --timeout 300

[ "${OBSERVE_SANITIZE_RUN:-1}" = 0 ] && exit 0
echo "== the same tests with AddressSanitizer and UndefinedBehaviorSanitizer"
cmake -S . -B "$build-san" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOBSERVE_WERROR=ON \
  -DOBSERVE_SANITIZE=address,undefined >/dev/null
cmake --build "$build-san" -j2
ctest --test-dir "$build-san" --output-on-failure -j2 --timeout 300 \
  -E '^(accuracy|experiments|fuzz)\.'
