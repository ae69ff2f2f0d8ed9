// Time since a start, as the JIT's info log lines write it ("12.34 ms"). Internal to the JIT.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace ptxrt::detail {

using Clock = std::chrono::steady_clock;

inline std::string milliseconds_since(Clock::time_point start) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms",
                std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  return text;
}

}  // namespace ptxrt::detail
