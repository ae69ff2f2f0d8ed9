#!/usr/bin/env bash
# The main job: set up, build the CLI (configured as scripts/test.sh builds, so that running it
# afterwards compiles only the tests), and run the demo (with a GPU it compiles, runs and verifies
# kernels; without one it says so and shows what needs no GPU: compiling and resource reports).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/configure.sh
cmake --build build --target ptxrt_cli
build/ptxrt demo
