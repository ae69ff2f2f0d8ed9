#!/usr/bin/env bash
# Configures a build folder one way for every script that builds there, so that whichever runs
# second builds nothing the first already built; different flags would make Ninja recompile
# everything. Warnings are errors in both, as CI builds.
#   scripts/configure.sh          build/, Release: scripts/demo.sh and scripts/test.sh
#   scripts/configure.sh --asan   build-asan/, clang with AddressSanitizer + UBSan: the fuzz
#                                 targets (scripts/fuzz.sh) and the CPU tests with the CLI they run
#                                 (scripts/test.sh --sanitizers), over the same components
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  # The Python package's extension where python3 has nanobind (scripts/setup.sh installs it).
  "") python=$(command -v python3 || true)
      with_python=OFF
      [ -n "$python" ] && "$python" -c "import nanobind" 2>/dev/null && with_python=ON
      cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPTXRT_WERROR=ON \
        -DPTXRT_PYTHON=$with_python ${python:+-DPython_EXECUTABLE="$python"} >/dev/null ;;
  # -O1 (as the sanitizers' authors advise) with line tables only (-g1): a report's stack needs no
  # more, and it compiles in about half of -O2 -g's time. No MPI: its tests run in the whole suite.
  --asan) cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
            -DPTXRT_WERROR=ON -DPTXRT_FUZZ=ON -DPTXRT_MPI=OFF >/dev/null ;;
  *) echo "usage: scripts/configure.sh [--asan]" >&2; exit 2 ;;
esac
