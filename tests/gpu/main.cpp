// GPU test runner: where no usable CUDA device is present every case reports "skipped" to CTest
// (exit code 77) instead of failing, with the reason on stderr. It also serves as the tuning
// worker of the tests that call tune_problem (which starts this program again as its worker).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "ptxrt/core/driver.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

int main(int argc, char** argv) {
  if (std::optional<int> code = ptxrt::serve_tune_worker(argc, argv)) return *code;
  doctest::Context context(argc, argv);
  if (context.shouldExit()) return context.run();  // --list-test-cases and friends need no GPU
  if (ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::fprintf(stderr, "skipped: %s\n", status.problem.c_str());
    return 77;
  }
  return context.run();
}
