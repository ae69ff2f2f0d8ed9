// aos-soa: the same computation, out[i] = |p[i]|², read from an array of {x, y, z} structures
// and from three separate arrays (ptx_src/aos_soa.cu), grid-stride with 256-thread blocks. Both
// move the same minimal 16 bytes per point (12 read, 4 written), so their GB/s compare the
// layouts directly. Verified exactly against apps::squared_norms.
#pragma once

#include <cstdint>

#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

struct AosSoaPlan {
  std::size_t n = 0;
  Program program;
  std::vector<Define> defines;
};

AosSoaPlan plan_aos_soa(std::int64_t n, std::vector<Define> defines = {});

struct AosSoaRuns {
  Run aos;
  Run soa;
};
AosSoaRuns run_aos_soa(Jit& jit, const Context& context, const AosSoaPlan& plan,
                       const RunOptions& options);

}  // namespace ptxrt::apps
