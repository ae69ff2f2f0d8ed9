// `ptxrt run FILE.cu --problem P.json`: a kernel file's problem run once (run_problem.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt::cli {

struct KernelFileRun {
  std::string kernel;                  // the kernel file
  std::filesystem::path problem_file;  // empty: the file's "// ptxrt: problem" lines
  std::string sizes;                   // "W=4096,H=4096"; empty: the defaults
  std::vector<Define> defines;         // tunables set over the default config
  const TuningDatabase* database = nullptr;  // --tuned: pick the config from it
  int repeats = 10;
  bool verify = false;
  bool json = false;
  int device = 0;
};

// Prints what ran, the median time, the rate and the verdict (as a one-element JSON array with
// json); a failed verification throws CLI::RuntimeError(1) after the report.
void run_kernel_file(const KernelFileRun& request);

}  // namespace ptxrt::cli
