// Kernel Tuner users' checks and data on the GPU (ptxrt/tune/problem_session.hpp): a per-block
// reduction, whose output layout changes with the config, verified by aggregates and by a check
// kernel, with a planted wrong config and one that leaves a partial unwritten; its input made by
// a generator kernel, and data derived from it; an input a config overwrites, restored for the
// next. A few seconds on an H100.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpu_fixture.hpp"
#include "ptxrt/tune/problem_session.hpp"
#include "tune_cli.hpp"

using ptxrt::DataInit;
using ptxrt::ElementType;
using ptxrt::KernelProblem;
using ptxrt::MeasurementStatus;
using ptxrt::TuningConfig;

namespace {

// BLOCK=128 adds 1 to every partial (a wrong config); BLOCK=32 leaves its last partial unwritten.
constexpr const char* block_sums_source = R"(
extern "C" __global__ void make_points(float* points, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) points[i] = 0.25f + (float)((i * 37) % 101) / 101.0f;
}

__device__ void sum_block(const float* x, float* partial, int n) {
  __shared__ float sums[BLOCK];
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  sums[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (BLOCK == 32 && blockIdx.x == gridDim.x - 1) return;
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0] + (BLOCK == 128 ? 1.0f : 0.0f);
}

extern "C" __global__ void block_sums(const float* x, float* partial, int n) {
  sum_block(x, partial, n);
}

// The same beside a buffer it does not read: data derived from the input, for the callback to see.
extern "C" __global__ void block_sums_beside(const float* x, float* partial, int n,
                                             const double* /* jittered */) {
  sum_block(x, partial, n);
}

// The sum of this config's partials against the sum of the reference's (BLOCK=256).
extern "C" __global__ void sums_agree(const float* partial, const float* expected, int n,
                                      int* verdict, float* error) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double got = 0.0, want = 0.0;
  for (int b = 0; b < (n + BLOCK - 1) / BLOCK; ++b) got += partial[b];
  for (int b = 0; b < (n + 255) / 256; ++b) want += expected[b];
  *error = (float)fabs(got - want);
  if (!(fabs(got - want) <= 1e-5 * fabs(want))) *verdict = 1;
}
)";

constexpr int n = 1000003;  // no block size divides it

KernelProblem block_sums_problem(std::string entry = "block_sums") {
  KernelProblem problem(ptxrt::Program::from_string(block_sums_source, "block_sums.cu"),
                        std::move(entry));
  problem.size("n", n)
      .tune("BLOCK", {32, 64, 128, 256}, 64)
      .block("BLOCK")
      .grid("ceil_div(n, BLOCK)")
      .buffer(
          "x", ElementType::float32, "n",
          DataInit::generated({.entry = "make_points",
                               .geometry = ptxrt::LaunchGeometry::of({"128"}, {"ceil_div(n, 128)"}),
                               .arguments = {"x", "n"}}))
      .buffer("partial", ElementType::float32, "ceil_div(n, 32)", DataInit::zeros(),
              ptxrt::ArgumentRole::output)
      .scalar("n", ElementType::int32, "n");
  return problem;
}

TuningConfig block_of(std::int64_t block) {
  return TuningConfig(std::vector<ptxrt::Define>{{"BLOCK", std::to_string(block)}});
}

ptxrt::Measurement measure(ptxrt::ProblemSession& session, std::int64_t block) {
  const ptxrt::TimingPolicy once{.warmup_runs = 0, .min_runs = 1, .max_runs = 1};
  return session.measure(block_of(block), once, std::nullopt);
}

}  // namespace

