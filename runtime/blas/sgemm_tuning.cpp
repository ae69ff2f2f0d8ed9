#include "ptxrt/blas/sgemm_tuning.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "blas/sgemm_family.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

namespace ptxrt {

namespace {

// Rounds (of sm_count × min_blocks blocks) below which the last one's quantization is worth a
// split or small tiles, and the most a split may make.
constexpr long long split_below_rounds = 4;
constexpr long long most_split_rounds = 16;
constexpr long long small_tiles_below_rounds = 2;
// Slices under this deep may take BK 8: BK 16 computes a slice rounded up to 16 with zeros, up to
// 15 rows of K more than it needs, where BK 8 computes at most 7 more (at K = 39, 48 against 40).
// Deeper, those rows weigh little, and BK 8 only halves how much of K is in flight: it measured
// slower there (docs/perf-notes.md).
constexpr int bk8_below_depth = 128;

// The side of the largest useful tile along a dimension of `size`.
int largest_side(int size) {
  return std::max(32, static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(size, 1)))));
}

// A launch bound that asks an SM for more threads than the default tiles' (256 at 2 blocks an
// SM) caps a thread's registers under theirs, trading its accumulators for occupancy, as only
// products too small to fill the GPU need; 128 threads at 3 blocks an SM are the menu's picks at
// large flat products, and stay in every space.
bool is_small_tile(const SgemmConfig& config) {
  const SgemmConfig defaults;
  return config.block_m() < 64 || config.block_n() < 64 || config.thread_m < 8 ||
         config.thread_n < 8 || config.threads() < 128 ||
         config.threads() * config.min_blocks > defaults.threads() * defaults.min_blocks;
}

Verdict shape_fits(const SgemmConfig& config, const DeviceProperties& device, int m, int n, int k) {
  if (config.block_m() > largest_side(m) || config.block_n() > largest_side(n))
    return Verdict::refused("a " + std::to_string(config.block_m()) + "x" +
                            std::to_string(config.block_n()) +
                            " tile is larger than the product needs");
  const long long sms = std::max(device.sm_count, 1);
  if (is_small_tile(config) &&
      sgemm_tiles(SgemmConfig{}, m, n) >= small_tiles_below_rounds * 2 * sms)
    return Verdict::refused(
        "small tiles are for products that the default 128x128 tiles cannot fill");
  const int depth = sgemm_slice_depth(config, k);
  if (config.block_k < 16 && depth >= bk8_below_depth)
    return Verdict::refused("BK " + std::to_string(config.block_k) + " is for slices under " +
                            std::to_string(bk8_below_depth) + " of K");
  if (config.split_k == 1) return {};
  const long long slots = sms * config.min_blocks;
  const long long tiles = sgemm_tiles(config, m, n);
  if (depth < sgemm_min_slice_depth)
    return Verdict::refused("split " + std::to_string(config.split_k) + " leaves slices under " +
                            std::to_string(sgemm_min_slice_depth) + " of K");
  if (tiles >= split_below_rounds * slots)
    return Verdict::refused("the tiles alone fill enough rounds");
  if (tiles * config.split_k > most_split_rounds * slots)
    return Verdict::refused("split " + std::to_string(config.split_k) + " makes over " +
                            std::to_string(most_split_rounds) + " rounds");
  return {};
}

// The database keys of recorded tunes hold this text: it must not change.
constexpr std::string_view shape_constraint =
    "sgemm_config_problem, and tiles and splits that suit the shape (sgemm_tuning.hpp)";

int size_of(const ProblemSizes& sizes, const char* name) {
  return static_cast<int>(sizes.at(name));
}

// The heuristic's pick at the last shape asked: a space's constraint asks for it at every config
// the shape rules refuse. Shared by the problem's copies, which may run on several threads.
class UntunedPick {
 public:
  explicit UntunedPick(DeviceProperties device) : device_(std::move(device)) {}

  std::optional<SgemmConfig> at(int m, int n, int k) {
    const std::lock_guard lock(mutex_);
    if (shape_ != std::array{m, n, k}) {
      pick_ = sgemm_heuristic_pick(device_, m, n, k);
      shape_ = {m, n, k};
    }
    return pick_;
  }

 private:
  const DeviceProperties device_;
  std::mutex mutex_;
  std::optional<std::array<int, 3>> shape_;
  std::optional<SgemmConfig> pick_;
};

// The shape's rules, except for what runs untuned there: a tune times it, so that its winner is
// never one the untuned pick beats.
Verdict tuning_fits(const TuningConfig& tuning, const DeviceProperties& device, UntunedPick& pick,
                    int m, int n, int k) {
  const SgemmConfig config = sgemm_config_with(SgemmConfig{}, tuning.defines());
  if (Verdict fits = sgemm_config_fits(config, device); !fits) return fits;
  Verdict fits = shape_fits(config, device, m, n, k);
  if (!fits && pick.at(m, n, k) == config) return {};
  return fits;
}

ProblemSizes sizes_of(int m, int n, int k) { return {{"m", m}, {"n", n}, {"k", k}}; }

// How many of the heuristic's estimates a tune times first: enough to start from the menu's best
// at the shape, its split included, and to learn around it.
constexpr std::size_t first_configs_count = 8;

