#!/usr/bin/env bash
# What a user of the library sees, checked the way a user would:
#   check_package.sh install    BUILD SOURCE SCRATCH   cmake --install BUILD, then every example
#       built against the installed tree with find_package(ptxrt CONFIG REQUIRED COMPONENTS ...),
#       and one through pkg-config; the tree holds the components' libraries and public headers,
#       the CLI, the CMake package and the .pc files only, no internal or toolkit-only header; an
#       application of each component alone (core, tune, blas; mpi where ptxrt was built with MPI)
#       finds it with find_package and with pkg-config and links nothing of the components above.
#   check_package.sh subproject BUILD SOURCE SCRATCH   the examples with ptxrt as a subproject
#       (FetchContent), shared, with CLI11, doctest and an installed nlohmann-json all refused:
#       the components alone build, tests/CLI/applications do not, each SONAME carries the version.
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

# One application per component, each finding that component alone (CMake and pkg-config) and
# calling into it without a GPU; core's link line holds no other component, tune's no blas.
check_components_alone() {  # the install prefix
  local prefix=$1 components=(core tune blas)
  [ -e "$prefix/lib/cmake/ptxrt/ptxrtMpiTargets.cmake" ] && components+=(mpi)
  declare -A header=([core]=ptxrt/core.hpp [tune]=ptxrt/tune.hpp [blas]=ptxrt/blas.hpp [mpi]=ptxrt/mpi.hpp)
  declare -A call=(
    [core]='return ptxrt::driver_status().device_count >= 0 ? 0 : 1;'
    [tune]='return ptxrt::default_compile_threads() >= 1 ? 0 : 1;'
    [blas]='return ptxrt::sgemm_tiles(ptxrt::SgemmConfig{}, 256, 256) > 0 ? 0 : 1;'
    # Node-local rank 3 with 2 GPUs visible takes GPU 1; no MPI call is made.
    [mpi]='return ptxrt::mpi::device_for_rank(3, {}, 2) == 1 ? 0 : 1;')
  declare -A above=([core]='ptxrt_(tune|blas|mpi|apps)' [tune]='ptxrt_(blas|mpi|apps)'
                    [blas]='ptxrt_(mpi|apps)' [mpi]='ptxrt_(blas|apps)')
  declare -A unasked=([core]='tune blas mpi ptxrt' [tune]='blas mpi ptxrt' [blas]='mpi' [mpi]='blas ptxrt')
  for component in "${components[@]}"; do
    local folder="$scratch/alone/$component"
    mkdir -p "$folder"
    printf '%s\n' "#include \"${header[$component]}\"" "int main() { ${call[$component]} }" >"$folder/main.cpp"
    # shellcheck disable=SC2016  # CMake's own ${other}, written as it is
    printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' "project(${component}_user LANGUAGES CXX)" \
      "find_package(ptxrt 0.1 CONFIG REQUIRED COMPONENTS $component)" \
      "foreach(other IN ITEMS ${unasked[$component]})" '  if(TARGET ptxrt::${other})' \
      '    message(FATAL_ERROR "ptxrt::${other} defined though not asked for")' '  endif()' 'endforeach()' \
      'add_executable(user main.cpp)' "target_link_libraries(user PRIVATE ptxrt::$component)" \
      >"$folder/CMakeLists.txt"
    cmake -S "$folder" -B "$folder/build" -G Ninja "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
      >"$folder/configure.log" 2>&1 ||
      { cat "$folder/configure.log"; fail "find_package(ptxrt COMPONENTS $component) failed"; }
    cmake --build "$folder/build" >/dev/null || fail "an application of ptxrt::$component alone did not build"
    local link
    link=$(cd "$folder/build" && ninja -t commands user | tail -1)
    grep -qE "${above[$component]}" <<<"$link" && fail "ptxrt::$component links more than it needs: $link"
    [ "$component" = core ] || [ "$component" = mpi ] || grep -q "libptxrt_core" <<<"$link" ||
      fail "ptxrt::$component does not bring ptxrt::core: $link"
    "$folder/build/user" || fail "an application of ptxrt::$component alone did not run"
    if [ "$component" != mpi ] && command -v pkg-config >/dev/null; then
      local flags
      flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs "ptxrt-$component") ||
        fail "pkg-config does not know ptxrt-$component"
      grep -qE "${above[$component]}" <<<"$flags" && fail "ptxrt-$component.pc links more than it needs: $flags"
      grep -qE '(^| )/[^ ]*\.(so|a)( |$)' <<<"$flags" && fail "ptxrt-$component.pc names library files by path: $flags"
      # shellcheck disable=SC2086
      g++ -std=c++20 -o "$folder/user-pkg-config" "$folder/main.cpp" $flags ||
        fail "an application of ptxrt-$component.pc alone did not build"
      "$folder/user-pkg-config" || fail "an application of ptxrt-$component.pc alone did not run"
    fi
    echo "check_package: ptxrt::$component alone found, linked and run"
  done
}

