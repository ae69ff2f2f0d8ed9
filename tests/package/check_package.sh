#!/usr/bin/env bash
# What a user of the library sees, checked the way a user would:
#   check_package.sh install    BUILD SOURCE SCRATCH   cmake --install BUILD, then every example
#       built against the installed tree with find_package(ptxrt CONFIG REQUIRED), and one through
#       pkg-config; the tree holds the library, headers, CLI, CMake package and ptxrt.pc only;
#       where ptxrt was built with MPI, a program finds and links ptxrt::mpi.
#   check_package.sh subproject BUILD SOURCE SCRATCH   the examples with ptxrt as a subproject
#       (FetchContent), shared, with CLI11, doctest and an installed nlohmann-json all refused:
#       the library alone builds, tests/CLI/host programs do not, the SONAME carries the version.
# Each example then runs: without a GPU it must fail with the no-driver message, with one
# (PTXRT_REQUIRE_GPU=1, as scripts/gpu-check.sh sets) it must print its "ok" verdict.
set -euo pipefail
mode=$1 build=$(realpath "$2") source=$(realpath "$3") scratch=$4
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")
examples=(matmul/matmul_example user_kernel/user_kernel_example threads/threads_example
          tuned_kernel/tuned_kernel_example)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

fail() { echo "check_package: $*" >&2; exit 1; }

run_examples() {  # folder holding the built examples, then the examples' paths in it
  local folder=$1
  shift
  for example in "$@"; do
    local output status=0
    output=$(PTXRT_CACHE_DIR="$scratch/cache" "$folder/$example" 2>&1) || status=$?
    echo "$example: exit $status: $output"
    if [ "$status" = 0 ]; then
      [[ "$output" == *": ok" ]] || fail "$example exited 0 without its ok verdict"
    elif [ "${PTXRT_REQUIRE_GPU:-0}" = 1 ]; then
      fail "$example failed on a GPU machine"
    else
      [[ "$output" == *"no CUDA driver found"* || "$output" == *"no CUDA device"* ]] ||
        fail "$example failed without naming the missing driver or device"
    fi
  done
}

case "$mode" in
install)
  prefix="$scratch/prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  for expected in include/ptxrt/ptxrt.hpp include/ptxrt/core/jit.hpp include/ptxrt/export.hpp bin/ptxrt \
                  lib/cmake/ptxrt/ptxrtConfig.cmake lib/cmake/ptxrt/ptxrtConfigVersion.cmake \
                  lib/cmake/ptxrt/ptxrtTargets.cmake lib/pkgconfig/ptxrt.pc; do
    [ -e "$prefix/$expected" ] || fail "the installed tree lacks $expected"
  done
  compgen -G "$prefix/lib/libptxrt.*" >/dev/null || fail "the installed tree lacks libptxrt"
  strays=$(cd "$prefix" && find . -type f | grep -Ei 'test|fuzz|doctest|CLI11|nlohmann|corpus' || true)
  [ -z "$strays" ] || fail "the installed tree holds files that are not ptxrt's: $strays"
  # No source tree either: the builtin kernels are inside the library.
  (cd "$prefix" && find . -name '*.cu' -o -name '*.cuh' | grep -q .) && fail "kernel sources installed"
  for example in matmul user_kernel threads tuned_kernel; do
    cmake -S "$source/examples/$example" -B "$scratch/$example" -G Ninja "${launcher[@]}" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
    cmake --build "$scratch/$example" >/dev/null
  done
  run_examples "$scratch" "${examples[@]}"
  # pkg-config, with the prefix given only at install time: ptxrt.pc finds it from its own place.
  # (scripts/setup.sh installs pkg-config; the GPU machine may lack it.)
  if command -v pkg-config >/dev/null; then
    mkdir -p "$scratch/pkg-config/matmul"
    # shellcheck disable=SC2046
    g++ -std=c++20 -o "$scratch/pkg-config/matmul/matmul_example" "$source/examples/matmul/main.cpp" \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ptxrt)
    run_examples "$scratch/pkg-config" matmul/matmul_example
  else
    echo "check_package: no pkg-config here: ptxrt.pc not tried"
  fi
  "$prefix/bin/ptxrt" kernels >/dev/null || fail "the installed CLI does not run"
  # ptxrt::mpi, where ptxrt was built with MPI: find_package(ptxrt COMPONENTS mpi) and link it.
  if [ -e "$prefix/lib/cmake/ptxrt/ptxrtMpiTargets.cmake" ]; then
    mkdir -p "$scratch/mpi_user"
    printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' 'project(mpi_user LANGUAGES CXX)' \
      'find_package(ptxrt 0.1 CONFIG REQUIRED COMPONENTS mpi)' \
      'add_executable(mpi_user main.cpp)' 'target_link_libraries(mpi_user PRIVATE ptxrt::mpi)' \
      >"$scratch/mpi_user/CMakeLists.txt"
    # Node-local rank 3 with 2 GPUs visible takes GPU 1; no MPI call is made.
    printf '%s\n' '#include "ptxrt/mpi.hpp"' \
      'int main() { return ptxrt::mpi::device_for_rank(3, {}, 2) == 1 ? 0 : 1; }' \
      >"$scratch/mpi_user/main.cpp"
    cmake -S "$scratch/mpi_user" -B "$scratch/mpi_user/build" -G Ninja "${launcher[@]}" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "find_package(ptxrt COMPONENTS mpi) failed"
    cmake --build "$scratch/mpi_user/build" >/dev/null || fail "a program using ptxrt::mpi did not build"
    "$scratch/mpi_user/build/mpi_user" || fail "a program using ptxrt::mpi did not run"
    echo "check_package: ptxrt::mpi found and linked"
  fi
  echo "check_package: install ok: $(cd "$prefix" && find . -type f | wc -l) files in $prefix"
  ;;
