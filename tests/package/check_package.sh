#!/usr/bin/env bash
# What a user of the library sees, checked the way a user would. Each step is its own CTest case
# (tests/CMakeLists.txt), so that CTest spreads them over the cores; `install` does them all.
#   check_package.sh prefix     BUILD SCRATCH   cmake --install BUILD into SCRATCH/prefix: the tree
#       holds the components' libraries and public headers, the CLI, the CMake package and the .pc
#       files only, no internal or toolkit-only header, and the CLI runs.
#   check_package.sh example    NAME SOURCE SCRATCH   examples/NAME built against SCRATCH/prefix
#       with find_package(ptxrt CONFIG REQUIRED COMPONENTS ...), as its own project, then run.
#   check_package.sh pkg-config SOURCE SCRATCH   the matmul example built through ptxrt-core.pc
#       alone (exit 77 where pkg-config is missing).
#   check_package.sh components SCRATCH   an application of each component alone (core, tune, blas;
#       mpi where ptxrt was built with MPI) finds it with find_package and with pkg-config and
#       links nothing of the components above; a component that was not built is refused by name.
#   check_package.sh mpi        SCRATCH   where ptxrt was built with MPI, a program finds and links
#       ptxrt::mpi.
#   check_package.sh install    BUILD SOURCE SCRATCH   all of the above, one after the other.
#   check_package.sh subproject-configure SOURCE SCRATCH   ptxrt as a shared subproject
#       (FetchContent) of examples/, with CLI11, doctest and an installed nlohmann-json all
#       refused, configured in SCRATCH/build: it offers no tests, CLI or applications.
#   check_package.sh subproject-compile SCRATCH COMPONENT PART PARTS   compiles one share of the
#       component's sources: every PARTS-th from the PART-th (1-based), in Ninja's order.
#   check_package.sh subproject-library SCRATCH   links the components: each SONAME carries the
#       version, each exports its public API only, core needs no other component.
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

# The prefix given only at install time: the .pc files hold it as plain paths (no ".."), and a
# tree moved afterwards is found with --define-prefix.
check_pkg_config() {  # source, scratch
  local prefix folder flags moved
  prefix=$(installed_prefix "$2")
  folder=$(fresh_folder "$2/pkg-config")
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs --static ptxrt)
  echo "pkg-config --cflags --libs --static ptxrt: $flags"
  [[ "$flags" == *"-I$prefix/include "* && "$flags" == *"-L$prefix/lib "* ]] ||
    fail "the flags do not name the install prefix $prefix plainly"
  [[ "$flags" != *"/../"* ]] || fail "the flags climb out of a folder with '..'"
  [[ "$flags" == *" -pthread"* ]] || fail "the flags lack -pthread"
  moved="$2/pkg-config-moved"
  rm -rf "$moved" && cp -r "$prefix" "$moved"
  [[ "$(PKG_CONFIG_PATH="$moved/lib/pkgconfig" pkg-config --define-prefix --cflags ptxrt-core)" \
     == *"-I$moved/include"* ]] || fail "--define-prefix does not find a moved tree"
  # shellcheck disable=SC2046
  g++ -std=c++20 -o "$folder/matmul_example" "$1/examples/matmul/main.cpp" \
    "-DKERNEL_FILE=\"$1/ptx_src/matmul_tiled.cu\"" \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ptxrt-core)
  run_example "$folder/matmul_example"
}

