#!/usr/bin/env bash
# test.sh - the README's second command (and .ci/run): install what is
# missing, build with warnings as errors, run every unit and integration
# test under CTest. The build directory is ./build, or $OBSERVE_BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=${OBSERVE_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOBSERVE_WERROR=ON >/dev/null
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2 --timeout 300