TEST_CASE("a per-block reduction passes its aggregates; a wrong or half-written config is wrong") {
  KernelProblem problem = block_sums_problem();
  problem.verify_with_config(block_of(256))
      .aggregate({.output = "partial",
                  .aggregate = ptxrt::Aggregate::sum,
                  .length = ptxrt::Expression::parse("ceil_div(n, BLOCK)"),
                  .rtol = 1e-5})
      .aggregate({.output = "partial",
                  .aggregate = ptxrt::Aggregate::count,
                  .length = ptxrt::Expression::parse("ceil_div(n, BLOCK)"),
                  .expected = ptxrt::Expression::parse("ceil_div(n, BLOCK)")});
  problem.validate();
  ptxrt::ProblemSession session(problem, {}, ptxrt::testing::test_jit(),
                                ptxrt::testing::test_context());
  CHECK(measure(session, 64).status == MeasurementStatus::ok);
  CHECK(measure(session, 256).status == MeasurementStatus::ok);
  const ptxrt::Measurement wrong = measure(session, 128);
  CHECK(wrong.status == MeasurementStatus::wrong);
  CHECK_MESSAGE(wrong.detail.starts_with("sum of partial[0:7813] = "), wrong.detail);
  CHECK_MESSAGE(wrong.detail.find("(config BLOCK=256)") != std::string::npos, wrong.detail);
  const ptxrt::Measurement unwritten = measure(session, 32);
  CHECK(unwritten.status == MeasurementStatus::wrong);
  CHECK_MESSAGE(unwritten.detail.starts_with("sum of partial[0:31251] = nan"), unwritten.detail);

  const ptxrt::ProblemSession::Run run = session.run(block_of(128), 1, true);
  CHECK(run.verified);
  CHECK_FALSE(run.passed);
}

TEST_CASE("a check kernel's verdict makes a config wrong, with its error in the detail") {
  KernelProblem problem = block_sums_problem();
  problem.verify_with_config(block_of(256))
      .check_with_kernel({.entry = "sums_agree",
                          .geometry = ptxrt::LaunchGeometry::of({"32"}, {"1"}),
                          .arguments = {"partial", "reference.partial", "n"}});
  problem.validate();
  ptxrt::ProblemSession session(problem, {}, ptxrt::testing::test_jit(),
                                ptxrt::testing::test_context());
  CHECK(measure(session, 64).status == MeasurementStatus::ok);
  const ptxrt::Measurement wrong = measure(session, 128);
  CHECK(wrong.status == MeasurementStatus::wrong);
  // Every one of the 7813 partials is 1 too large (give or take the order of float sums).
  CHECK_MESSAGE(wrong.detail.starts_with("the check kernel sums_agree gave verdict 1, error 781"),
                wrong.detail);
  CHECK(measure(session, 32).status == MeasurementStatus::wrong);
}

TEST_CASE("a check kernel that does not exist fails the session before any config runs") {
  KernelProblem problem = block_sums_problem();
  problem.check_with_kernel(
      {.entry = "no_such_check", .geometry = ptxrt::LaunchGeometry::of({"1"}, {"1"})});
  problem.validate();
  try {
    ptxrt::ProblemSession session(problem, {}, ptxrt::testing::test_jit(),
                                  ptxrt::testing::test_context());
    FAIL("the session started");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::not_found);
    CHECK_MESSAGE(
        std::string(error.what()).find("no kernel named 'no_such_check'") != std::string::npos,
        error.what());
  }
}

TEST_CASE("a generator kernel makes its buffer on the GPU, before the data derived from it") {
  KernelProblem problem = block_sums_problem("block_sums_beside");
  problem.buffer("jittered", ElementType::float64, "n", DataInit::absolute_of("x", 0.5, 7));
  std::vector<float> seen_x;
  std::vector<double> seen_jittered;
  // The reference callback sees the data as made, and gives the partial sums of BLOCK=64, the
  // fallback config, which the sum aggregate reads.
  problem.verify_with([&](ptxrt::ProblemData& data) {
    const std::span<const float> x = std::as_const(data).span<float>("x");
    seen_x.assign(x.begin(), x.end());
    const std::span<const double> jittered = std::as_const(data).span<double>("jittered");
    seen_jittered.assign(jittered.begin(), jittered.end());
    std::span<float> partial = data.span<float>("partial");
    for (int i = 0; i < n; ++i) partial[i / 64] += x[i];
  });
  problem.aggregate({.output = "partial",
                     .aggregate = ptxrt::Aggregate::sum,
                     .length = ptxrt::Expression::parse("ceil_div(n, BLOCK)"),
                     .rtol = 1e-5});
  problem.validate();
  ptxrt::ProblemSession session(problem, {}, ptxrt::testing::test_jit(),
                                ptxrt::testing::test_context());
  REQUIRE(seen_x.size() == static_cast<std::size_t>(n));
  for (int i : {0, 1, 100, 101, n - 1})
    CHECK(seen_x[i] == 0.25f + static_cast<float>((i * 37) % 101) / 101.0f);
  for (int i = 0; i < n; i += 997) {
    CHECK(seen_jittered[i] >= 0.0);
    CHECK(std::abs(seen_jittered[i] - seen_x[i]) <= 0.5);
  }
  CHECK(measure(session, 256).status == MeasurementStatus::ok);
  CHECK(measure(session, 128).status == MeasurementStatus::wrong);
}

