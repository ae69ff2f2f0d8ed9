// `ptxrt bench`: each classic kernel against a peer measured in the same process, on the same
// device, with the same timing (events, warm-up, median): cuBLAS SGEMM for matmul, a device-to-
// device copy (cuMemcpyDtoD) for the memory-bound kernels. A copy's rate counts the bytes read
// plus the bytes written, and it copies half the kernel's minimal traffic, so that both move the
// same number of bytes. Every benchmarked output is verified once: the large matmul against
// cuBLAS (max-abs-normalized error <= 1e-4), the rest against the CPU reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

struct BenchSizes {
  int matmul = 4096;     // m = n = k
  int transpose = 8192;  // rows = cols
  std::int64_t reduce = 1ll << 28;
  std::int64_t vector_add = 1ll << 27;
  int repeats = 10;
  static BenchSizes quick();  // a smoke run: 1024³, 2048², 2^24, 2^24, 3 repeats
};

// The works `bench` knows, in the order they run: matmul, transpose, reduce, vecadd.
const std::vector<std::string>& bench_names();

struct BenchRow {
  std::string work;                 // "matmul 4096x4096x4096"
  Run run;                          // the kernel's: what ran, its median time and rate, verdict
  std::string peer;                 // "cuBLAS SGEMM", "cuMemcpyDtoD", or why there is none
  std::optional<double> peer_rate;  // in run.rate_unit
  std::optional<double> ratio() const {
    if (!peer_rate || *peer_rate <= 0.0) return std::nullopt;
    return run.rate / *peer_rate;
  }
};

// The rows of one work (a name of bench_names(); Error(invalid_argument) otherwise).
std::vector<BenchRow> bench(Jit& jit, const Context& context, std::string_view name,
                            const BenchSizes& sizes, std::uint64_t seed);

// GB/s of a device-to-device copy moving `traffic_bytes` (half read, half written).
double copy_rate_gb_per_s(const Context& context, std::size_t traffic_bytes, int repeats);

}  // namespace ptxrt::apps