# One application per component, each finding that component alone (CMake and pkg-config) and
# calling into it without a GPU; core's link line holds no other component, tune's no blas.
check_components_alone() {  # scratch
  local prefix components=(core tune blas)
  prefix=$(installed_prefix "$1")
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
    local folder
    folder=$(fresh_folder "$1/alone/$component")
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
  # A component that was not built is refused by name.
  local absent_folder absent
  absent_folder=$(fresh_folder "$1/absent")
  printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' 'project(absent LANGUAGES CXX)' \
    'find_package(ptxrt 0.1 CONFIG REQUIRED COMPONENTS core no_such_component)' \
    >"$absent_folder/CMakeLists.txt"
  if absent=$(cmake -S "$absent_folder" -B "$absent_folder/build" -G Ninja \
                -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then
    fail "find_package(ptxrt COMPONENTS no_such_component) succeeded"
  fi
  grep -q 'no_such_component' <<<"$absent" || fail "a missing component is not named: $absent"
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
# long: configure, compile each component's sources in shares (each step its own), link the
# libraries, then the rest. The steps share the build, so they run one at a time, each on every core. No
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
  for unwanted in ptxrt_cli ptxrt_apps ptxrt_cpu_tests ptxrt_gpu_tests; do
    grep -qw "$unwanted" <<<"$targets" && fail "a subproject build made $unwanted"
  done
  echo "check_package: ptxrt configured as a subproject in $build"
}

subproject_build() {  # scratch
  [ -f "$1/build/build.ninja" ] || fail "no subproject build in $1/build: run subproject-configure first"
  realpath "$1/build"
}

# Ninja names each object file as a target: those of the component's library, its generated
# sources included.
compile_subproject_share() {  # scratch, component (core, tune, blas, mpi), part, parts
  local build objects=() share=()
  build=$(subproject_build "$1")
  [[ "$3" =~ ^[1-9][0-9]*$ && "$4" =~ ^[1-9][0-9]*$ && "$3" -le "$4" ]] ||
    fail "part $3 of $4: give a part from 1 to the number of parts"
  mapfile -t objects < <(ninja -C "$build" -t targets all |
    grep -oE "^_deps/ptxrt-build/CMakeFiles/ptxrt_$2\.dir/[^:]*\.o")
  for ((index = $3 - 1; index < ${#objects[@]}; index += $4)); do share+=("${objects[index]}"); done
  [ ${#share[@]} -gt 0 ] || fail "no sources of ptxrt_$2 in part $3 of $4 of the subproject build"
  cmake --build "$build" -j "$(nproc)" --target "${share[@]}" >"$1/compile.log" 2>&1 ||
    { tail -30 "$1/compile.log"; fail "compiling part $3 of $4 of ptxrt_$2 as a subproject failed"; }
  echo "check_package: ${#share[@]} of the ${#objects[@]} sources of ptxrt_$2 compiled"
}

check_subproject_library() {  # scratch
  local build library exported internal exported_count=0 core_library needed
  build=$(subproject_build "$1")
  cmake --build "$build" -j "$(nproc)" --target ptxrt_core ptxrt_tune ptxrt_blas >"$1/link.log" 2>&1 ||
    { tail -30 "$1/link.log"; fail "building ptxrt as a subproject failed"; }
  for component in core tune blas; do
    library=$(find "$build" -name "libptxrt_$component.so.*.*.*" | head -1)
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
  core_library=$(find "$build" -name 'libptxrt_core.so.*.*.*' | head -1)
  # Read whole first: grep -q stopping early would fail nm's write, and with it the pipeline.
  exported=$(nm -D -C --defined-only "$core_library")
  grep -q 'ptxrt::Jit::kernel' <<<"$exported" || fail "libptxrt_core does not export ptxrt::Jit::kernel"
  # core needs nothing of the components above it.
  needed=$(readelf -d "$core_library" | grep NEEDED)
  grep -qE 'libptxrt_(tune|blas)' <<<"$needed" && fail "libptxrt_core needs another component: $needed"
  echo "check_package: subproject libraries ok: libptxrt_{core,tune,blas}.so, $exported_count symbols exported"
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
components:1) check_components_alone "$1" ;;
mpi:1) check_mpi "$1" ;;
install:3)
  check_prefix "$1" "$3"
  for example in "${examples[@]}"; do check_example "$example" "$(realpath "$2")" "$3"; done
  # (scripts/setup.sh installs pkg-config; the GPU machine may lack it.)
  if command -v pkg-config >/dev/null; then
    check_pkg_config "$(realpath "$2")" "$3"
  else
    echo "check_package: no pkg-config here: ptxrt-core.pc not tried"
  fi
  check_components_alone "$3"
  [ -e "$3/prefix/lib/cmake/ptxrt/ptxrtMpiTargets.cmake" ] && check_mpi "$3"
  echo "check_package: install ok"
  ;;
subproject-configure:2) configure_subproject "$(realpath "$1")" "$2" ;;
subproject-compile:4) compile_subproject_share "$@" ;;
subproject-library:1) check_subproject_library "$1" ;;
subproject-examples:1) check_subproject_examples "$1" ;;
*) fail "usage: check_package.sh prefix|example|pkg-config|components|mpi|install|subproject-configure|subproject-compile|subproject-library|subproject-examples ARGUMENTS (see its first lines)" ;;
esac
