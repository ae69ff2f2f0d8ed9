#!/usr/bin/env bash
# Configures build/ the one way scripts/demo.sh and scripts/test.sh both build it: Release, with
# warnings as errors (as CI builds). The same flags in both, so that whichever runs second builds
# nothing the first already built; different flags would make Ninja recompile everything.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPTXRT_WERROR=ON >/dev/null
