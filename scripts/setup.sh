#!/usr/bin/env bash
# Installs what building ptxrt needs, from Debian/Ubuntu packages, when it is missing: a C++20
# compiler, CMake, Ninja, pkg-config, CLI11, doctest, nlohmann-json and Open MPI (for ptxrt::mpi
# and its tests; ptxrt builds without it too); and matplotlib (pip) for the tune plot and its
# test. The CUDA toolkit (headers, NVRTC, nvJitLink) must already be there: it is not a
# distribution package we can assume; a toolkit made of NVIDIA's pip wheels gets the wheels of
# nvFatbin, nvdisasm and cuobjdump added when it lacks them.
#   scripts/setup.sh [--fuzz]   (--fuzz: also clang and its libFuzzer runtime, for scripts/fuzz.sh)
set -euo pipefail

fuzz=false
[ "${1:-}" = --fuzz ] && fuzz=true

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
command -v pkg-config >/dev/null || missing+=(pkgconf)
[ -f /usr/include/CLI/CLI.hpp ] || missing+=(libcli11-dev)
[ -f /usr/include/doctest/doctest.h ] || missing+=(doctest-dev)
[ -f /usr/include/nlohmann/json.hpp ] || missing+=(nlohmann-json3-dev)
command -v mpicxx >/dev/null || missing+=(libopenmpi-dev)
command -v mpirun >/dev/null || missing+=(openmpi-bin)
if $fuzz; then
  command -v clang++ >/dev/null || missing+=(clang)
  # libFuzzer ships in the compiler-rt package: libclang-rt-N-dev on current Debian, in the clang
  # package itself on older releases (then any libclang_rt.fuzzer archive is already there).
  if ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null &&
     ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/x86_64-pc-linux-gnu/libclang_rt.fuzzer.a" >/dev/null; then
    missing+=(libclang-rt-dev)
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c "import matplotlib" 2>/dev/null; then
  echo "setup: installing matplotlib (pip)"
  python3 -m pip install --quiet matplotlib
fi

# The Python package: its build (scikit-build-core, nanobind), NumPy, and its tests (pytest, and
# mypy for the stubs).
python_packages=()
for module in scikit_build_core:scikit-build-core nanobind numpy pytest mypy; do
  python3 -c "import ${module%%:*}" 2>/dev/null || python_packages+=("${module##*:}")
done
if [ ${#python_packages[@]} -gt 0 ]; then
  echo "setup: installing ${python_packages[*]} (pip)"
  python3 -m pip install --quiet "${python_packages[@]}"
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup: no CUDA toolkit found (expected /usr/local/cuda); install it, or set CUDAToolkit_ROOT" >&2
  exit 1
fi

# nvFatbin (multi-arch binaries), nvdisasm and cuobjdump (SASS) are part of NVIDIA's toolkit
# installers, but a toolkit assembled from NVIDIA's pip wheels (a dist-info folder beside bin/, as
# on CI) may lack them: add them from the same wheels, matched to the toolkit's CUDA major version
# (nvFatbin to its minor too; the tools of a newer 13.x read older CUBINs).
toolkit=$(realpath "${CUDAToolkit_ROOT:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}")
if [ -d "$toolkit/dist-info" ]; then
  version=$("$toolkit/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  read -r major minor <<<"$version"
  wheels=()
  [ -f "$toolkit/include/nvFatbin.h" ] || wheels+=("nvidia-nvfatbin==$major.$minor.*")
  [ -x "$toolkit/bin/nvdisasm" ] || wheels+=("nvidia-cuda-nvdisasm>=$major,<$((major + 1))")
  [ -x "$toolkit/bin/cuobjdump" ] || wheels+=("nvidia-cuda-cuobjdump>=$major,<$((major + 1))")
  if [ ${#wheels[@]} -gt 0 ]; then
    echo "setup: adding ${wheels[*]} (pip) to the toolkit in $toolkit"
    unpacked=$(mktemp -d)
    python3 -m pip install --quiet --no-deps --target "$unpacked" "${wheels[@]}"
    sudo=""
    [ -w "$toolkit" ] || sudo=sudo
    for folder in bin include lib; do
      [ -d "$unpacked/nvidia/cu$major/$folder" ] &&
        $sudo cp -a "$unpacked/nvidia/cu$major/$folder/." "$toolkit/$folder/"
    done
    [ -e "$toolkit/lib/libnvfatbin.so.$major" ] && [ ! -e "$toolkit/lib/libnvfatbin.so" ] &&
      $sudo ln -s "libnvfatbin.so.$major" "$toolkit/lib/libnvfatbin.so"
    $sudo cp -a "$unpacked"/*.dist-info "$toolkit/dist-info/"
    rm -rf "$unpacked"
    $sudo ldconfig 2>/dev/null || true
  fi
fi
