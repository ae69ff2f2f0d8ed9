#!/usr/bin/env bash
# What a user of the library sees, checked the way a user would. Each step is its own CTest case
# (tests/CMakeLists.txt), so that CTest spreads them over the cores; `install` does them all.
#   check_package.sh prefix     BUILD SCRATCH   cmake --install BUILD into SCRATCH/prefix: the tree
#       holds the library, headers, CLI, CMake package and ptxrt.pc only, and the CLI runs.
#   check_package.sh example    NAME SOURCE SCRATCH   examples/NAME built against SCRATCH/prefix
#       with find_package(ptxrt CONFIG REQUIRED), as its own project, then run.
#   check_package.sh pkg-config SOURCE SCRATCH   the matmul example built through pkg-config alone
#       (exit 77 where pkg-config is missing).
#   check_package.sh mpi        SCRATCH   where ptxrt was built with MPI, a program finds and links
#       ptxrt::mpi.
#   check_package.sh install    BUILD SOURCE SCRATCH   all of the above, one after the other.
#   check_package.sh subproject-configure SOURCE SCRATCH   ptxrt as a shared subproject
#       (FetchContent) of examples/, with CLI11, doctest and an installed nlohmann-json all
#       refused, configured in SCRATCH/build: it offers no tests, CLI or host programs.
#   check_package.sh subproject-compile SCRATCH FOLDER...   compiles its sources under FOLDERs.
#   check_package.sh subproject-library SCRATCH   links the library: its SONAME carries the
#       version, it exports the public API only.
#   check_package.sh subproject-examples SCRATCH   builds the rest (ptxrt::mpi where MPI is
#       found) and runs every example.
# Each example run without a GPU must fail with the no-driver message; with one
# (PTXRT_REQUIRE_GPU=1, as scripts/gpu-check.sh sets) it must print its "ok" verdict.
set -euo pipefail
examples=(matmul user_kernel threads tuned_kernel)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

fail() { echo "check_package: $*" >&2; exit 1; }

run_example() {  # the built program; its disk cache goes beside it
  local program=$1 output status=0
  output=$(PTXRT_CACHE_DIR="$(dirname "$program")/cache" "$program" 2>&1) || status=$?
  echo "$(basename "$program"): exit $status: $output"
  if [ "$status" = 0 ]; then
    [[ "$output" == *": ok" ]] || fail "$program exited 0 without its ok verdict"
  elif [ "${PTXRT_REQUIRE_GPU:-0}" = 1 ]; then
    fail "$program failed on a GPU machine"
  else
    [[ "$output" == *"no CUDA driver found"* || "$output" == *"no CUDA device"* ]] ||
      fail "$program failed without naming the missing driver or device"
  fi
}

fresh_folder() {  # the folder, emptied; its absolute path on stdout
  rm -rf "$1"
  mkdir -p "$1"
  realpath "$1"
}

check_prefix() {  # build, scratch
  local prefix
  prefix=$(fresh_folder "$2/prefix")
  cmake --install "$1" --prefix "$prefix" >/dev/null
  for expected in include/ptxrt/ptxrt.hpp include/ptxrt/jit.hpp include/ptxrt/export.hpp bin/ptxrt \
                  lib/cmake/ptxrt/ptxrtConfig.cmake lib/cmake/ptxrt/ptxrtConfigVersion.cmake \
                  lib/cmake/ptxrt/ptxrtTargets.cmake lib/pkgconfig/ptxrt.pc; do
    [ -e "$prefix/$expected" ] || fail "the installed tree lacks $expected"
  done
  compgen -G "$prefix/lib/libptxrt.*" >/dev/null || fail "the installed tree lacks libptxrt"
  strays=$(cd "$prefix" && find . -type f | grep -Ei 'test|fuzz|doctest|CLI11|nlohmann|corpus' || true)
  [ -z "$strays" ] || fail "the installed tree holds files that are not ptxrt's: $strays"
  # No source tree either: the builtin kernels are inside the library.
  (cd "$prefix" && find . -name '*.cu' -o -name '*.cuh' | grep -q .) && fail "kernel sources installed"
  "$prefix/bin/ptxrt" kernels >/dev/null || fail "the installed CLI does not run"
  echo "check_package: prefix ok: $(cd "$prefix" && find . -type f | wc -l) files in $prefix"
}

