// The SGEMM family's sweep for the benchmarks and the GPU tests: the configs worth knowing on a
// device (every one checked by the GPU tests), the shape classes of docs/perf-notes.md, and
// which configs a benchmark times at a shape. The configs, the shape-aware default, the tuned
// choice and the call itself are the library's (include/ptxrt/sgemm*.hpp).
//
// Pure functions of their arguments (no GPU); thread-safe.
#pragma once

#include <vector>

#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/device.hpp"

namespace ptxrt::apps {

// The configs worth knowing on `device`, each without a problem, sgemm.cu's defaults first:
// every one is checked by the GPU tests, and each is a candidate for some shapes.
std::vector<SgemmConfig> sgemm_configs(const DeviceProperties& device);

// What decides the config at m×n×k, the first that holds: deep (K ≥ 8·max(M, N): few tiles,
// long K, a split), skinny (M or N ≤ 128: the other side's tiles alone), flat (K ≤ 256 or
// 16·K ≤ min(M, N): the prologue and the write of C weigh), small (M and N ≤ 1024: 128×128
// tiles fill less than one round), ragged (M or N not a multiple of 128: edge tiles, wave
// quantization, and for N % 4 != 0 the any-alignment entry), square (the rest).
enum class SgemmShape { square, ragged, flat, small, skinny, deep };
SgemmShape sgemm_shape_of(int m, int n, int k);
const char* to_string(SgemmShape shape);

// The configs a benchmark sweeps at m×n×k on `device`: the heuristic's choice first
// (sgemm_heuristic_config), then the model's next best (sgemm_estimates) and the configs of
// sgemm_configs listed for sgemm_shape_of(m, n, k), each once (docs/perf-notes.md says why).
std::vector<SgemmConfig> sgemm_candidates(const DeviceProperties& device, int m, int n, int k);

// Whatever the heuristic could pick at m×n×k on `device`, and more: every config of its menu
// (sgemm_heuristic_menu) that fits, at every split SPLIT_K declares whose slices are at least
// `min_slice_depth` deep (the heuristic rates none under 128), vector A where the pick would keep
// it (sgemm_pick_vector_a). A bench of these times every pick of a model refitted over that menu
// (scripts/fit_sgemm_heuristic.py), so that none goes unmeasured.
std::vector<SgemmConfig> sgemm_menu_configs(const DeviceProperties& device, int m, int n, int k,
                                            int min_slice_depth);

}  // namespace ptxrt::apps
