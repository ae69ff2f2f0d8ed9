#!/usr/bin/env bash
# The main job: set up, build Release, and run the demo (with a GPU it compiles, runs and verifies
# kernels; without one it says so and shows what needs no GPU: compiling and resource reports).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
build/ptxrt demo
