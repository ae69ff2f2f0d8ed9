// The tuning worker of the Python package: ptxrt.tune() starts this program for each GPU (a
// Python interpreter cannot answer as a worker while it imports and runs a user's script), and it
// serves the problem file it is given (ProblemTuneOptions::worker_program).
#include <iostream>
#include <optional>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

int main(int argc, char** argv) {
  try {
    if (std::optional<int> code = ptxrt::serve_tune_worker(argc, argv)) return *code;
  } catch (const std::exception& error) {
    std::cerr << "ptxrt-tune-worker: " << error.what() << '\n';
    return 1;
  }
  std::cerr << "ptxrt-tune-worker: started by ptxrt.tune() for each GPU of a tune, not by hand\n";
  return 2;
}
