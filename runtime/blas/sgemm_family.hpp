// What the SGEMM family's files share inside the library: its program, how a config compiles, and
// the shallowest slice of K a split may leave (below it the fill of each block and the reduction
// dominate).
#pragma once

#include <optional>
#include <string_view>

#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt {

// ptx_src/sgemm.cu, embedded in ptxrt::blas, as one Program (one identity).
const Program& sgemm_program();

// The entry `ptxrt tune sgemm` times (sgemm_problem's).
inline constexpr std::string_view sgemm_tuned_entry = "sgemm_aligned";

// How the library compiles `config`: under the key a tune compiles it by (the config's constants
// and the tuned entry as a name expression), so that a tune's worker, which runs each config
// through the library, loads the image the tune compiled instead of compiling it a second time.
CompileOptions sgemm_compile_options(const SgemmConfig& config);

inline constexpr int sgemm_min_slice_depth = 128;

// sgemm_heuristic_config's pick, or nothing where no menu config suits `device`.
std::optional<SgemmConfig> sgemm_heuristic_pick(const DeviceProperties& device, int m, int n,
                                                int k);

}  // namespace ptxrt
