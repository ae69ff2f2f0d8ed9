#include "ptxrt/blas/sgemm_heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "blas/sgemm_family.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"

namespace ptxrt {

namespace {

// The menu's rates are an H100's (and an H200's, the same chip), whose 132 SMs share them.
constexpr double h100_sm_count = 132.0;
// The constants below and the menu's rates were fitted by scripts/fit_sgemm_heuristic.py, which
// mirrors this model (`--search 15000 --seed 2 --dram-gb-per-s 4800`), to H200 benches of every
// menu config at every split whose slices are 64 deep or more (`ptxrt bench sgemm --menu`) on 63
// shapes: the twelve of docs/perf-notes.md, forty drawn ones (`--random 20 --seed 11`, `12`),
// and narrow, deep and small ones where the tiles 32 wide might win, in
// docs/perf-data/sgemm-menu-{shapes,11,12,narrow,narrow-303-404,small}-h200.json.xz; and to the
// held-out bench of seed 505 (docs/perf-data/sgemm-heldout-505-h200.json.xz: the default, its
// runners-up and the listed configs at 40 shapes). The H200 is the H100's chip (132 SMs at the
// same clock) with faster memory, which the model reads from the device. The pick is the
// measured best on 48 of the 103 shapes and within 2 % of it on 67; fitted to five of the six
// menu benches (`--cross-validate`), its picks on the sixth reach 93-99 % of the best measured
// there. Since C at any alignment goes out by 16 bytes (store_tile_ragged in
// ptx_src/sgemm_ffma.cuh), the any-alignment rates are refitted alone, every other number held, to
// every menu config at 52 ragged shapes: the 42 of those benches, benched again, and 10 of short K
// (docs/perf-data/sgemm-menu-ragged-{small,large,short-k}-h200.*; `--refit any-alignment
// --search 3000 --seed 2` from the rates before). The picks reach 0.954 of the best measured
// there (0.935 with the rates before); fitted to two of the three benches, 0.940, 0.947 and 0.919
// on the third (0.938, 0.944, 0.929 before). Since a ragged B loads by 16-byte chunks, they are
// refitted again the same way (`--search 3000 --seed 2`), with the any-alignment entry's own
// registers, to the same shapes benched anew
// (docs/perf-data/sgemm-menu-ragged-realigned-{small-short-k,large}-h200.json.xz): the picks reach
// 0.969 of the best measured there (0.957 before, 0.961 with the registers alone), and 0.962 at the
// first 25 shapes of a fresh seed (0.954 before; docs/perf-notes.md, "Registers per path").
// Held-out shapes (another seed) judge the fit: docs/perf-notes.md, "SGEMM on shapes nobody
// fitted".
//
// Per round: a fixed part (launching the blocks, the epilogue's stores issuing) and the ring's
// first STAGES - 1 tiles of every resident block arriving before the first FFMA, at an SM's
// share of L2 bandwidth.
constexpr double round_overhead_ms = 0.3959e-3;
constexpr double fill_bytes_per_ms = 47.87e6;
// Resident warps times each thread's TM·TN results at which an SM runs these tiles at their full
// rate: each result is an independent FFMA chain, so a thread of 4×4 results hides a quarter of
// the latency one of 8×8 hides.
constexpr double results_for_full_rate = 585.5;
// A split's reduction: a fixed cost (its second launch, and the product's last blocks draining
// before it starts: small products pay it whole), and the partial products' traffic at this
// multiple of the device's theoretical DRAM bandwidth (above 1: the partials mostly stay in L2).
// The fixed cost was fitted at 6.9 µs before the reduction launched programmatically (1.4-5 µs
// cheaper); refitted alone to the held-out benches of this kernel (seeds 3939, 5353, 5858, 6868,
// 7878, 7979 and 8989: 279 shapes, `--constant reduce_launch_ms=V` over a grid), every value of
// 4.5 µs or less scores alike, 5 µs and up worse (docs/perf-notes.md, "A split's fixed cost,
// refitted").
constexpr double reduce_launch_ms = 4.0e-3;
constexpr double memory_efficiency = 2.135;
constexpr double fallback_bandwidth_gb_per_s = 2000.0;
// The rate at which an SM stores a block's tile of C in its epilogue by 16-byte stores from warps
// of 4 rows of lanes; the other resident blocks' main loops hide all but one block's store per
// round (what makes large tiles slow at short K). A warp's store touches a cache line per row of
// lanes, so 8 rows take twice as long. Rows of C at any alignment go out by 16 bytes too, but for
// their ends: fitted, a cost of their own scored no better than the vector one's.
constexpr double store_bytes_per_ms = 24.64e6;

double fill_ms(const SgemmConfig& config, int resident_blocks, int depth) {
  const int filled = std::min((config.stages - 1) * config.block_k, depth);
  return resident_blocks * static_cast<double>(filled) * (config.block_m() + config.block_n()) *
         sizeof(float) / fill_bytes_per_ms;
}

// Blocks of `config` an SM of `device` holds at `registers` per thread (as ptxas allocated them
// on sm_90, capped at what the launch bound leaves on this device): the occupancy model's count,
// often above min_blocks, which only bounds the registers. Where the model does not know the
// architecture, the launch bound's promise.
int resident_blocks(const SgemmConfig& config, int registers, const DeviceProperties& device) {
  const auto known = known_architectures();
  if (std::none_of(known.begin(), known.end(), [&](const ArchLimits& arch) {
        return arch.cc_major == device.cc_major && arch.cc_minor == device.cc_minor;
      }))
    return config.min_blocks;
  KernelResources kernel;
  kernel.name = "sgemm";
  kernel.registers = std::min(registers, config.register_cap(device));
  const Occupancy occupancy = compute_occupancy(arch_limits(device.cc_major, device.cc_minor),
                                                kernel, config.threads(), config.shared_bytes());
  return std::max(occupancy.active_blocks_per_sm, 1);
}

SgemmConfig menu_config(int warps_m, int warps_n, int lanes_m, int thread_m, int thread_n,
                        int block_k, int stages, int min_blocks, bool vector_a,
                        bool tf32x3 = false) {
  SgemmConfig config{warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks};
  config.vector_a = vector_a;
  config.tf32x3 = tf32x3;
  return config;
}

// The share of its full rate an SM reaches with `warps` of `config` resident.
double occupancy_share(const SgemmConfig& config, double warps) {
  const double results = warps * config.thread_m * config.thread_n;
  return std::min(1.0, std::sqrt(results / results_for_full_rate));
}

double bandwidth_bytes_per_ms(const DeviceProperties& device) {
  const double theoretical = device.theoretical_bandwidth_gb_per_s();
  return (theoretical > 0.0 ? theoretical * memory_efficiency : fallback_bandwidth_gb_per_s) * 1e6;
}

}  // namespace

const std::vector<SgemmMenuEntry>& sgemm_heuristic_menu() {
  // Full rates (TFLOP/s, aligned and any alignment) fitted with the constants above; registers
  // per thread (ptxas through NVRTC, sm_90, CUDA 13.0): for the aligned entries, the larger of
  // sgemm's and sgemm_aligned's when the aligned rates were fitted; for the any-alignment entry,
  // sgemm's own, unsplit, since it loads a ragged B by 16-byte chunks (up to 26 more: 64x256
  // holds one block per SM there, two aligned). The notes say what each config measured alone.
  static const std::vector<SgemmMenuEntry> menu{
      {menu_config(4, 2, 4, 8, 16, 32, 4, 1, true), 50.9, 47.29, 250, 244,
       "the 4096^3 tune's winner: 48.40 TFLOP/s at 8192^3, 47.58 at 4096^3, 45.29 at 2048^3"},
      {menu_config(2, 4, 4, 8, 8, 16, 4, 1, true), 50.55, 39.59, 128, 151,
       "46.96 TFLOP/s at 8192^3, 46.28 at 2048^3, 43.85 at 4096x4096x256, 45.13 at 1536x1536x12288 "
       "split 8"},
      {menu_config(4, 2, 4, 8, 8, 16, 3, 2, false), 45.95, 38.77, 128, 128,
       "sgemm.cu's defaults: 44.47 TFLOP/s at 8192^3, 45.37 at 4096^3, 36.36 at 4097^3"},
      {menu_config(2, 2, 8, 8, 8, 16, 3, 2, true), 46.03, 40.85, 153, 152,
       "the 4097^3 tune's winner: 39.81 TFLOP/s at 4097^3, 36.99 at 8192x64x8192 split 12"},
      {menu_config(2, 2, 4, 8, 8, 16, 3, 3, true), 49.31, 40.81, 147, 155,
       "42.24 TFLOP/s at 8192x8192x128, 35.30 at 1024^3"},
      {menu_config(2, 2, 4, 8, 4, 16, 3, 4, true), 43.19, 36.66, 96, 106,
       "31.81 TFLOP/s at 1024^3, 34.91 at 1536x1536x12288; 1.00x cuBLAS at 9156x3037x30"},
      {menu_config(2, 2, 4, 4, 4, 16, 3, 4, true), 33.53, 28.48, 72, 80, "20.16 TFLOP/s at 512^3"},
      {menu_config(4, 1, 4, 8, 8, 16, 3, 3, true), 42.11, 39.08, 151, 152,
       "0.72x cuBLAS at 3665x4198x17, where 128x256 tiles reach 0.36x"},
      {menu_config(2, 2, 4, 8, 4, 8, 4, 4, true), 39.59, 30.49, 95, 93,
       "0.97x cuBLAS at 3151x13153x55"},
      {menu_config(4, 1, 8, 8, 8, 16, 3, 3, true), 30.39, 29.97, 168, 164,
       "256x32, for N of 32 or less: 14.71 TFLOP/s at 3369x23x10429 split 8, where tiles of 64 "
       "columns or more reach 8.63"},
      {menu_config(4, 1, 4, 8, 4, 16, 3, 4, true), 33.5, 32.58, 120, 120,
       "128x32: 14.88 TFLOP/s at 3369x23x10429 split 32, 9.61 at 13093x17x1153 split 6"},
      {menu_config(2, 1, 8, 8, 8, 16, 3, 4, true), 33.71, 31.14, 186, 190,
       "128x32 in 64 threads: 34.10 TFLOP/s at 8192x64x8192 split 4"},
      {menu_config(2, 2, 8, 4, 4, 16, 3, 4, true), 30.36, 26.31, 79, 72,
       "64x32: 16.66 TFLOP/s at 6771x24x2261 split 6; 1.14x cuBLAS at 50x3407x220"},
      {menu_config(1, 4, 4, 8, 4, 16, 3, 4, true), 37.59, 33.98, 95, 118,
       "32x128, for M of 32 or less: 17.88 TFLOP/s at 23x4574x4586 split 32, 15.67 for 32x64"},
      // Short K over millions of outputs, where a slice is a few steps of the ring and the tiles'
      // prologue and epilogue weigh most: both rates of each fitted alone, the rest as above
      // (`--entry`), to sgemm-menu-short-k*-h200.json.xz.
      {menu_config(4, 1, 4, 8, 8, 8, 4, 3, true), 40.0, 36.6, 149, 127,
       "128x64 at BK 8: 1.03x cuBLAS at 7668x12087x37 (the menu's best before 0.98x), 1.01x at "
       "9720x4715x35 (0.96x)"},
      {menu_config(2, 2, 4, 8, 8, 16, 3, 4, true), 45.95, 40.75, 127, 124,
       "64x128 at 4 blocks an SM: 1.02x cuBLAS at 9664x1529x30 (the menu's best before 0.89x), "
       "0.96x at 1189x5861x31 (0.91x)"},
      // 3xTF32 on the tensor cores, fitted (aligned rates alone) to the menu benches that timed
      // them: `--refit tf32x3` in scripts/fit_sgemm_heuristic.py. The any-alignment rate is the
      // aligned one times the share of it the any-alignment entry ran at 4096x4095x2048 and
      // 2000x3001x1500 against their twins of N % 4 == 0 (0.89-0.97).
      {menu_config(2, 4, 8, 8, 16, 16, 3, 1, true, true), 55.53, 53.3, 255, 255,
       "128x256 on the tensor cores: 1.01x cuBLAS at 4096^3, 1.02x at 8192^3"},
      {menu_config(2, 4, 8, 8, 8, 16, 3, 1, true, true), 53.52, 47.8, 254, 243,
       "128x128 on the tensor cores: 1.14x cuBLAS at 3000x2048x1500, 0.94x at 2150x4581x3223 "
       "(B padded)"},
      {menu_config(2, 2, 8, 8, 8, 16, 3, 2, true, true), 51.1, 49.5, 255, 252,
       "128x64 on the tensor cores: 1.25x cuBLAS at 5000x800x2000, 1.22x at 3000x2048x1500"},
      {menu_config(2, 2, 4, 8, 8, 16, 3, 2, true, true), 50.2, 47.1, 255, 255,
       "64x128 on the tensor cores: 1.12x cuBLAS at 1200x6000x3000, 1.02x at 5420x1712x4458"},
      // 32x128 for products of few rows: at M = 86 a tile of 128 rows computes a third zeros.
      // Both its rates fitted alone, the rest as above (`--refit tf32x3 --entry 32x128`), to
      // sgemm-menu-tf32-32-rows*-h200.json.xz.
      {menu_config(1, 4, 4, 8, 4, 16, 3, 3, true, true), 40.5, 39.5, 165, 165,
       "32x128 on the tensor cores: 1.11x cuBLAS at 81x7669x7446 split 8 (the menu's best before "
       "0.99x), 1.00x at 86x3278x6483 (0.88x), 1.07x at 23x4574x4586 (0.84x)"},
      // 128x32, its transpose, for products of few columns: at N of 17 to 35 a tile 64 columns
      // wide computes half zeros or more, and the FFMAs' 128x32 takes 12-25 % longer than this one
      // where K is deep (0.84-1.04x cuBLAS against 1.04-1.17x at four such shapes, N of 20 to
      // 31). Its aligned rate from a grid of 34 to 44 over the menu bench of 29 narrow shapes
      // (sgemm-menu-tf32-32-columns-h200.txt.xz), the rest of the menu as it is: the picks there
      // reach 0.915 of the best measured (0.869 without the tile; 0.919 at 40, which takes it at
      // more shapes that no bench timed it at). The any-alignment rate is a TFLOP/s below, as
      // 32x128's.
      {menu_config(4, 1, 4, 8, 4, 16, 3, 3, true, true), 38.0, 37.0, 168, 168,
       "128x32 on the tensor cores: 1.05x cuBLAS at 3825x25x4705 split 12 (the menu's best before "
       "0.84x), 1.04x at 6208x22x5063 (0.85x), 0.96x at 3408x75x3349 (0.86x)"},
  };
  return menu;
}

const std::vector<int>& sgemm_split_values() {
  static const std::vector<int> values = [] {
    std::vector<int> parsed;
    for (const std::string& value : sgemm_program().manifest().find_define("SPLIT_K")->values)
      parsed.push_back(std::stoi(value));
    std::sort(parsed.begin(), parsed.end());
    return parsed;
  }();
  return values;
}

SgemmEstimate sgemm_estimate(const SgemmConfig& config, double tflops, int registers,
                             const DeviceProperties& device, int m, int n, int k) {
  SgemmEstimate estimate;
  estimate.config = config;
  const long long sms = std::max(device.sm_count, 1);
  estimate.tiles = sgemm_tiles(config, m, n);
  estimate.blocks = estimate.tiles * config.split_k;
  estimate.resident_blocks = resident_blocks(config, registers, device);
  const int resident = estimate.resident_blocks;
  estimate.slots = sms * resident;
  estimate.rounds = static_cast<double>(estimate.blocks) / static_cast<double>(estimate.slots);

  // flop per ms of one SM at the config's full rate.
  const double sm_rate = tflops * 1e9 / h100_sm_count;
  const int depth = sgemm_slice_depth(config, k);
  // A block computes whole BK tiles of K, the last one padded with zeros (at K = 17, BK 32 does
  // the MMAs or FFMAs of 32), but for the FFMAs at BK 16 unsplit, which stop at K
  // (docs/perf-notes.md, "The FFMAs' last tile"; the rates fitted before it stand).
  const bool stops_at_k = !config.tf32x3 && config.block_k == 16 && config.split_k == 1;
  const int computed_depth =
      stops_at_k ? depth : (depth + config.block_k - 1) / config.block_k * config.block_k;
  const double block_flop =
      2.0 * config.block_m() * config.block_n() * static_cast<double>(computed_depth);
  const double store_ms = static_cast<double>(config.block_m()) * config.block_n() * sizeof(float) /
                          store_bytes_per_ms * (config.lanes_m / 4.0);
  const double overhead = round_overhead_ms + fill_ms(config, resident, depth) + store_ms;
  const long long full_rounds = estimate.blocks / estimate.slots;
  const long long rest = estimate.blocks % estimate.slots;
  double milliseconds =
      static_cast<double>(full_rounds) * (resident * block_flop / sm_rate + overhead);
  if (rest > 0) {
    const double busiest = std::ceil(static_cast<double>(rest) / static_cast<double>(sms));
    const double warps = config.threads() / 32.0;
    const double share =
        occupancy_share(config, busiest * warps) / occupancy_share(config, resident * warps);
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
    if (!sgemm_config_fits(entry.config, device)) continue;
    if (entry.config.tf32x3 && k < sgemm_tensor_cores_min_k) continue;
    // The pick drops vector A where it cannot run (below), so the rate is its path's without;
    // the path does not depend on the split.
    SgemmConfig plain = entry.config;
    plain.vector_a = false;
    const SgemmPath path = sgemm_path(device, plain, m, n, k, 0, 0, 0);
    const bool any_alignment = path == SgemmPath::any_alignment;
    const double tflops = any_alignment ? entry.any_alignment_tflops : entry.tflops;
    const int registers = any_alignment ? entry.any_alignment_registers : entry.registers;
    for (const int split : sgemm_split_values()) {
      SgemmConfig config = entry.config;
      config.split_k = split;
      if (split > 1 && sgemm_slice_depth(config, k) < sgemm_min_slice_depth) break;
      estimates.push_back(sgemm_estimate(config, tflops, registers, device, m, n, k));
      if (path == SgemmPath::padded_b) estimates.back().milliseconds += sgemm_pad_ms(device, n, k);
    }
  }
  const auto cost = [](const SgemmEstimate& estimate) {
    return estimate.milliseconds * (estimate.config.split_k > 1 ? sgemm_split_penalty : 1.0);
  };
  std::stable_sort(
      estimates.begin(), estimates.end(),
      [&](const SgemmEstimate& a, const SgemmEstimate& b) { return cost(a) < cost(b); });
  return estimates;
}

std::optional<SgemmConfig> sgemm_heuristic_pick(const DeviceProperties& device, int m, int n,
                                                int k) {
  m = std::max(m, 1), n = std::max(n, 1), k = std::max(k, 1);
  const std::vector<SgemmEstimate> estimates = sgemm_estimates(device, m, n, k);
  if (estimates.empty()) return std::nullopt;
  return sgemm_pick_vector_a(device, estimates.front().config, m, n, k);
}

SgemmConfig sgemm_heuristic_config(const DeviceProperties& device, int m, int n, int k) {
  const std::optional<SgemmConfig> pick = sgemm_heuristic_pick(device, m, n, k);
  if (!pick)
    throw Error(ErrorKind::invalid_argument, "sgemm: no config suits " + device.name + " (sm_" +
                                                 std::to_string(device.cc_major) +
                                                 std::to_string(device.cc_minor) + ")");
  return *pick;
}

SgemmConfig sgemm_pick_vector_a(const DeviceProperties& device, SgemmConfig config, int m, int n,
                                int k) {
  const bool pays = config.tf32x3 || sgemm_slice_depth(config, k) > sgemm_vector_a_min_depth;
  config.vector_a = config.vector_a && pays &&
                    sgemm_path(device, config, m, n, k, 0, 0, 0) != SgemmPath::any_alignment;
  return config;
}

}  // namespace ptxrt
