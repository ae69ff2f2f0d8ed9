// The SGEMM family's tuning problem, without a GPU: the space `ptxrt tune sgemm` searches at each
// shape, the configs it times first, the database key it records under, and the tuned choice that
// sgemm() and `ptxrt run sgemm --tuned` read back.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "apps/tune/tune_problems.hpp"
#include "disk_cache_test_support.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "sgemm_test_shapes.hpp"

using ptxrt::SgemmConfig;
using ptxrt::testing::chosen;
using ptxrt::testing::h100;
using ptxrt::testing::Shape;

namespace {

// Every config of the tuning space for `shape` on an H100, as sgemm configs.
std::vector<SgemmConfig> space_configs(const Shape& shape) {
  std::vector<SgemmConfig> configs;
  for (const ptxrt::TuningConfig& config :
       ptxrt::sgemm_tuning_space(h100(), shape.m, shape.n, shape.k).enumerate().allowed)
    configs.push_back(ptxrt::sgemm_config_with(SgemmConfig{}, config.defines()));
  return configs;
}

bool any_split(const std::vector<SgemmConfig>& configs) {
  return std::any_of(configs.begin(), configs.end(),
                     [](const SgemmConfig& config) { return config.split_k > 1; });
}

// Tiles below 64 on a side or with fewer than 8×8 results per thread.
bool any_small_tile(const std::vector<SgemmConfig>& configs) {
  return std::any_of(configs.begin(), configs.end(), [](const SgemmConfig& config) {
    return config.block_m() < 64 || config.block_n() < 64 || config.thread_m * config.thread_n < 64;
  });
}

}  // namespace

TEST_CASE(
    "the tuning space splits K, offers small tiles and BK 8 only where the shape needs them") {
  const auto any_bk_8 = [](const std::vector<SgemmConfig>& configs) {
    return std::any_of(configs.begin(), configs.end(),
                       [](const SgemmConfig& config) { return config.block_k == 8; });
  };
  const std::vector<SgemmConfig> square = space_configs({8192, 8192, 8192});
  CHECK(!square.empty());
  CHECK_FALSE(any_split(square));
  CHECK_FALSE(any_small_tile(square));
  CHECK_FALSE(any_bk_8(square));
  // At K = 39 BK 16 computes 48 deep, BK 8 40; from slices of 128 on, BK 8 is left out.
  const std::vector<SgemmConfig> short_k = space_configs({4260, 1969, 39});
  CHECK(any_bk_8(short_k));
  CHECK(any_bk_8(space_configs({4260, 1969, 127})));
  CHECK_FALSE(any_bk_8(space_configs({4260, 1969, 128})));
  for (const SgemmConfig& config : short_k) {
    CAPTURE(config.describe());
    CHECK(config.stages >= 3);
    CHECK(config.thread_m * config.thread_n >= 16);
  }
  const std::vector<SgemmConfig> deep = space_configs({1536, 1536, 12288});
  CHECK(any_split(deep));
  for (const SgemmConfig& config : deep) {
    CAPTURE(config.describe());
    CHECK(ptxrt::sgemm_slice_depth(config, 12288) >= 128);
    CHECK(ptxrt::sgemm_config_fits(config, h100()));
  }
  const std::vector<SgemmConfig> small = space_configs({512, 512, 512});
  CHECK(any_small_tile(small));
  for (const SgemmConfig& config : small) {
    CAPTURE(config.describe());
    CHECK(config.block_m() <= 512);
    CHECK(config.block_n() <= 512);
  }
}

TEST_CASE("tune sgemm records under the key the tuned choice reads, one space for every size") {
  for (const Shape shape : {Shape{4096, 4096, 4096}, Shape{1536, 1536, 12288}}) {
    const ptxrt::KernelProblem problem = ptxrt::apps::builtin_tune_problem("sgemm", h100(), {});
    CHECK(ptxrt::problem_key(problem, {{"m", shape.m}, {"n", shape.n}, {"k", shape.k}}, h100()) ==
          ptxrt::sgemm_tuning_key(h100(), shape.m, shape.n, shape.k));
  }
  CHECK(ptxrt::sgemm_tuning_key(h100(), 64, 64, 64).space ==
        ptxrt::sgemm_tuning_key(h100(), 8192, 8192, 8192).space);
}

