// What one host program run reports, and the options every program takes. Plain values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/core/kernel.hpp"

namespace ptxrt::apps {

// The bits of a quiet NaN: float outputs are filled with it before every run, so an element the
// kernel never wrote fails verification.
inline constexpr std::uint32_t poison_word = 0x7fc00000u;

struct RunOptions {
  std::uint64_t seed = 1;  // the inputs are a function of it
  int repeats = 10;        // timed runs after one untimed warm-up; the median is reported
  bool verify = true;      // compare the output with the CPU reference
};

struct Run {
  std::string program;          // "matmul"
  std::string kernel;           // the entry point of the main launch: "matmul_tiled"
  std::vector<Define> defines;  // as compiled, defaults included
  Dim3 grid;                    // of the main launch
  Dim3 block;
  int launches = 1;        // kernel launches per timed run (multi-pass programs)
  double median_ms = 0.0;  // of one whole run, all its launches
  double rate = 0.0;       // work per second, in rate_unit, from the minimal work
  std::string rate_unit;   // "GFLOP/s", "GB/s", "Mkey/s", ...
  bool verified = false;
  // How far the output is from the CPU reference, measured as `error_measure` says; 0 is exact.
  double max_error = 0.0;
  double tolerance = 0.0;  // passes when max_error <= tolerance (0: must be exact)
  std::string error_measure;
  std::string note;  // what else the program wants said (the value found, a file)

  // True unless a verification ran and failed (a NaN error fails).
  bool passed() const { return !verified || max_error <= tolerance; }
};

// A Run with what it launches filled in, not yet timed.
Run describe_launch(std::string program, std::string kernel, std::vector<Define> defines, Dim3 grid,
                    Dim3 block);

// Records a comparison with apps::compare: error is max|actual - expected| / max|expected|.
// With tolerance 0 the output must equal the reference exactly (NaN never does).
void record_comparison(Run& run, std::span<const float> actual, std::span<const float> expected,
                       double tolerance);

// Several lines: what ran, the median time, the rate and the verdict ("PASS", "FAIL",
// "not verified").
std::string format_run(const Run& run);

// The bytes (or operations) per millisecond expressed per second in units of 10^9 (GB/s, GFLOP/s).
inline double giga_per_second(double amount, double milliseconds) {
  return milliseconds > 0.0 ? amount / milliseconds / 1e6 : 0.0;
}

}  // namespace ptxrt::apps