installed_prefix() {  # scratch
  [ -d "$1/prefix" ] || fail "no installed ptxrt in $1/prefix: run check_package.sh prefix first"
  realpath "$1/prefix"
}

check_example() {  # name, source, scratch
  local prefix folder
  prefix=$(installed_prefix "$3")
  folder=$(fresh_folder "$3/$1")
  cmake -S "$2/examples/$1" -B "$folder" -G Ninja "${launcher[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$folder" >/dev/null
  run_example "$folder/${1}_example"
}

# The prefix given only at install time: ptxrt.pc finds it from its own place.
check_pkg_config() {  # source, scratch
  local prefix folder
  prefix=$(installed_prefix "$2")
  folder=$(fresh_folder "$2/pkg-config")
  # shellcheck disable=SC2046
  g++ -std=c++20 -o "$folder/matmul_example" "$1/examples/matmul/main.cpp" \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ptxrt)
  run_example "$folder/matmul_example"
}

# find_package(ptxrt COMPONENTS mpi) and link ptxrt::mpi; no MPI call is made.
check_mpi() {  # scratch
  local prefix folder
  prefix=$(installed_prefix "$1")
  [ -e "$prefix/lib/cmake/ptxrt/ptxrtMpiTargets.cmake" ] || fail "ptxrt was installed without ptxrt::mpi"
  folder=$(fresh_folder "$1/mpi_user")
  printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' 'project(mpi_user LANGUAGES CXX)' \
    'find_package(ptxrt 0.1 CONFIG REQUIRED COMPONENTS mpi)' \
    'add_executable(mpi_user main.cpp)' 'target_link_libraries(mpi_user PRIVATE ptxrt::mpi)' \
    >"$folder/CMakeLists.txt"
  # Node-local rank 3 with 2 GPUs visible takes GPU 1.
  printf '%s\n' '#include "ptxrt/mpi.hpp"' \
    'int main() { return ptxrt::mpi::device_for_rank(3, {}, 2) == 1 ? 0 : 1; }' \
    >"$folder/main.cpp"
  cmake -S "$folder" -B "$folder/build" -G Ninja "${launcher[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "find_package(ptxrt COMPONENTS mpi) failed"
  cmake --build "$folder/build" >/dev/null || fail "a program using ptxrt::mpi did not build"
  "$folder/build/mpi_user" || fail "a program using ptxrt::mpi did not run"
  echo "check_package: ptxrt::mpi found and linked"
}

# ptxrt as a subproject is one Ninja build in SCRATCH/build, made in steps so that no step runs
# long: configure, compile the sources of some folders (each step its own), link the library,
# then the rest. The steps share the build, so they run one at a time, each on every core. No
# build type: what is checked (the targets, the SONAME, the exported symbols, the examples'
# verdicts) does not depend on it, and an unoptimized build takes a fraction of the time.
configure_subproject() {  # source, scratch
  local build targets
  build=$(fresh_folder "$2/build")
  # CMAKE_DISABLE_FIND_PACKAGE_X makes find_package(X) fail: proof that the library needs none.
  cmake -S "$1/examples" -B "$build" -G Ninja "${launcher[@]}" \
    -DPTXRT_SOURCE_DIR="$1" -DBUILD_SHARED_LIBS=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON >"$2/configure.log" 2>&1 ||
    { cat "$2/configure.log"; fail "configuring ptxrt as a subproject failed"; }
  targets=$(cmake --build "$build" --target help)
  for unwanted in ptxrt_cli ptxrt_host ptxrt_cpu_tests ptxrt_gpu_tests; do
    grep -qw "$unwanted" <<<"$targets" && fail "a subproject build made $unwanted"
  done
  echo "check_package: ptxrt configured as a subproject in $build"
}

subproject_build() {  # scratch
  [ -f "$1/build/build.ninja" ] || fail "no subproject build in $1/build: run subproject-configure first"
  realpath "$1/build"
}

