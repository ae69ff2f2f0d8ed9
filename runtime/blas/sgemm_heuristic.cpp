#include "ptxrt/sgemm_heuristic.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "blas/sgemm_family.hpp"
#include "ptxrt/error.hpp"

namespace ptxrt {

namespace {

// The menu's rates are an H100's, whose 132 SMs share them.
constexpr double h100_sm_count = 132.0;
// Per round: a fixed part (launching the blocks, the epilogue's stores issuing) and the ring's
// first STAGES - 1 tiles of every resident block arriving before the first FFMA, at an SM's
// share of L2 bandwidth (fitted to 8192x8192x128, where K is 8 tiles: 0.5 us + 1.0 to 3.7 us).
constexpr double round_overhead_ms = 0.5e-3;
constexpr double fill_bytes_per_ms = 50e6;
// Resident warps per SM at which these tiles run at their full rate (2 per scheduler).
constexpr double warps_for_full_rate = 8.0;
// A split's reduction: its second launch, and the partial products' traffic at this share of
// the device's theoretical bandwidth (a DRAM estimate: part of it stays in L2).
constexpr double reduce_launch_ms = 2.0e-3;
constexpr double memory_efficiency = 0.75;
constexpr double fallback_bandwidth_gb_per_s = 2000.0;
// A split must be predicted this much faster than the best product without one.
constexpr double split_penalty = 1.03;
// SPLIT_K's declared values (ptx_src/sgemm.cu).
constexpr std::array<int, 8> split_values{1, 2, 3, 4, 6, 8, 12, 16};

double fill_ms(const SgemmConfig& config, int depth) {
  const int filled = std::min((config.stages - 1) * config.block_k, depth);
  return config.min_blocks * static_cast<double>(filled) * (config.block_m() + config.block_n()) *
         sizeof(float) / fill_bytes_per_ms;
}

SgemmConfig menu_config(int warps_m, int warps_n, int lanes_m, int thread_m, int thread_n,
                        int block_k, int stages, int min_blocks, bool vector_a) {
  SgemmConfig config{warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks};
  config.vector_a = vector_a;
  return config;
}

// The share of its full rate an SM reaches with `warps` resident.
double occupancy_share(double warps) {
  return std::min(1.0, std::sqrt(warps / warps_for_full_rate));
}

double bandwidth_bytes_per_ms(const DeviceProperties& device) {
  const double theoretical = device.theoretical_bandwidth_gb_per_s();
  return (theoretical > 0.0 ? theoretical * memory_efficiency : fallback_bandwidth_gb_per_s) * 1e6;
}

}  // namespace

const std::vector<SgemmMenuEntry>& sgemm_heuristic_menu() {
  // Rates the model reproduces the measurements from (docs/perf-notes.md, round 2 and run D);
  // "estimate" where no shape has measured the config yet. Without a measurement through the
  // any-alignment entry, its rate is 0.9 of the aligned one (the default's measured share).
  static const std::vector<SgemmMenuEntry> menu{
      {menu_config(4, 2, 4, 8, 16, 32, 4, 1, true), 49.3, 44.4,
       "the 4096^3 tune's winner: 47.62 TFLOP/s at 4096^3, 48.11 at 8192^3"},
      {menu_config(2, 4, 4, 8, 8, 16, 4, 1, true), 48.3, 43.5,
       "47.31 TFLOP/s at 8192^3, 46.59 at 4096^3 with vector A, 43.08 at 8192x8192x128"},
      {menu_config(4, 2, 4, 8, 8, 16, 3, 2, false), 46.6, 42.2,
       "sgemm.cu's defaults: 45.48 TFLOP/s at 8192^3, 45.04 at 4096^3, 36.4 at 4097^3"},
      {menu_config(2, 2, 8, 8, 8, 16, 3, 2, true), 46.0, 45.0,
       "the 4097^3 tune's winner: 40.04 TFLOP/s at 4097^3; aligned: estimate"},
      {menu_config(2, 2, 4, 8, 8, 16, 3, 3, true), 44.0, 39.6,
       "estimate: 8x8 per thread as the default, 4 warps a block"},
      {menu_config(2, 2, 4, 8, 4, 16, 3, 4, true), 40.0, 36.0,
       "estimate: the default's rate scaled by the FFMA share of 8x4 per thread (75 % to 87 %)"},
      {menu_config(2, 2, 4, 4, 4, 16, 3, 4, true), 33.0, 29.7,
       "estimate: 4x4 per thread, 2 LDS.128 per 16 FFMA"},
  };
  return menu;
}

SgemmEstimate sgemm_estimate(const SgemmConfig& config, double tflops,
                             const DeviceProperties& device, int m, int n, int k) {
  SgemmEstimate estimate;
  estimate.config = config;
  const long long sms = std::max(device.sm_count, 1);
  estimate.tiles = sgemm_tiles(config, m, n);
  estimate.blocks = estimate.tiles * config.split_k;
  estimate.slots = sms * config.min_blocks;
  estimate.rounds = static_cast<double>(estimate.blocks) / static_cast<double>(estimate.slots);

  // flop per ms of one SM at the config's full rate.
  const double sm_rate = tflops * 1e9 / h100_sm_count;
  const int depth = sgemm_slice_depth(config, k);
  const double block_flop = 2.0 * config.block_m() * config.block_n() * static_cast<double>(depth);
  const double overhead = round_overhead_ms + fill_ms(config, depth);
  const long long full_rounds = estimate.blocks / estimate.slots;
  const long long rest = estimate.blocks % estimate.slots;
  double milliseconds =
      static_cast<double>(full_rounds) * (config.min_blocks * block_flop / sm_rate + overhead);
  if (rest > 0) {
    const double busiest = std::ceil(static_cast<double>(rest) / static_cast<double>(sms));
    const double warps = config.threads() / 32.0;
    const double share =
        occupancy_share(busiest * warps) / occupancy_share(config.min_blocks * warps);
    milliseconds += busiest * block_flop / (sm_rate * share) + overhead;
  }
  if (config.split_k > 1) {
    // The product writes split_k partials where it would write one; the reduction reads them all
    // and writes C.
    const double bytes = (2.0 * config.split_k) * static_cast<double>(m) * n * sizeof(float);
    milliseconds += bytes / bandwidth_bytes_per_ms(device) + reduce_launch_ms;
  }
  estimate.milliseconds = milliseconds;
  return estimate;
}

std::vector<SgemmEstimate> sgemm_estimates(const DeviceProperties& device, int m, int n, int k) {
  m = std::max(m, 1), n = std::max(n, 1), k = std::max(k, 1);
  std::vector<SgemmEstimate> estimates;
  for (const SgemmMenuEntry& entry : sgemm_heuristic_menu()) {
    if (sgemm_config_problem(entry.config, device)) continue;
    for (const int split : split_values) {
      SgemmConfig config = entry.config;
      config.split_k = split;
      if (split > 1 && sgemm_slice_depth(config, k) < sgemm_min_slice_depth) break;
      const double tflops = n % 4 == 0 ? entry.tflops : entry.any_alignment_tflops;
      estimates.push_back(sgemm_estimate(config, tflops, device, m, n, k));
    }
  }
  const auto cost = [](const SgemmEstimate& estimate) {
    return estimate.milliseconds * (estimate.config.split_k > 1 ? split_penalty : 1.0);
  };
  std::stable_sort(
      estimates.begin(), estimates.end(),
      [&](const SgemmEstimate& a, const SgemmEstimate& b) { return cost(a) < cost(b); });
  return estimates;
}

SgemmConfig sgemm_heuristic_config(const DeviceProperties& device, int m, int n, int k) {
  m = std::max(m, 1), n = std::max(n, 1), k = std::max(k, 1);
  const std::vector<SgemmEstimate> estimates = sgemm_estimates(device, m, n, k);
  if (estimates.empty())
    throw Error(ErrorKind::invalid_argument, "sgemm: no config suits " + device.name + " (sm_" +
                                                 std::to_string(device.cc_major) +
                                                 std::to_string(device.cc_minor) + ")");
  SgemmConfig config = estimates.front().config;
  config.vector_a = config.vector_a && k % 4 == 0 && n % 4 == 0;
  return config;
}

}  // namespace ptxrt
