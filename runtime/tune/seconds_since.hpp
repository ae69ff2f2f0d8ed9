// Wall time since a start, in seconds: what the tuner's reports count. Internal to the tuner.
#pragma once

#include <chrono>

namespace ptxrt::detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ptxrt::detail