# Ninja names each object file as a target: those of the sources under the folders given.
compile_subproject_sources() {  # scratch, then folders of ptxrt's sources (runtime/tune, mpi)
  local build folder objects=()
  build=$(subproject_build "$1")
  for folder in "${@:2}"; do
    mapfile -t -O "${#objects[@]}" objects < <(ninja -C "$build" -t targets all |
      grep -oE "^_deps/ptxrt-build/CMakeFiles/[^:]*\.dir/$folder/[^:/]*\.cpp\.o")
  done
  [ ${#objects[@]} -gt 0 ] || fail "no sources under ${*:2} in the subproject build"
  cmake --build "$build" -j "$(nproc)" --target "${objects[@]}" >"$1/compile.log" 2>&1 ||
    { tail -30 "$1/compile.log"; fail "compiling ${*:2} of ptxrt as a subproject failed"; }
  echo "check_package: ${#objects[@]} sources of ${*:2} compiled"
}

check_subproject_library() {  # scratch
  local build library exported internal
  build=$(subproject_build "$1")
  cmake --build "$build" -j "$(nproc)" --target ptxrt >"$1/link.log" 2>&1 ||
    { tail -30 "$1/link.log"; fail "building ptxrt as a subproject failed"; }
  library=$(find "$build" -name 'libptxrt.so.*.*.*' | head -1)
  [ -n "$library" ] || fail "no versioned shared libptxrt was built"
  readelf -d "$library" | grep -q 'SONAME.*libptxrt\.so\.0\.1\]' || fail "SONAME without the version"
  # The public API only: nothing of the libraries used inside, no internal layer's functions.
  exported=$(nm -D -C --defined-only "$library")
  grep -q 'nlohmann' <<<"$exported" && fail "libptxrt exports nlohmann-json symbols"
  grep -q 'ptxrt::Jit::kernel' <<<"$exported" || fail "libptxrt does not export ptxrt::Jit::kernel"
  internal=$(grep -E 'ptxrt::detail::(driver|decode_entry|embedded_kernel_files)' <<<"$exported" || true)
  [ -z "$internal" ] || fail "libptxrt exports internals: $internal"
  echo "check_package: subproject library ok: $(basename "$library"), $(wc -l <<<"$exported") symbols exported"
}

check_subproject_examples() {  # scratch
  local build
  build=$(subproject_build "$1")
  cmake --build "$build" -j "$(nproc)" >"$1/examples.log" 2>&1 ||
    { tail -30 "$1/examples.log"; fail "building the examples against the subproject failed"; }
  for example in "${examples[@]}"; do run_example "$build/$example/${example}_example"; done
}

mode=${1:-}
shift || true
case "$mode:$#" in
prefix:2) check_prefix "$1" "$2" ;;
example:3) check_example "$1" "$(realpath "$2")" "$3" ;;
pkg-config:2)
  command -v pkg-config >/dev/null || { echo "check_package: no pkg-config here"; exit 77; }
  check_pkg_config "$(realpath "$1")" "$2"
  ;;
mpi:1) check_mpi "$1" ;;
install:3)
  check_prefix "$1" "$3"
  for example in "${examples[@]}"; do check_example "$example" "$(realpath "$2")" "$3"; done
  # (scripts/setup.sh installs pkg-config; the GPU machine may lack it.)
  if command -v pkg-config >/dev/null; then
    check_pkg_config "$(realpath "$2")" "$3"
  else
    echo "check_package: no pkg-config here: ptxrt.pc not tried"
  fi
  [ -e "$3/prefix/lib/cmake/ptxrt/ptxrtMpiTargets.cmake" ] && check_mpi "$3"
  echo "check_package: install ok"
  ;;
subproject-configure:2) configure_subproject "$(realpath "$1")" "$2" ;;
subproject-compile:*) [ $# -ge 2 ] || fail "usage: check_package.sh subproject-compile SCRATCH FOLDER..."
  compile_subproject_sources "$@" ;;
subproject-library:1) check_subproject_library "$1" ;;
subproject-examples:1) check_subproject_examples "$1" ;;
*) fail "usage: check_package.sh prefix|example|pkg-config|mpi|install|subproject-configure|subproject-compile|subproject-library|subproject-examples ARGUMENTS (see its first lines)" ;;
esac
