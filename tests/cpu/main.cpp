// The CPU tests' runner. NVRTC 13 serves repeated compiles from the CUDA compute cache
// (~/.nv/ComputeCache, where a driver is installed) without ptxas' report, which the resource
// tests read; so the cache is off for this process.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  return doctest::Context(argc, argv).run();
}
