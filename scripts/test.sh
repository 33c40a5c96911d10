#!/usr/bin/env bash
# The whole test suite: install what is missing, build with warnings as
# errors, run every unit and integration test under CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOBSERVE_WERROR=ON >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 --timeout 300
