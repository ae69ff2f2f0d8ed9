#include "apps/common/run.hpp"

#include <cstdio>

#include "apps/common/reference.hpp"
#include "ptxrt/core/manifest.hpp"

namespace ptxrt::apps {

Run describe_launch(std::string program, std::string kernel, std::vector<Define> defines, Dim3 grid,
                    Dim3 block) {
  Run run;
  run.program = std::move(program);
  run.kernel = std::move(kernel);
  run.defines = std::move(defines);
  run.grid = grid;
  run.block = block;
  return run;
}

void record_comparison(Run& run, std::span<const float> actual, std::span<const float> expected,
                       double tolerance) {
  const Deviation deviation = compare(actual, expected);
  run.verified = true;
  run.max_error = deviation.max_relative_error;
  run.tolerance = tolerance;
  run.error_measure =
      tolerance == 0.0 ? "exact match with the CPU reference" : "max |gpu - cpu| / max |cpu|";
  if (deviation.max_relative_error > tolerance)
    run.note += (run.note.empty() ? "" : "; ") + std::string("worst element at index ") +
                std::to_string(deviation.worst_index);
}

std::string format_run(const Run& run) {
  char numbers[160];
  std::snprintf(numbers, sizeof numbers,
                "  median  %.4f ms over %d launch(es)\n  rate    %.2f %s\n", run.median_ms,
                run.launches, run.rate, run.rate_unit.c_str());
  std::string text = run.program + ": " + run.kernel + " [" + format_defines(run.defines) +
                     "] grid " + to_string(run.grid) + " block " + to_string(run.block) + "\n" +
                     numbers;
  if (run.verified) {
    std::snprintf(numbers, sizeof numbers, "  error   %.3g (tolerance %.3g, %s)\n", run.max_error,
                  run.tolerance, run.error_measure.c_str());
    text += numbers;
  }
  if (!run.note.empty()) text += "  note    " + run.note + "\n";
  text += std::string("  result  ") +
          (!run.verified  ? "not verified"
           : run.passed() ? "PASS"
                          : "FAIL") +
          "\n";
  return text;
}

}  // namespace ptxrt::apps
