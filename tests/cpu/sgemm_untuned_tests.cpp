// What a tune of sgemm measures its winner against, without a GPU: the shape heuristic's pick,
// which sgemm() runs where no tune was recorded, and which the tune's space holds wherever
// sgemm.cu's own constraints allow it, so that a tune times it and keeps a winner only where it
// beats it.

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "apps/matmul/sgemm_shapes.hpp"
#include "device_profiles.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

TEST_CASE("a tune of sgemm times what runs untuned wherever sgemm.cu's constraints allow it") {
  for (const ptxrt::DeviceProperties& device : {ptxrt::testing::h100(), ptxrt::testing::h200()}) {
    CAPTURE(device.name);
    const ptxrt::KernelProblem problem = ptxrt::sgemm_problem(device);
    int held = 0;
    int refused_by_the_kernel_file = 0;
    for (const ptxrt::apps::SgemmDrawnShape& drawn : ptxrt::apps::draw_sgemm_shapes(200, 777)) {
      const int m = drawn.size.m, n = drawn.size.n, k = drawn.size.k;
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      const ptxrt::ProblemSizes sizes{{"m", m}, {"n", n}, {"k", k}};
      const ptxrt::SgemmConfig pick = ptxrt::sgemm_heuristic_config(device, m, n, k);
      CAPTURE(pick.describe());
      const ptxrt::TuningConfig untuned = ptxrt::problem_untuned_config(problem, sizes);
      CHECK(ptxrt::sgemm_config_with(ptxrt::SgemmConfig{}, untuned.defines()) == pick);

      const ptxrt::TuningSpace space = ptxrt::problem_space(problem, sizes, device);
      const std::vector<ptxrt::TuningConfig> first =
          ptxrt::problem_first_configs(problem, sizes, space);
      // sgemm.cu's constraints leave BK 8 out of every space; the shape's rules (tiles wider
      // than the product, small tiles, splits) give way to the pick.
      if (pick.block_k >= 16) {
        ++held;
        CHECK(space.admits(untuned));
        REQUIRE_FALSE(first.empty());
        CHECK(first.front() == untuned);
      } else {
        ++refused_by_the_kernel_file;
        CHECK_FALSE(space.admits(untuned));
        CHECK(std::find(first.begin(), first.end(), untuned) == first.end());
      }
    }
    // Both kinds of shape were drawn.
    CHECK(held > 0);
    CHECK(refused_by_the_kernel_file > 0);
  }
}
