// `ptxrt run sgemm`: the SGEMM family through the library call, with the config the shape
// heuristic picks, the tuning database's (--tuned) or the heuristic's with -D constants set.
// Kept apart from run.cpp's classic programs, whose --tuned has a matmul-only meaning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxrt::tools {

struct SgemmRunArguments {
  std::int64_t m = 1024, n = 1024, k = 1024;
  std::vector<std::string> defines;
  bool tuned = false;
  std::string database;  // --db; empty: TuningDatabase::default_path()
  int repeat = 10;
  bool verify = false;
  std::uint64_t seed = 1;
  bool json = false;
  int device = 0;
};

// Checks every argument (and reads the database for --tuned) before the driver is touched, then
// runs and prints the report (text, or JSON with "sgemm": {config, chosen_by} and for --tuned
// "tuned": {level, config, from}). Throws Error for a bad argument; CLI::RuntimeError(1) after
// the report when the verification failed.
void run_sgemm_command(const SgemmRunArguments& arguments);

}  // namespace ptxrt::tools