subproject)
  # CMAKE_DISABLE_FIND_PACKAGE_X makes find_package(X) fail: proof that the library needs none.
  cmake -S "$source/examples" -B "$scratch/build" -G Ninja "${launcher[@]}" \
    -DPTXRT_SOURCE_DIR="$source" -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON >"$scratch/configure.log" 2>&1 ||
    { cat "$scratch/configure.log"; fail "configuring ptxrt as a subproject failed"; }
  cmake --build "$scratch/build" -j "$(nproc)" >"$scratch/build.log" 2>&1 ||
    { tail -30 "$scratch/build.log"; fail "building ptxrt as a subproject failed"; }
  targets=$(cmake --build "$scratch/build" --target help)
  for unwanted in ptxrt_cli ptxrt_host ptxrt_cpu_tests ptxrt_gpu_tests; do
    grep -qw "$unwanted" <<<"$targets" && fail "a subproject build made $unwanted"
  done
  library=$(find "$scratch/build" -name 'libptxrt.so.*.*.*' | head -1)
  [ -n "$library" ] || fail "no versioned shared libptxrt was built"
  readelf -d "$library" | grep -q 'SONAME.*libptxrt\.so\.0\.1\]' || fail "SONAME without the version"
  # The public API only: nothing of the libraries used inside, no internal layer's functions.
  exported=$(nm -D -C --defined-only "$library")
  grep -q 'nlohmann' <<<"$exported" && fail "libptxrt exports nlohmann-json symbols"
  grep -q 'ptxrt::Jit::kernel' <<<"$exported" || fail "libptxrt does not export ptxrt::Jit::kernel"
  internal=$(grep -E 'ptxrt::detail::(driver|decode_entry|embedded_kernel_files)' <<<"$exported" || true)
  [ -z "$internal" ] || fail "libptxrt exports internals: $internal"
  run_examples "$scratch/build" "${examples[@]}"
  echo "check_package: subproject ok: $(basename "$library"), $(wc -l <<<"$exported") symbols exported"
  ;;
*) fail "usage: check_package.sh install|subproject BUILD SOURCE SCRATCH" ;;
esac
