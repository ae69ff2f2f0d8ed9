// `ptxrt bench sgemm --config`, without a GPU: a config of the caller's own read from
// NAME=VALUE,... of sgemm.cu's constants, refused with the part at fault named, and its rows
// reported as "given" beside the default and the listed ones.

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "apps/matmul/sgemm_bench.hpp"
#include "device_profiles.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/error.hpp"

using ptxrt::SgemmConfig;
using ptxrt::apps::parse_sgemm_bench_config;

TEST_CASE("a given sgemm config sets the constants it names and leaves the rest at sgemm.cu's") {
  const SgemmConfig defaults;
  const SgemmConfig small = parse_sgemm_bench_config("WARPS_M=1,WARPS_N=2,LANES_M=8,TM=4,TN=4");
  CHECK(small.block_m() == 32);
  CHECK(small.block_n() == 32);
  CHECK(small.threads() == 64);
  CHECK(small.block_k == defaults.block_k);
  CHECK(small.stages == defaults.stages);
  CHECK(small.min_blocks == defaults.min_blocks);
  CHECK(small.split_k == 1);
  CHECK_FALSE(small.tf32x3);

  const SgemmConfig split = parse_sgemm_bench_config("SPLIT_K=24,TF32X3=1,VECTOR_A=1,BK=32");
  CHECK(split.split_k == 24);
  CHECK(split.tf32x3);
  CHECK(split.vector_a);
  CHECK(split.block_k == 32);
  CHECK(split.block_m() == defaults.block_m());
}

TEST_CASE("a given sgemm config that sgemm.cu cannot build is refused, naming the part at fault") {
  struct Refusal {
    const char* text;
    const char* names;
  };
  for (const Refusal& refusal : {Refusal{"", "expected NAME=VALUE"},
                                 Refusal{"WARPS_M=3", "WARPS_M=3 is not valid for sgemm.cu"},
                                 Refusal{"TM=x", "TM=x is not valid for sgemm.cu"},
                                 Refusal{"FOO=1", "FOO: sgemm.cu declares no such constant"},
                                 Refusal{"WARPS_M=1,WARPS_M=2", "WARPS_M is defined twice"},
                                 Refusal{"WARPS_M=1,", "is not a C identifier"},
                                 Refusal{"1TM=4", "'1TM' is not a C identifier"}}) {
    CAPTURE(refusal.text);
    try {
      parse_sgemm_bench_config(refusal.text);
      FAIL("accepted");
    } catch (const ptxrt::Error& error) {
      CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
      CHECK(std::string(error.what()).find(refusal.names) != std::string::npos);
    }
  }
}

TEST_CASE("a given config's rows say so, and the summary's best counts them") {
  ptxrt::apps::SgemmBenchShape shape;
  shape.size = {300, 45, 314};
  shape.cublas_rates = {10.0};
  ptxrt::apps::SgemmBenchRow default_row;
  default_row.roles = {ptxrt::apps::SgemmBenchRole::default_config};
  default_row.round_rates = {5.0};
  ptxrt::apps::SgemmBenchRow given_row;
  given_row.config = parse_sgemm_bench_config("WARPS_M=1,WARPS_N=2,LANES_M=8,TM=4,TN=4");
  given_row.roles = {ptxrt::apps::SgemmBenchRole::given};
  given_row.round_rates = {8.0};
  shape.rows = {default_row, given_row};

  const nlohmann::json report = ptxrt::apps::sgemm_bench_json(ptxrt::testing::h100(), {shape});
  REQUIRE(report["shapes"].size() == 1);
  CHECK(report["shapes"][0]["rows"][1]["roles"] == nlohmann::json::array({"given"}));
  CHECK(report["shapes"][0]["rows"][1]["config"]["WARPS_M"] == 1);

  std::ostringstream summary;
  ptxrt::apps::print_sgemm_bench_summary(summary, {shape});
  CAPTURE(summary.str());
  CHECK(summary.str().find("5.00 (0.500x)") != std::string::npos);
  CHECK(summary.str().find("8.00 (0.800x)") != std::string::npos);
  CHECK(summary.str().find("best listed 32x32x16") != std::string::npos);
}
