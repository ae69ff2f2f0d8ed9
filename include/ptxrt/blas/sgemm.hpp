// C = A·B in fp32 through the builtin SGEMM kernel family (ptx_src/sgemm.cu: by FFMA, or on the
// tensor cores at fp32 accuracy): the library call,
// with the config chosen per shape by the heuristic (sgemm_heuristic.hpp), taken from the tuning
// database (sgemm_tuning.hpp: the winner of `ptxrt tune sgemm` for this size, or the nearest),
// or given.
//
//   ptxrt::DeviceBuffer<float> a(context, host_a), b(context, host_b), c(context, m * n);
//   ptxrt::sgemm(context, m, n, k, a, b, c);                                     // heuristic
//   ptxrt::sgemm(context, m, n, k, a, b, c, {.choice = ptxrt::SgemmChoice::tuned});
//
// Matrices are row-major and dense: A is m×k, B k×n, C m×n; any sizes, any 4-byte alignment.
// Thread safety: sgemm() may be called from any number of threads (the Jit and kernels it uses
// are shared safely); a SgemmWorkspace serves one stream at a time.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/context.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/stream_ref.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

// Scratch memory for the partial products of a split K (sgemm_workspace_floats) and the padded
// copy of a B whose rows are not 16-byte aligned (sgemm_path): kept between calls so that such
// a product allocates nothing. Grows when a product needs more, waiting for
// the context's work first (the old allocation may still be in use). Move-only; one stream at a
// time, since products on two streams would write the same partials.
class PTXRT_API SgemmWorkspace {
 public:
  explicit SgemmWorkspace(const Context& context);

  // The address of at least `floats` floats of this workspace.
  CUdeviceptr reserve(std::size_t floats);
  std::size_t capacity_floats() const noexcept;

 private:
  Context context_;
  std::optional<DeviceMemory> memory_;
};

enum class SgemmChoice {
  heuristic,  // sgemm_heuristic_config for the shape and device
  tuned,      // the tuning database's pick (exact size, nearest, same cc), else the heuristic
  given,      // SgemmOptions::config as it is
};

struct PTXRT_API SgemmOptions {
  SgemmChoice choice = SgemmChoice::heuristic;
  SgemmConfig config;                        // with SgemmChoice::given
  const TuningDatabase* database = nullptr;  // tuned: null reads TuningDatabase::default_path()
  StreamRef stream;                          // none: the context's default stream
  SgemmWorkspace* workspace = nullptr;       // null: scratch is allocated for the call, waited on
  SgemmPadding padding = SgemmPadding::automatic;  // a B whose rows are not 16-byte aligned
  Jit* jit = nullptr;                        // null: Jit::shared()
};

// The config sgemm() runs for an m×n×k product on `device` with `options`, before it looks at
// the addresses (which may then turn vector A off: see sgemm()). Reads the database for tuned.
PTXRT_API SgemmConfig sgemm_choose_config(const DeviceProperties& device, int m, int n, int k,
                                          const SgemmOptions& options = {});

// C = A·B, asynchronously on options.stream, except that a product needing scratch (a split, or
// a padded B) without a workspace waits for its temporary scratch to be read. Returns the config
// that ran. A chosen (not given) config loads A by vectors only where A is 16-byte aligned; how
// B is loaded is sgemm_path's choice (a B of ragged rows under a tall C is first copied to padded
// rows, so that it loads by 16 bytes). Throws Error (invalid_argument) for a negative size, a
// buffer smaller than its matrix (naming it, its size and the size needed), or a config with a
// problem on the context's device; does nothing when m or n is 0; with k == 0 writes zeros.
PTXRT_API SgemmConfig sgemm(const Context& context, int m, int n, int k,
                            const DeviceBuffer<float>& a, const DeviceBuffer<float>& b,
                            DeviceBuffer<float>& c, const SgemmOptions& options = {});

// The same on device addresses (inside a larger allocation, at any 4-byte alignment), which
// cannot be checked against their matrices' sizes; a null address with a non-empty matrix is an
// Error (invalid_argument).
PTXRT_API SgemmConfig sgemm(const Context& context, int m, int n, int k, CUdeviceptr a,
                            CUdeviceptr b, CUdeviceptr c, const SgemmOptions& options = {});

// Compiles `config` and loads it into `context` through `jit`, as sgemm() would on first use, so
// that a later call does not pay for it (a benchmark compiles its configs in parallel this way).
PTXRT_API void sgemm_prepare(const Context& context, const SgemmConfig& config, Jit& jit);

}  // namespace ptxrt