TEST_CASE("a generator kernel that does not exist fails the session naming the buffer") {
  KernelProblem problem = block_sums_problem();
  problem.buffer("y", ElementType::float32, "n",
                 DataInit::generated({.entry = "make_nothing",
                                      .geometry = ptxrt::LaunchGeometry::of({"1"}, {"1"})}));
  problem.validate();
  try {
    ptxrt::ProblemSession session(problem, {}, ptxrt::testing::test_jit(),
                                  ptxrt::testing::test_context());
    FAIL("the session started");
  } catch (const ptxrt::Error& error) {
    CHECK_MESSAGE(
        std::string(error.what())
            .starts_with("block_sums: the kernel make_nothing making y failed: no kernel named"),
        error.what());
  }
}

TEST_CASE("the block_sums problem file tunes every config verified by its aggregates") {
  const std::filesystem::path kernels =
      std::filesystem::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";
  const ptxrt::testing::Scratch scratch;
  const nlohmann::json reports = ptxrt::testing::cli_json(
      scratch, {"tune", (kernels / "block_sums.cu").string(), "--problem",
                (kernels / "block_sums.json").string(), "--strategy", "exhaustive", "--db",
                (scratch.path() / "tuning.json").string(), "--json"});
  REQUIRE(reports.size() == 1);
  const nlohmann::json& counts = reports[0]["counts"];
  CHECK(counts["wrong"].get<int>() == 0);
  CHECK(counts["timed"].get<int>() == 20);
  CHECK(counts["ok"].get<int>() + counts["cut"].get<int>() == 20);
}

TEST_CASE("a config that overwrites its input leaves the next config the input as made") {
  // CLOBBER=1 doubles x into y, then overwrites x: right once, and its timed runs double -1.
  KernelProblem problem(ptxrt::Program::from_string(R"(
extern "C" __global__ void doubled(float* x, float* y, int n) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  y[i] = 2.0f * x[i];
  if (CLOBBER) x[i] = -1.0f;
}
)",
                                                    "doubled.cu"),
                        "doubled");
  problem.size("n", n)
      .tune("BLOCK", {64, 256}, 64)
      .tune("CLOBBER", {0, 1}, 0)
      .block("BLOCK")
      .grid("ceil_div(n, BLOCK)")
      .buffer("x", ElementType::float32, "n", DataInit::uniform(1.0, 2.0, 7))
      .buffer("y", ElementType::float32, "n", DataInit::zeros(), ptxrt::ArgumentRole::output)
      .scalar("n", ElementType::int32, "n");
  problem.verify_with_config(
      TuningConfig(std::vector<ptxrt::Define>{{"BLOCK", "256"}, {"CLOBBER", "0"}}));
  problem.validate();
  ptxrt::ProblemSession session(problem, {}, ptxrt::testing::test_jit(),
                                ptxrt::testing::test_context());
  const ptxrt::TimingPolicy three{.warmup_runs = 1, .min_runs = 3, .max_runs = 3};
  for (const char* clobber : {"1", "0", "1", "0"}) {
    const TuningConfig config(std::vector<ptxrt::Define>{{"BLOCK", "64"}, {"CLOBBER", clobber}});
    const ptxrt::Measurement measurement = session.measure(config, three, std::nullopt);
    CHECK_MESSAGE(measurement.status == MeasurementStatus::ok, "CLOBBER=", clobber, ": ",
                  measurement.detail);
    CHECK(measurement.max_error == 0.0);
  }
}
