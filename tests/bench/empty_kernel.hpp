// The kernel the launch benchmarks time: it does nothing, so that what they measure is the
// host's cost of a launch (or of a graph replay). Compiled by a Jit without a disk cache, so
// that a run leaves no files behind.
#pragma once

#include "ptxrt/core/jit.hpp"
#include "ptxrt/ptxrt.hpp"

namespace ptxrt::bench {

inline Jit& memory_only_jit() {
  static Jit jit([] {
    JitOptions options;
    options.cache_directory.clear();
    return options;
  }());
  return jit;
}

// empty(float* out, int n): writes only when n < 0, which no benchmark passes.
inline Kernel empty_kernel(const Context& context) {
  return memory_only_jit().kernel(
      Program::from_string(
          "extern \"C\" __global__ void empty(float* out, int n) { if (n < 0) out[0] = 1.0f; }",
          "empty.cu"),
      {}, context, "empty");
}

}  // namespace ptxrt::bench
