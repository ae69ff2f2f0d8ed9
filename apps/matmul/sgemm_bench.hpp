// The SGEMM bench of `ptxrt bench sgemm` and tests/bench/sgemm_bench.cpp: at each shape, cuBLAS
// SGEMM (default math: fp32, no TF32) and SGEMM configs measured in the same process, in
// rounds, each round's order of configs reversed from the last so that drift (clocks,
// temperature) favours none. The configs: the family's default at the shape (the heuristic's
// choice), the shape's candidates (sgemm_candidates; or every listed config), on request the
// heuristic's whole menu at every split (sgemm_menu_configs) and configs of the caller's own,
// and the tuning database's winner for exactly this shape when it has one.
//
// Every output is checked once before it is timed: against cuBLAS's C (max-abs-normalized error
// <= 1e-4) when cuBLAS's own C passes at 64 fp64 samples, else at those samples. Per config: the
// median TFLOP/s over the rounds' medians, their range, the widest IQR/median of a round, and
// the ratio to cuBLAS of the same rounds. A sample is enough launches for about 2 ms at 40
// TFLOP/s; a config whose sample would pass 8 ms (a few % of cuBLAS) takes fewer, so that slow
// configs do not take up the bench's time. Needs a GPU; one thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/matmul/sgemm.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt::apps {

struct SgemmBenchSize {
  int m = 0, n = 0, k = 0;
  std::string name() const;  // "4096x4096x4096"
  double flop() const { return 2.0 * m * n * static_cast<double>(k); }
};

// "MxNxK" with sizes from 1 to 2^31-1, or nothing.
std::optional<SgemmBenchSize> parse_sgemm_bench_size(std::string_view text);

// A config as NAME=VALUE,... of sgemm.cu's constants, the others at their defaults
// ("WARPS_M=1,WARPS_N=2,LANES_M=8,TM=4,TN=4"). Throws Error (invalid_argument) naming the part at
// fault: nothing given, a name sgemm.cu does not declare, one given twice, a value it does not
// declare.
SgemmConfig parse_sgemm_bench_config(std::string_view text);

// The twelve shapes of docs/perf-notes.md "SGEMM on every shape": small squares (512³, 1024³),
// squares (2048³, 4096³, 8192³), an odd size (4097³), deep K (1536×1536×12288, 512×512×16384),
// skinny (8192×64×8192, 128×8192×4096), flat (8192×8192×128, 4096×4096×256).
const std::vector<SgemmBenchSize>& sgemm_bench_sizes();

struct SgemmBenchOptions {
  int rounds = 2;
  int repeat = 10;              // timed samples per config and round, after a warm-up
  int launches_per_sample = 0;  // 0: enough for about 2 ms at 40 TFLOP/s, fewer for slow configs
  bool every_listed = false;    // every config of sgemm_configs, not just the candidates
  // Also every config of the heuristic's menu at every split with slices at least this deep
  // (sgemm_menu_configs), as "listed" rows; 0 for none.
  int menu_min_slice_depth = 0;
  std::vector<SgemmConfig> given;  // timed at every shape, as "given" rows
  std::uint64_t seed = 1;
  const TuningDatabase* database = nullptr;        // its exact winners join as "tuned" rows
  SgemmPadding padding = SgemmPadding::automatic;  // every row's, where N % 4 != 0
};

// Why a config is timed at a shape; a config may be several of them.
enum class SgemmBenchRole {
  default_config,  // the family's default there (the heuristic's choice)
  listed,          // a candidate of sgemm_candidates (or any listed or menu config)
  given,           // a config of the caller's own (SgemmBenchOptions::given)
  tuned,           // the tuning database's winner for exactly this shape
};
const char* to_string(SgemmBenchRole role);  // "default", "listed", "given", "tuned"

struct SgemmBenchRow {
  SgemmConfig config;
  std::vector<SgemmBenchRole> roles;
  std::optional<double> error;      // of the checked output
  std::string failure;              // why it could not run or failed the check; empty when fine
  int launches_per_sample = 0;      // the shape's, or fewer for a slow config (see the .cpp)
  std::vector<double> round_rates;  // TFLOP/s, one median per round
  double widest_spread = 0.0;       // the widest IQR/median of a round
  double rate() const;              // the median of round_rates (0 without any)
  bool ran() const { return failure.empty() && !round_rates.empty(); }
  bool has(SgemmBenchRole role) const;
  std::string describe_roles() const;  // "default, tuned"
};

struct SgemmBenchShape {
  SgemmBenchSize size;
  SgemmShape shape = SgemmShape::square;
  int launches_per_sample = 1;
  std::string reference;             // what outputs were checked against, and cuBLAS's own error
  bool reference_ok = true;          // cuBLAS's C passed at the samples (or there is no cuBLAS)
  std::vector<double> cublas_rates;  // empty without cuBLAS
  double cublas_spread = 0.0;
  std::vector<SgemmBenchRow> rows;  // the default first

  std::optional<double> cublas_rate() const;
  // The fastest row that ran with one of `roles` (any row when none are given).
  std::optional<std::size_t> best(std::vector<SgemmBenchRole> roles = {}) const;
  bool passed() const;
};

// Compiles every config first (in parallel), then runs each shape; writes each shape's table to
// `out` as it finishes. Error from the driver or the Jit end it (a config's own failure does not:
// it is its row's).
std::vector<SgemmBenchShape> run_sgemm_bench(const Context& context, Jit& jit,
                                             const std::vector<SgemmBenchSize>& sizes,
                                             const SgemmBenchOptions& options, std::ostream& out);

// One line per shape: cuBLAS, the default, the best of the default, the listed and the given,
// the tuned, each with its ratio to cuBLAS; then the configs.
void print_sgemm_bench_summary(std::ostream& out, const std::vector<SgemmBenchShape>& shapes);

// {device, compute_capability, shapes: [{m, n, k, class, cublas_tflops, reference, rows:
// [{roles, config: {DEFINE: value}, describe, tflops, ratio, error, launches_per_sample,
// failure}]}]}: the record of a run that docs/perf-notes.md's tables come from.
nlohmann::json sgemm_bench_json(const DeviceProperties& device,
                                const std::vector<SgemmBenchShape>& shapes);

}  // namespace ptxrt::apps
