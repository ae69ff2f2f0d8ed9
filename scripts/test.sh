#!/usr/bin/env bash
# The tests: set up, build with warnings as errors, and run every test with CTest. GPU tests
# report "skipped" where no GPU is present. Pass --sanitizers to also build and run the CPU tests
# under AddressSanitizer + UndefinedBehaviorSanitizer and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPTXRT_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest -j "$jobs" --timeout 600 --output-on-failure)
