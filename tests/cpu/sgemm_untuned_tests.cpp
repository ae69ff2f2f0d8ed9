// What a tune of sgemm measures its winner against, without a GPU: the shape heuristic's pick,
// which sgemm() runs where no tune was recorded, and which the tune's space holds at every shape,
// so that a tune times it and keeps a winner only where it beats it.

#include <doctest/doctest.h>

#include <vector>

#include "apps/matmul/sgemm_shapes.hpp"
#include "device_profiles.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

TEST_CASE("a tune of sgemm times what runs untuned, at every shape") {
  for (const ptxrt::DeviceProperties& device : {ptxrt::testing::h100(), ptxrt::testing::h200()}) {
    CAPTURE(device.name);
    const ptxrt::KernelProblem problem = ptxrt::sgemm_problem(device);
    int tiles_of_bk_8 = 0;
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
      // The shape's rules (tiles wider than the product, small tiles, splits, BK 8 at deep
      // slices) give way to the pick.
      CHECK(space.admits(untuned));
      REQUIRE_FALSE(first.empty());
      CHECK(first.front() == untuned);
      tiles_of_bk_8 += pick.block_k == 8 ? 1 : 0;
    }
    // Among them, picks of the menu's BK 8 tile.
    CHECK(tiles_of_bk_8 > 0);
  }
}
