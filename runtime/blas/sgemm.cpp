#include "ptxrt/blas/sgemm.hpp"

#include <string>
#include <utility>

#include "blas/sgemm_family.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace ptxrt {

namespace {

Kernel sgemm_kernel(Jit& jit, const Context& context, const SgemmConfig& config,
                    const std::string& entry) {
  return jit.kernel(sgemm_program(), sgemm_compile_options(config), context, entry);
}

void require_sizes(int m, int n, int k) {
  if (m < 0 || n < 0 || k < 0)
    throw Error(ErrorKind::invalid_argument,
                "sgemm: sizes must not be negative, got m=" + std::to_string(m) +
                    " n=" + std::to_string(n) + " k=" + std::to_string(k));
}

void require_elements(const char* matrix, std::size_t size, long long rows, long long columns) {
  const auto needed = static_cast<std::size_t>(rows * columns);
  if (size >= needed) return;
  throw Error(ErrorKind::invalid_argument,
              std::string("sgemm: ") + matrix + " has " + std::to_string(size) +
                  " elements, but a " + std::to_string(rows) + "x" + std::to_string(columns) +
                  " matrix needs " + std::to_string(needed));
}

void require_address(const char* matrix, CUdeviceptr address, long long rows, long long columns) {
  if (address == 0 && rows * columns > 0)
    throw Error(ErrorKind::invalid_argument,
                std::string("sgemm: ") + matrix + " is a null address for a " +
                    std::to_string(rows) + "x" + std::to_string(columns) + " matrix");
}

// `floats` of scratch (0: none): options.workspace's, or memory made for this call (returned in
// `temporary`, which the caller keeps until the product's kernels have run).
CUdeviceptr reserve_scratch(const Context& context, std::size_t floats, const SgemmOptions& options,
                            std::optional<DeviceMemory>& temporary) {
  if (floats == 0) return 0;
  if (options.workspace) return options.workspace->reserve(floats);
  temporary.emplace(context, floats * sizeof(float));
  return temporary->address();
}

}  // namespace

SgemmWorkspace::SgemmWorkspace(const Context& context) : context_(context) {}

CUdeviceptr SgemmWorkspace::reserve(std::size_t floats) {
  if (floats > capacity_floats()) {
    if (memory_) {
      // Products already enqueued may still write the old partials.
      context_.synchronize();
      memory_.reset();
    }
    memory_.emplace(context_, floats * sizeof(float));
  }
  return memory_ ? memory_->address() : 0;
}

std::size_t SgemmWorkspace::capacity_floats() const noexcept {
  return memory_ ? memory_->bytes() / sizeof(float) : 0;
}

SgemmConfig sgemm_choose_config(const DeviceProperties& device, int m, int n, int k,
                                const SgemmOptions& options) {
  switch (options.choice) {
    case SgemmChoice::given:
      return options.config;
    case SgemmChoice::heuristic:
      return sgemm_heuristic_config(device, m, n, k);
    case SgemmChoice::tuned: {
      const TunedChoice choice =
          options.database
              ? sgemm_tuned_choice(device, m, n, k, *options.database)
              : sgemm_tuned_choice(device, m, n, k, TuningDatabase(TuningDatabase::default_path()));
      return sgemm_config_with(SgemmConfig{}, choice.config.defines());
    }
  }
  throw Error(ErrorKind::invalid_argument, "sgemm: unknown SgemmChoice");
}

SgemmConfig sgemm(const Context& context, int m, int n, int k, const DeviceBuffer<float>& a,
                  const DeviceBuffer<float>& b, DeviceBuffer<float>& c,
                  const SgemmOptions& options) {
  require_sizes(m, n, k);
  require_elements("A", a.size(), m, k);
  require_elements("B", b.size(), k, n);
  require_elements("C", c.size(), m, n);
  return sgemm(context, m, n, k, a.address(), b.address(), c.address(), options);
}

SgemmConfig sgemm(const Context& context, int m, int n, int k, CUdeviceptr a, CUdeviceptr b,
                  CUdeviceptr c, const SgemmOptions& options) {
  require_sizes(m, n, k);
  require_address("A", a, m, k);
  require_address("B", b, k, n);
  require_address("C", c, m, n);
  const DeviceProperties& device = context.device().properties();
  SgemmConfig config = sgemm_choose_config(device, m, n, k, options);
  if (options.choice != SgemmChoice::given && a % 16 != 0) config.vector_a = false;
  if (const Verdict fits = sgemm_config_fits(config, device); !fits)
    throw Error(ErrorKind::invalid_argument, "sgemm: " + fits.reason());
  if (m == 0 || n == 0) return config;

  Jit& jit = options.jit ? *options.jit : Jit::shared();
  const SgemmPath path = sgemm_path(device, config, m, n, k, a, b, c, options.padding);
  const int ldb = sgemm_b_pitch(path, n);
  // The scratch holds the padded B first (16-byte aligned, as every allocation), then the split's
  // partial products (aligned too: ldb % 4 == 0).
  const std::size_t padded_floats =
      path == SgemmPath::padded_b ? static_cast<std::size_t>(k) * static_cast<std::size_t>(ldb) : 0;
  std::optional<DeviceMemory> temporary;
  const CUdeviceptr scratch = reserve_scratch(
      context, padded_floats + sgemm_workspace_floats(config, m, n), options, temporary);
  CUdeviceptr b_read = b;
  if (path == SgemmPath::padded_b) {
    b_read = scratch;
    LaunchConfig pad = sgemm_pad_launch(device, k, ldb);
    pad.stream = options.stream;
    sgemm_kernel(jit, context, config, "sgemm_pad_rows").launch(pad, b, b_read, k, n, ldb);
  }
  const CUdeviceptr destination = config.split_k > 1 ? scratch + padded_floats * sizeof(float) : c;
  SgemmLaunch product = sgemm_launch(config, m, n, path);
  product.launch.stream = options.stream;
  // Not by programmatic launch after the pad: blocks placed while the copy's blocks still hold
  // the SMs doubled up on some of them, and a product of one round of blocks ran at 0.6x
  // (docs/perf-notes.md, "Padding B where it pays").
  const Kernel kernel = sgemm_kernel(jit, context, config, product.entry);
  if (path == SgemmPath::any_alignment || path == SgemmPath::vectors)
    kernel.launch(product.launch, a, b_read, destination, m, n, k);
  else
    kernel.launch(product.launch, a, b_read, destination, m, n, k, ldb);
  if (config.split_k > 1) {
    LaunchConfig reduce = sgemm_reduce_launch(config, device, m, n);
    reduce.stream = options.stream;
    sgemm_kernel(jit, context, config, "sgemm_split_reduce").launch(reduce, destination, c, m, n);
  }
  if (temporary) context.synchronize();
  return config;
}

void sgemm_prepare(const Context& context, const SgemmConfig& config, Jit& jit) {
  jit.module(sgemm_program(), sgemm_compile_options(config), context);
}

}  // namespace ptxrt
