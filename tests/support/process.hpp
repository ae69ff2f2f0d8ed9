// Runs a program (no shell) and captures its exit code and output: for the tests that check a
// whole process's behaviour (the CLI, driver loading under a different LD_LIBRARY_PATH).
#pragma once

#include <string>
#include <vector>

namespace ptxrt::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together, in order
};

// `environment` entries ("NAME=VALUE") are added to (or replace in) this process's environment.
ProcessResult run_process(const std::vector<std::string>& arguments,
                          const std::vector<std::string>& environment = {});

}  // namespace ptxrt::testing
