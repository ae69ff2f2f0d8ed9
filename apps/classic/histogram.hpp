// histogram: counts of n values in BINS bins (ptx_src/histogram.cu), one grid of about as many
// blocks as are resident at once. The block variant keeps a whole histogram in each block's
// shared memory; the cluster variant (sm_90 and newer) spreads one histogram over the shared
// memory of a thread-block cluster's CLUSTER_SIZE blocks and adds through distributed shared
// memory. Values are uniform in [0, BINS + BINS/8), so that an eighth of them exercise the clamp
// into the last bin. Rate: GB/s of 4 bytes per value.
//
// Verification: exact, bin for bin, against the CPU's counts. The histogram is poisoned before
// each run and zeroed by the run itself (a memset on the launch's stream, timed with it).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

enum class HistogramVariant { block, cluster };
// "block" | "cluster"; Error(invalid_argument) listing them otherwise.
HistogramVariant parse_histogram_variant(std::string_view name);
std::string_view to_string(HistogramVariant variant);

struct HistogramPlan {
  std::size_t n = 0;
  HistogramVariant variant = HistogramVariant::block;
  Program program;
  std::vector<Define> defines;  // BINS, BLOCK_SIZE, CLUSTER_SIZE
  unsigned bins = 0;
  unsigned block_size = 0;
  unsigned cluster_size = 0;  // of the cluster variant
  // Dynamic shared memory per block: all the bins, or a cluster block's share of them.
  std::size_t shared_bytes() const;
};

// Checks n and the defines; needs no GPU.
HistogramPlan plan_histogram(std::int64_t n, HistogramVariant variant,
                             std::vector<Define> defines = {});

// A cluster variant on a device without clusters is the launch's Error (invalid_argument).
Run run_histogram(Jit& jit, const Context& context, const HistogramPlan& plan,
                  const RunOptions& options);

}  // namespace ptxrt::apps
