#include "ptxrt/blas/sgemm_tuning.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

#include "blas/sgemm_family.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"

namespace ptxrt {

namespace {

// Rounds (of sm_count × min_blocks blocks) below which the last one's quantization is worth a
// split or small tiles, and the most a split may make.
constexpr long long split_below_rounds = 4;
constexpr long long most_split_rounds = 16;
constexpr long long small_tiles_below_rounds = 2;

// The side of the largest useful tile along a dimension of `size`.
int largest_side(int size) {
  return std::max(32, static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(size, 1)))));
}

bool is_small_tile(const SgemmConfig& config) {
  return config.block_m() < 64 || config.block_n() < 64 || config.thread_m < 8 ||
         config.thread_n < 8 || config.threads() < 128 || config.min_blocks > 2;
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
  if (config.split_k == 1) return {};
  const long long slots = sms * config.min_blocks;
  const long long tiles = sgemm_tiles(config, m, n);
  if (sgemm_slice_depth(config, k) < sgemm_min_slice_depth)
    return Verdict::refused("split " + std::to_string(config.split_k) + " leaves slices under " +
                            std::to_string(sgemm_min_slice_depth) + " of K");
  if (tiles >= split_below_rounds * slots)
    return Verdict::refused("the tiles alone fill enough rounds");
  if (tiles * config.split_k > most_split_rounds * slots)
    return Verdict::refused("split " + std::to_string(config.split_k) + " makes over " +
                            std::to_string(most_split_rounds) + " rounds");
  return {};
}

}  // namespace

TuningSpace sgemm_tuning_space(const DeviceProperties& device, int m, int n, int k) {
  TuningSpace space = TuningSpace::from_manifest(sgemm_program().manifest());
  space.add_constraint(
      "sgemm_config_problem, and tiles and splits that suit the shape (sgemm_tuning.hpp)",
      [device, m, n, k](const TuningConfig& tuning) {
        const SgemmConfig config = sgemm_config_with(SgemmConfig{}, tuning.defines());
        if (const Verdict fits = sgemm_config_fits(config, device); !fits) return fits;
        return shape_fits(config, device, m, n, k);
      });
  return space;
}

TuningKey sgemm_tuning_key(const DeviceProperties& device, int m, int n, int k) {
  return {"sgemm",     source_hash(sgemm_program()), sgemm_tuning_space(device, m, n, k).describe(),
          device.name, device.compute_capability(),  nvrtc_version(),
          {m, n, k}};
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