TEST_CASE("a tune of sgemm times the heuristic's best estimates in its space first") {
  const ptxrt::KernelProblem problem = ptxrt::apps::builtin_tune_problem("sgemm", h100(), {});
  REQUIRE(problem.first_configs());
  for (const Shape shape :
       {Shape{4096, 4096, 4096}, Shape{4260, 1969, 31}, Shape{28, 180, 6090}, Shape{64, 64, 65536},
        Shape{5722, 45, 314}, Shape{1350, 1840, 1779}, Shape{15503, 5277, 77}}) {
    CAPTURE(shape.m);
    CAPTURE(shape.n);
    CAPTURE(shape.k);
    const ptxrt::ProblemSizes sizes{{"m", shape.m}, {"n", shape.n}, {"k", shape.k}};
    const ptxrt::TuningSpace space = ptxrt::problem_space(problem, sizes, h100());
    const std::vector<ptxrt::TuningConfig> first =
        ptxrt::problem_first_configs(problem, sizes, space);
    REQUIRE_FALSE(first.empty());
    CHECK(first.size() <= 8);
    CHECK(first == problem.first_configs()(sizes));
    for (const ptxrt::TuningConfig& config : first) {
      CAPTURE(config.describe());
      CHECK(std::count(first.begin(), first.end(), config) == 1);
      CHECK(space.contains(config));
      CHECK(space.admits(config));
    }
    // The default leads: at these shapes it is a config of the space (elsewhere the space may
    // hold no BK of 8, no GROUP_M 8, no tile wider than a narrow product and no split where the
    // tiles fill the GPU). 128 threads at 3 blocks an SM, the picks at large flat products
    // (4260x1969x31, 15503x5277x77), are no small tile: a tune there starts from the default.
    const SgemmConfig pick = chosen(shape);
    std::vector<ptxrt::Define> tunables;
    for (const ptxrt::Define& define : pick.defines())
      if (std::any_of(space.parameters().begin(), space.parameters().end(),
                      [&](const ptxrt::TuningParameter& p) { return p.name == define.name; }))
        tunables.push_back(define);
    const ptxrt::TuningConfig pick_config(tunables);
    CAPTURE(pick.describe());
    CHECK(pick.group_m == 1);
    CHECK_FALSE(pick.skip_idle_warps);
    CHECK(space.contains(pick_config));
    CHECK(space.admits(pick_config));
    CHECK(first.front() == pick_config);
  }
}

TEST_CASE("the sgemm key is the one earlier tunes were recorded under") {
  // Spelled out as it was made before sgemm was a KernelProblem: a database's recorded tunes
  // must still be found.
  const ptxrt::Program sgemm = ptxrt::apps::builtin_program("sgemm");
  ptxrt::TuningSpace space = ptxrt::TuningSpace::from_manifest(sgemm.manifest());
  space.add_constraint(
      "sgemm_config_problem, and tiles and splits that suit the shape (sgemm_tuning.hpp)",
      [](const ptxrt::TuningConfig&) { return ptxrt::Verdict(); });
  const ptxrt::TuningKey key = ptxrt::sgemm_tuning_key(h100(), 1536, 1536, 12288);
  CHECK(key.kernel == "sgemm");
  CHECK(key.source_hash == ptxrt::source_hash(sgemm));
  CHECK(key.space == space.describe());
  CHECK(key.device == h100().name);
  CHECK(key.compute_capability == "9.0");
  CHECK(key.size == std::vector<std::int64_t>{1536, 1536, 12288});
}

TEST_CASE("the tuned choice is the database's winner for the size, else the heuristic's config") {
  ptxrt::testing::ScratchDirectory scratch;
  const ptxrt::TuningDatabase database(scratch.path() / "tuning.json");
  const Shape shape{2000, 3000, 1000};
  const ptxrt::TunedChoice untuned =
      ptxrt::sgemm_tuned_choice(h100(), shape.m, shape.n, shape.k, database);
  CHECK(untuned.level == ptxrt::ChoiceLevel::declared_default);
  CHECK(ptxrt::sgemm_config_with(SgemmConfig{}, untuned.config.defines()) == chosen(shape));

  SgemmConfig winner;
  winner.stages = 4;
  winner.split_k = 2;
  ptxrt::Measurement measurement;
  measurement.config = ptxrt::TuningConfig(winner.defines());
  measurement.status = ptxrt::MeasurementStatus::ok;
  measurement.median_ms = 0.3;
  database.record(ptxrt::sgemm_tuning_key(h100(), shape.m, shape.n, shape.k), measurement);
  const ptxrt::TunedChoice tuned =
      ptxrt::sgemm_tuned_choice(h100(), shape.m, shape.n, shape.k, database);
  CHECK(tuned.level == ptxrt::ChoiceLevel::exact_size);
  const ptxrt::SgemmOptions options{.choice = ptxrt::SgemmChoice::tuned, .database = &database};
  CHECK(ptxrt::sgemm_choose_config(h100(), shape.m, shape.n, shape.k, options) == winner);
  const ptxrt::TunedChoice nearest = ptxrt::sgemm_tuned_choice(h100(), 2100, 2900, 1000, database);
  CHECK(nearest.level == ptxrt::ChoiceLevel::nearest_size);
}

TEST_CASE("a given config is run as it is, and the default choice is the heuristic's") {
  SgemmConfig given;
  given.thread_n = 4;
  const ptxrt::SgemmOptions options{.choice = ptxrt::SgemmChoice::given, .config = given};
  CHECK(ptxrt::sgemm_choose_config(h100(), 4096, 4096, 4096, options) == given);
  CHECK(ptxrt::sgemm_choose_config(h100(), 1536, 1536, 12288) == chosen({1536, 1536, 12288}));
}
