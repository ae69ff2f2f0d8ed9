#!/usr/bin/env bash
# Installs what building ptxrt needs, from Debian/Ubuntu packages, when it is missing: a C++20
# compiler, CMake, Ninja, CLI11, doctest and nlohmann-json. The CUDA toolkit (headers and NVRTC)
# must already be there: it is not a distribution package we can assume.
set -euo pipefail

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
[ -f /usr/include/CLI/CLI.hpp ] || missing+=(libcli11-dev)
[ -f /usr/include/doctest/doctest.h ] || missing+=(doctest-dev)
[ -f /usr/include/nlohmann/json.hpp ] || missing+=(nlohmann-json3-dev)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup: no CUDA toolkit found (expected /usr/local/cuda); install it, or set CUDAToolkit_ROOT" >&2
  exit 1
fi