case "$mode" in
install)
  prefix="$scratch/prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  for expected in include/ptxrt/core.hpp include/ptxrt/core/jit.hpp include/ptxrt/tune.hpp \
                  include/ptxrt/tune/tuner.hpp include/ptxrt/blas.hpp include/ptxrt/blas/sgemm.hpp \
                  include/ptxrt/ptxrt.hpp include/ptxrt/export.hpp bin/ptxrt \
                  lib/cmake/ptxrt/ptxrtConfig.cmake lib/cmake/ptxrt/ptxrtConfigVersion.cmake \
                  lib/cmake/ptxrt/ptxrtCoreTargets.cmake lib/cmake/ptxrt/ptxrtTuneTargets.cmake \
                  lib/cmake/ptxrt/ptxrtBlasTargets.cmake lib/cmake/ptxrt/ptxrtTargets.cmake \
                  lib/pkgconfig/ptxrt-core.pc lib/pkgconfig/ptxrt-tune.pc lib/pkgconfig/ptxrt-blas.pc \
                  lib/pkgconfig/ptxrt.pc; do
    [ -e "$prefix/$expected" ] || fail "the installed tree lacks $expected"
  done
  for component in core tune blas; do
    compgen -G "$prefix/lib/libptxrt_$component.*" >/dev/null || fail "the installed tree lacks libptxrt_$component"
  done
  strays=$(cd "$prefix" && find . -type f | grep -Ei 'test|fuzz|doctest|CLI11|nlohmann|corpus' || true)
  [ -z "$strays" ] || fail "the installed tree holds files that are not ptxrt's: $strays"
  # No source tree either: each component holds the kernels it needs.
  (cd "$prefix" && find . -name '*.cu' -o -name '*.cuh' | grep -q .) && fail "kernel sources installed"
  # The public headers only, and none that needs a toolkit header its API does not take.
  internals=$(cd "$prefix/include" && find . -name 'builtin_kernels.hpp' -o -name 'single_flight.hpp' \
              -o -name 'hash.hpp' -o -name 'usable_cpus.hpp' | head -3)
  [ -z "$internals" ] || fail "internal headers installed: $internals"
  toolkit=$(grep -rlE '#include <(nvrtc|nvJitLink|nvFatbin)\.h>' "$prefix/include" || true)
  [ -z "$toolkit" ] || fail "installed headers include NVRTC, nvJitLink or nvFatbin: $toolkit"
  for example in matmul user_kernel threads tuned_kernel; do
    cmake -S "$source/examples/$example" -B "$scratch/$example" -G Ninja "${launcher[@]}" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
    cmake --build "$scratch/$example" >/dev/null
  done
  run_examples "$scratch" "${examples[@]}"
  check_components_alone "$prefix"
  # pkg-config, with the prefix given only at install time: ptxrt.pc finds it from its own place.
  # (scripts/setup.sh installs pkg-config; the GPU machine may lack it.)
  if command -v pkg-config >/dev/null; then
    mkdir -p "$scratch/pkg-config/matmul"
    # shellcheck disable=SC2046
    g++ -std=c++20 -o "$scratch/pkg-config/matmul/matmul_example" "$source/examples/matmul/main.cpp" \
      "-DKERNEL_FILE=\"$source/ptx_src/matmul_tiled.cu\"" \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ptxrt-core)
    run_examples "$scratch/pkg-config" matmul/matmul_example
  else
    echo "check_package: no pkg-config here: ptxrt-core.pc not tried"
  fi
  "$prefix/bin/ptxrt" kernels >/dev/null || fail "the installed CLI does not run"
  # A component that was not built is refused by name.
  mkdir -p "$scratch/absent"
  printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' 'project(absent LANGUAGES CXX)' \
    'find_package(ptxrt 0.1 CONFIG REQUIRED COMPONENTS core no_such_component)' \
    >"$scratch/absent/CMakeLists.txt"
  if absent=$(cmake -S "$scratch/absent" -B "$scratch/absent/build" -G Ninja \
                -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then
    fail "find_package(ptxrt COMPONENTS no_such_component) succeeded"
  fi
  grep -q 'no_such_component' <<<"$absent" || fail "a missing component is not named: $absent"
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
  for unwanted in ptxrt_cli ptxrt_apps ptxrt_cpu_tests ptxrt_gpu_tests; do
    grep -qw "$unwanted" <<<"$targets" && fail "a subproject build made $unwanted"
  done
  exported_count=0
  for component in core tune blas; do
    library=$(find "$scratch/build" -name "libptxrt_$component.so.*.*.*" | head -1)
    [ -n "$library" ] || fail "no versioned shared libptxrt_$component was built"
    readelf -d "$library" | grep -q "SONAME.*libptxrt_$component\.so\.0\.1\]" ||
      fail "libptxrt_$component's SONAME lacks the version"
    # The public API only: nothing of the libraries used inside, no internal layer's functions.
    exported=$(nm -D -C --defined-only "$library")
    grep -q 'nlohmann' <<<"$exported" && fail "libptxrt_$component exports nlohmann-json symbols"
    internal=$(grep -E 'ptxrt::detail::(driver|decode_entry|embedded_[a-z]*_files)' <<<"$exported" || true)
    [ -z "$internal" ] || fail "libptxrt_$component exports internals: $internal"
    exported_count=$((exported_count + $(wc -l <<<"$exported")))
  done
  core_library=$(find "$scratch/build" -name 'libptxrt_core.so.*.*.*' | head -1)
  nm -D -C --defined-only "$core_library" | grep -q 'ptxrt::Jit::kernel' ||
    fail "libptxrt_core does not export ptxrt::Jit::kernel"
  # core needs nothing of the components above it.
  ldd_core=$(readelf -d "$core_library" | grep NEEDED)
  grep -qE 'libptxrt_(tune|blas)' <<<"$ldd_core" && fail "libptxrt_core needs another component: $ldd_core"
  run_examples "$scratch/build" "${examples[@]}"
  echo "check_package: subproject ok: libptxrt_{core,tune,blas}.so, $exported_count symbols exported"
  ;;
*) fail "usage: check_package.sh install|subproject BUILD SOURCE SCRATCH" ;;
esac
