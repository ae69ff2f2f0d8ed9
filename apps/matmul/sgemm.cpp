#include "apps/matmul/sgemm.hpp"

#include <algorithm>
#include <cstddef>

#include "ptxrt/blas/sgemm_heuristic.hpp"

namespace ptxrt::apps {

namespace {

// The model's best configs (after its choice) that a benchmark times too.
constexpr std::size_t model_runners_up = 4;

// A config of sgemm_configs and the shapes sgemm_candidates offers it for.
struct ListedConfig {
  SgemmConfig config;
  std::vector<SgemmShape> shapes;
};

SgemmConfig with(SgemmConfig config, int group_m, bool vector_a, bool skip_idle_warps) {
  config.group_m = group_m;
  config.vector_a = vector_a;
  config.skip_idle_warps = skip_idle_warps;
  return config;
}

SgemmConfig split(SgemmConfig config, int split_k) {
  config.split_k = split_k;
  return config;
}

SgemmConfig on_tensor_cores(SgemmConfig config) {
  config.tf32x3 = true;
  return config;
}

// warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks; then group_m,
// vector_a, skip_idle_warps through with(), split_k through split(), tf32x3 through
// on_tensor_cores(). docs/perf-notes.md predicts each.
const std::vector<ListedConfig>& listed_configs() {
  using enum SgemmShape;
  constexpr SgemmConfig base{4, 2, 4, 8, 8, 16, 3, 2};          // 128×128×16, sgemm.cu's defaults
  constexpr SgemmConfig wide_m{4, 2, 4, 16, 8, 16, 3, 1};       // 256×128×16: 16×8 per thread
  constexpr SgemmConfig half_n{4, 1, 4, 8, 8, 16, 3, 3};        // 128×64×16, 128 threads
  constexpr SgemmConfig tall_thread{2, 2, 4, 16, 8, 16, 3, 2};  // 128×128×16, 128 threads
  constexpr SgemmConfig narrow{2, 4, 4, 8, 8, 16, 4, 1};        // 64×256×16, 1 block/SM
  constexpr SgemmConfig wide_n{4, 2, 4, 8, 16, 32, 4, 1};       // 128×256×32, 8×16 per thread
  constexpr SgemmConfig ragged_best{2, 2, 8, 8, 8, 16, 3, 2};   // 128×64×16, lanes 8×4
  constexpr SgemmConfig half_m{2, 2, 4, 8, 8, 16, 3, 3};        // 64×128×16, 128 threads
  constexpr SgemmConfig quarter{2, 2, 4, 8, 4, 16, 3, 4};       // 64×64×16, 8×4 per thread
  constexpr SgemmConfig eighth{2, 2, 4, 4, 4, 16, 3, 4};        // 32×64×16, 4×4 per thread
  constexpr SgemmConfig few_rows{1, 4, 4, 8, 4, 16, 3, 3};      // 32×128×16, 8×4 per thread
  constexpr SgemmConfig few_columns{4, 1, 4, 8, 4, 16, 3, 3};   // 128×32×16, 8×4 per thread
  static const std::vector<ListedConfig> listed = {
      {base, {square, ragged, flat}},
      // Measured before (perf-notes): BK 8, rings of 2 and 4, other tiles.
      {{4, 2, 4, 8, 8, 8, 3, 2}, {}},
      {{4, 2, 4, 8, 8, 8, 2, 2}, {}},
      {{4, 2, 4, 8, 8, 16, 4, 2}, {square}},
      {{4, 2, 4, 8, 16, 8, 3, 1}, {}},
      {{2, 4, 8, 8, 8, 8, 3, 2}, {}},
      {{4, 2, 4, 16, 8, 8, 3, 1}, {}},
      {{2, 2, 4, 16, 8, 8, 3, 2}, {flat}},
      {{4, 1, 4, 8, 8, 8, 3, 3}, {ragged}},
      {{2, 2, 4, 8, 4, 8, 4, 4}, {small}},
      // The default with each switch, and the best 4096³ config with both that matter there.
      {with(base, 1, true, false), {square, flat}},
      {with({4, 2, 4, 8, 8, 16, 4, 2}, 8, true, false), {square, flat}},
      {with(base, 1, false, true), {square, ragged}},
      // The winner of `ptxrt tune sgemm --size 4096` on the H100: 64×256×16, 4 stages, no
      // register cap (46.6 TFLOP/s, 0.917× cuBLAS in the same run).
      {narrow, {square, ragged, flat}},
      {with(narrow, 1, true, false), {square, flat}},
      // The winner of the 664-config tune with BK 32 and vector A (47.9 TFLOP/s, 0.937×).
      {with(wide_n, 1, true, false), {square, flat}},
      // BK 32: half the loop, barrier and address cost per FFMA, twice the shared memory.
      {with({4, 2, 4, 8, 8, 32, 3, 2}, 1, true, false), {square, flat}},
      {with({4, 2, 4, 8, 8, 32, 3, 2}, 1, false, true), {ragged}},
      // One block per SM: 256×128 and 128×256 with 16×8 or 8×16 per thread (8 warps), or 8×8
      // per thread in 16 warps.
      {with(wide_m, 1, true, false), {square}},
      {with({4, 2, 4, 16, 8, 32, 3, 1}, 1, true, false), {square}},
      {with({8, 2, 4, 8, 8, 16, 3, 1}, 1, true, false), {square, flat}},
      {with({4, 2, 4, 8, 16, 16, 3, 1}, 1, true, false), {square}},
      {with(wide_m, 1, false, true), {ragged}},
      // 128 threads with 16×8 each: 6 LDS.128 per 128 FFMA.
      {with(tall_thread, 1, true, false), {square, flat}},
      {with(tall_thread, 1, false, true), {ragged}},
      // The winner of `ptxrt tune sgemm --size 4097` on the H100 (40.3 TFLOP/s, 0.93× cuBLAS):
      // 128×64×16 from 2×2 warps of 8×4 lanes (tuned with VECTOR_A=1, which the any-alignment
      // entry that N % 4 != 0 runs does not use).
      {ragged_best, {ragged}},
      // 128×64 at 3 blocks per SM: finer waves for ragged sizes, more overlap for flat ones.
      {with({4, 1, 4, 8, 8, 8, 3, 3}, 1, false, true), {ragged}},
      {with(half_n, 1, false, true), {ragged}},
      {with(half_n, 1, true, false), {flat, skinny}},
      // Small tiles for products that 128×128 tiles cannot fill (the heuristic's menu).
      {with(half_m, 1, true, false), {small, skinny}},
      {with(quarter, 1, true, false), {small, skinny, deep}},
      {with(eighth, 1, true, false), {small}},
      {eighth, {small}},
      // Short K over millions of outputs (the heuristic's menu): 128×64 at BK 8 in a ring of 4,
      // and 64×128 at 4 blocks an SM.
      {with({4, 1, 4, 8, 8, 8, 4, 3}, 1, true, false), {flat}},
      {with({2, 2, 4, 8, 8, 16, 3, 4}, 1, true, false), {flat}},
      // Splits of K: as even as whole tiles allow, through both entries (the GPU tests run each
      // at N % 4 != 0 as well), with vector A and without.
      {split(base, 4), {small, deep, skinny}},
      {split(with(wide_n, 1, true, false), 3), {deep, skinny}},
      {split(with(narrow, 1, true, false), 8), {deep}},
      {split(narrow, 12), {deep}},
      {split(with(ragged_best, 1, true, false), 4), {skinny, deep}},
      {split(with(quarter, 1, true, false), 8), {small, deep}},
      {split(with(half_m, 1, false, true), 2), {small, skinny}},
      {split(base, 16), {deep}},
      // Tiles of 32 columns (or rows) for products whose N (or M) is 32 or less.
      {with({4, 1, 8, 8, 8, 16, 3, 3}, 1, true, false), {skinny, deep}},
      {with({4, 1, 4, 8, 4, 16, 3, 4}, 1, true, false), {skinny, deep}},
      {with({2, 1, 8, 8, 8, 16, 3, 4}, 1, true, false), {skinny}},
      {with({2, 2, 8, 4, 4, 16, 3, 4}, 1, true, false), {skinny, deep}},
      {with({1, 4, 4, 8, 4, 16, 3, 4}, 1, true, false), {skinny, deep}},
      // The tensor cores at fp32 accuracy (3xTF32): the heuristic's menu (128×256, 128×128,
      // 128×64, 64×128, 32×128 and 128×32), 128×256 with BK 32, splits, and 64×64.
      {on_tensor_cores(with({2, 4, 8, 8, 16, 16, 3, 1}, 1, true, false)), {square, ragged, flat}},
      {on_tensor_cores(with({2, 4, 8, 8, 16, 32, 3, 1}, 1, true, false)), {square}},
      {on_tensor_cores(with({2, 4, 8, 8, 8, 16, 3, 1}, 1, true, false)), {square, ragged}},
      {on_tensor_cores(with({2, 2, 8, 8, 8, 16, 3, 2}, 1, true, false)), {square, ragged, flat}},
      {on_tensor_cores(with({2, 2, 4, 8, 8, 16, 3, 2}, 1, true, false)), {ragged, flat, skinny}},
      {split(on_tensor_cores(with({2, 2, 4, 8, 8, 16, 3, 2}, 1, true, false)), 4), {small, deep}},
      {on_tensor_cores(with(quarter, 1, false, true)), {small}},
      {on_tensor_cores(with(few_rows, 1, true, false)), {skinny, flat, small}},
      {split(on_tensor_cores(with(few_rows, 1, true, false)), 8), {skinny, deep}},
      // 128×32 is timed where the model ranks it (the sweeps' runners-up, the bench's --menu).
      {on_tensor_cores(with(few_columns, 1, true, false)), {}},
      {split(on_tensor_cores(with(few_columns, 1, true, false)), 12), {}},
  };
  return listed;
}

bool is_deep(int m, int n, int k) { return static_cast<long long>(k) >= 8ll * std::max(m, n); }

}  // namespace

std::vector<SgemmConfig> sgemm_configs(const DeviceProperties& device) {
  std::vector<SgemmConfig> usable;
  for (const ListedConfig& listed : listed_configs())
    if (sgemm_config_fits(listed.config, device)) usable.push_back(listed.config);
  return usable;
}

SgemmShape sgemm_shape_of(int m, int n, int k) {
  if (is_deep(m, n, k)) return SgemmShape::deep;
  if (std::min(m, n) <= 128) return SgemmShape::skinny;
  if (k <= 256 || static_cast<long long>(k) * 16 <= std::min(m, n)) return SgemmShape::flat;
  if (std::max(m, n) <= 1024) return SgemmShape::small;
  if (m % 128 != 0 || n % 128 != 0) return SgemmShape::ragged;
  return SgemmShape::square;
}

const char* to_string(SgemmShape shape) {
  switch (shape) {
    case SgemmShape::square:
      return "square";
    case SgemmShape::ragged:
      return "ragged";
    case SgemmShape::flat:
      return "flat";
    case SgemmShape::small:
      return "small";
    case SgemmShape::skinny:
      return "skinny";
    case SgemmShape::deep:
      return "deep";
  }
  return "unknown";
}

std::vector<SgemmConfig> sgemm_candidates(const DeviceProperties& device, int m, int n, int k) {
  std::vector<SgemmConfig> candidates{sgemm_heuristic_config(device, m, n, k)};
  const auto add = [&](SgemmConfig config) {
    // The any-alignment entry never loads A by vectors: one compile of such a config is enough.
    config.vector_a = config.vector_a && n % 4 == 0;
    if (std::find(candidates.begin(), candidates.end(), config) == candidates.end())
      candidates.push_back(config);
  };
  for (const SgemmEstimate& estimate : sgemm_estimates(device, m, n, k)) {
    if (candidates.size() > model_runners_up) break;
    SgemmConfig config = estimate.config;
    config.vector_a = config.vector_a && k % 4 == 0;
    add(config);
  }
  const SgemmShape shape = sgemm_shape_of(m, n, k);
  for (const ListedConfig& listed : listed_configs())
    if (std::find(listed.shapes.begin(), listed.shapes.end(), shape) != listed.shapes.end() &&
        sgemm_config_fits(listed.config, device))
      add(listed.config);
  return candidates;
}

std::vector<SgemmConfig> sgemm_menu_configs(const DeviceProperties& device, int m, int n, int k,
                                            int min_slice_depth) {
  m = std::max(m, 1), n = std::max(n, 1), k = std::max(k, 1);
  std::vector<SgemmConfig> configs;
  for (const SgemmMenuEntry& entry : sgemm_heuristic_menu()) {
    if (!sgemm_config_fits(entry.config, device)) continue;
    for (const int split : sgemm_split_values()) {
      SgemmConfig config = entry.config;
      config.split_k = split;
      if (split > 1 && sgemm_slice_depth(config, k) < min_slice_depth) break;
      configs.push_back(sgemm_pick_vector_a(device, config, m, n, k));
    }
  }
  return configs;
}

}  // namespace ptxrt::apps
