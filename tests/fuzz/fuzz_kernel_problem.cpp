// libFuzzer target: the problem-file reader, KernelProblem::from_json, which `ptxrt tune FILE.cu
// --problem P.json`, `ptxrt run` and the tuning worker put every problem file through. A
// malformed file must end in ptxrt::Error, whatever its nesting, counts or names; a file it
// accepts must read back the same from its JSON form, and its data must check (counts, bytes,
// the memory cap) without being made, as a dry run checks it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/kernel_problem.hpp"

namespace {

const ptxrt::Program& kernel() {
  static const ptxrt::Program program = ptxrt::Program::from_string(
      "extern \"C\" __global__ void scale(const float* x, float* y, float f, int n) {}\n",
      "scale.cu");
  return program;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    // Relative data files are looked for where none can be.
    const ptxrt::KernelProblem problem =
        ptxrt::KernelProblem::from_json(text, kernel(), "fuzz.json", "/nonexistent");
    const std::string written = problem.to_json();
    if (ptxrt::KernelProblem::from_json(written, std::nullopt, "written.json", "/nonexistent")
            .to_json() != written)
      std::abort();
    const ptxrt::ProblemSizes sizes = problem.complete_sizes({});
    ptxrt::check_problem_data(problem, sizes);
    problem.launch_at(problem.fallback_config(sizes), sizes);
  } catch (const ptxrt::Error&) {
  }
  return 0;
}