// The heuristic's estimates at m×n×k as configs of the tunables, fastest first: its pick first,
// whether or not `space` holds it (what runs untuned), then the next ones it holds, at most
// first_configs_count of those. An estimate at other values of the fixed defines than theirs
// (none of the menu's) has no such config.
std::vector<TuningConfig> heuristic_first(const DeviceProperties& device, const TuningSpace& space,
                                          int m, int n, int k) {
  const std::vector<Define> fixed = SgemmConfig{}.defines();
  const auto tunable = [&](const Define& define) {
    return std::any_of(space.parameters().begin(), space.parameters().end(),
                       [&](const TuningParameter& p) { return p.name == define.name; });
  };
  std::vector<TuningConfig> first;
  std::size_t held = 0;
  const std::vector<SgemmEstimate> estimates = sgemm_estimates(device, m, n, k);
  for (std::size_t index = 0; index < estimates.size() && held < first_configs_count; ++index) {
    std::vector<Define> defines;
    bool at_fixed_values = true;
    for (const Define& define :
         sgemm_pick_vector_a(device, estimates[index].config, m, n, k).defines()) {
      if (tunable(define))
        defines.push_back(define);
      else
        at_fixed_values =
            at_fixed_values && std::find(fixed.begin(), fixed.end(), define) != fixed.end();
    }
    TuningConfig config(std::move(defines));
    const bool in_space = space.contains(config) && space.admits(config);
    if (at_fixed_values && (index == 0 || in_space) &&
        std::find(first.begin(), first.end(), config) == first.end()) {
      first.push_back(std::move(config));
      held += in_space ? 1 : 0;
    }
  }
  return first;
}

}  // namespace

TuningSpace sgemm_tuning_space(const DeviceProperties& device, int m, int n, int k) {
  return sgemm_problem(device).space_at(sizes_of(m, n, k));
}

KernelProblem sgemm_problem(const DeviceProperties& device) {
  // The tile sides as sgemm.cu derives them from the tunables.
  constexpr std::string_view block_m = "WARPS_M * LANES_M * TM";
  constexpr std::string_view block_n = "WARPS_N * (32 / LANES_M) * TN";
  KernelProblem problem(sgemm_program(), std::string(sgemm_tuned_entry));
  problem.name("sgemm")
      .size("m", 1024)
      .size("n", 1024)
      .size("k", 1024)
      .tune_from_manifest()
      .constraint(std::string(shape_constraint),
                  [device, pick = std::make_shared<UntunedPick>(device)](
                      const TuningConfig& config, const ProblemSizes& sizes) {
                    return tuning_fits(config, device, *pick, size_of(sizes, "m"),
                                       size_of(sizes, "n"), size_of(sizes, "k"));
                  })
      .block("32 * WARPS_M * WARPS_N")
      .grid("ceil_div(n, " + std::string(block_n) + ")",
            "ceil_div(m, " + std::string(block_m) + ")", "SPLIT_K")
      // SgemmConfig::shared_bytes: the FFMAs' ring, or the tensor cores' (A by rows, B padded).
      .shared_memory("STAGES * ((1 - TF32X3) * BK * (" + std::string(block_m) + " + 4 + " +
                     std::string(block_n) + ") + TF32X3 * (" + std::string(block_m) +
                     " * (BK + 4) + BK * (" + std::string(block_n) + " + 8))) * 4")
      .buffer("a", ElementType::float32, "m * k", DataInit::uniform(-1.0, 1.0))
      .buffer("b", ElementType::float32, "k * n", DataInit::uniform(-1.0, 1.0))
      .buffer("c", ElementType::float32, "m * n", DataInit::zeros(), ArgumentRole::output)
      .flops("2 * m * n * k")
      .launch_with([](const ProblemDevice& data) -> ConfigRunner {
        // Shared by the runner's copies; a session uses it from one thread.
        auto workspace = std::make_shared<SgemmWorkspace>(data.context());
        return [data, workspace](const TuningConfig& config) {
          const SgemmOptions options{.choice = SgemmChoice::given,
                                     .config = sgemm_config_with(SgemmConfig{}, config.defines()),
                                     .workspace = workspace.get(),
                                     .jit = &data.jit()};
          sgemm(data.context(), static_cast<int>(data.size("m")), static_cast<int>(data.size("n")),
                static_cast<int>(data.size("k")), data.buffer("a").address(),
                data.buffer("b").address(), data.buffer("c").address(), options);
        };
      })
      .key_by_source()
      .try_first([device](const ProblemSizes& sizes) {
        const int m = size_of(sizes, "m"), n = size_of(sizes, "n"), k = size_of(sizes, "k");
        return heuristic_first(device, sgemm_tuning_space(device, m, n, k), m, n, k);
      });
  problem.validate();
  return problem;
}

TuningKey sgemm_tuning_key(const DeviceProperties& device, int m, int n, int k) {
  return problem_key(sgemm_problem(device), sizes_of(m, n, k), device);
}

TunedChoice sgemm_tuned_choice(const DeviceProperties& device, int m, int n, int k,
                               const TuningDatabase& database) {
  const SgemmConfig heuristic = sgemm_heuristic_config(device, m, n, k);
  TunedChoice choice = choose(database.records(), sgemm_tuning_key(device, m, n, k),
                              TuningConfig(heuristic.defines()));
  if (log::enabled(log::Level::info))
    log::write(log::Level::info,
               "tuned sgemm " + format_size({m, n, k}) + ": " + choice.describe());
  return choice;
}

}  // namespace ptxrt
