// The CPU tests' runner. NVRTC 13 serves repeated compiles from the CUDA compute cache
// (~/.nv/ComputeCache, where a driver is installed) without ptxas' report, which the resource
// tests read; so the cache is off for this process. It also answers the isolated links the link
// tests ask for.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>

#include "ptxrt/core/program.hpp"

int main(int argc, char** argv) {
  if (std::optional<int> code = ptxrt::serve_isolated_link(argc, argv)) return *code;
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  return doctest::Context(argc, argv).run();
}
