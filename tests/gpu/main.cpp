// GPU test runner: where no usable CUDA device is present every case reports "skipped" to CTest
// (exit code 77) instead of failing, with the reason on stderr.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "ptxrt/driver.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  if (context.shouldExit()) return context.run();  // --list-test-cases and friends need no GPU
  if (ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::fprintf(stderr, "skipped: %s\n", status.problem.c_str());
    return 77;
  }
  return context.run();
}
