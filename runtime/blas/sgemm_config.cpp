#include "ptxrt/blas/sgemm_config.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "blas/sgemm_family.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "support/embedded_files.hpp"

namespace ptxrt {

namespace detail {
// Generated from ptx_src/sgemm.cu by cmake/EmbedKernels.cmake.
std::span<const EmbeddedFile> embedded_sgemm_files();
}  // namespace detail

const Program& sgemm_program() {
  static const Program program = [] {
    const std::span<const detail::EmbeddedFile> files = detail::embedded_sgemm_files();
    const auto source =
        std::find_if(files.begin(), files.end(),
                     [](const detail::EmbeddedFile& file) { return file.path == "sgemm.cu"; });
    if (source == files.end())
      throw Error(ErrorKind::not_found, "ptxrt::blas was built without sgemm.cu");
    Program sources = Program::from_string(std::string(source->text()), "sgemm.cu");
    for (const detail::EmbeddedFile& file : files)
      if (file.path != "sgemm.cu")
        sources.add_header(std::string(file.path), std::string(file.text()));
    return sources;
  }();
  return program;
}

namespace {

// The per-block shared memory the system keeps in front of a kernel's own (1 KiB since sm_80).
constexpr std::size_t reserved_shared_memory_per_block = 1024;
// Registers a thread needs besides its accumulators and fragments: loader rows and columns,
// shared-memory offsets, loop counters, pointers. The default config uses about 22.
constexpr int bookkeeping_registers = 16;
// sgemm_split_reduce's and sgemm_pad_rows' block (their __launch_bounds__), and how many blocks
// per SM their grids use at most (the kernels' grid-stride loops do the rest).
constexpr int reduce_threads = 256;
constexpr int reduce_blocks_per_sm = 16;
// gridDim.y's limit on every architecture.
constexpr long long max_grid_y = 65535;

// sgemm_pad_ms's launch, measured on an H100 at products of 0.1-0.2 GFLOP, where the copy itself
// is a few hundred KB (the H200's 3223×437×78 padded took 5 µs more), and its copy's share of the
// theoretical DRAM bandwidth (B rarely fits in L2 where padding pays); the bandwidth where the
// device does not report one.
constexpr double pad_launch_ms = 6e-3;
constexpr double pad_copy_efficiency = 0.8;
constexpr double pad_fallback_bandwidth_gb_per_s = 2000.0;

// The int fields by define name; the three switches are bools and go separately.
std::array<std::pair<const char*, int SgemmConfig::*>, 10> int_fields() {
  return {{{"WARPS_M", &SgemmConfig::warps_m},
           {"WARPS_N", &SgemmConfig::warps_n},
           {"LANES_M", &SgemmConfig::lanes_m},
           {"TM", &SgemmConfig::thread_m},
           {"TN", &SgemmConfig::thread_n},
           {"BK", &SgemmConfig::block_k},
           {"STAGES", &SgemmConfig::stages},
           {"MIN_BLOCKS", &SgemmConfig::min_blocks},
           {"GROUP_M", &SgemmConfig::group_m},
           {"SPLIT_K", &SgemmConfig::split_k}}};
}

std::vector<std::pair<const char*, int>> named_values(const SgemmConfig& config) {
  std::vector<std::pair<const char*, int>> values;
  for (const auto& [name, field] : int_fields()) values.emplace_back(name, config.*field);
  values.emplace_back("VECTOR_A", config.vector_a ? 1 : 0);
  values.emplace_back("SKIP_IDLE_WARPS", config.skip_idle_warps ? 1 : 0);
  values.emplace_back("TF32X3", config.tf32x3 ? 1 : 0);
  return values;
}

Verdict declared_values(const SgemmConfig& config) {
  const Manifest& manifest = sgemm_program().manifest();
  for (const auto& [name, value] : named_values(config)) {
    const ManifestDefine* declared = manifest.find_define(name);
    const std::string text = std::to_string(value);
    if (declared == nullptr ||
        std::find(declared->values.begin(), declared->values.end(), text) == declared->values.end())
      return Verdict::refused(std::string(name) + "=" + text +
                              " is not among sgemm.cu's declared values");
  }
  return {};
}

int integer_value(const Define& define) {
  int value = 0;
  const char* end = define.value.data() + define.value.size();
  const auto [last, error] = std::from_chars(define.value.data(), end, value);
  if (error != std::errc() || last != end)
    throw Error(ErrorKind::invalid_argument,
                "sgemm: " + define.name + "=" + define.value + " is not an integer");
  return value;
}

long long ceil_div(long long value, long long divisor) { return (value + divisor - 1) / divisor; }

// A row of n floats padded to whole float4s: a padded B's pitch, and a split workspace's.
long long float4_pitch(int n) { return ceil_div(n, 4) * 4; }

}  // namespace

std::size_t SgemmConfig::shared_bytes() const {
  const auto stage_floats =
      tf32x3
          ? static_cast<std::size_t>(block_m()) * static_cast<std::size_t>(block_k + 4) +
                static_cast<std::size_t>(block_k) * static_cast<std::size_t>(block_n() + 8)
          : static_cast<std::size_t>(block_k) * static_cast<std::size_t>(block_m() + 4 + block_n());
  return static_cast<std::size_t>(stages) * stage_floats * sizeof(float);
}

int SgemmConfig::register_cap(const DeviceProperties& device) const {
  // Registers are granted per warp in multiples of 256, so per thread in multiples of 8.
  const int per_thread = device.registers_per_sm / (threads() * min_blocks);
  return std::min(255, per_thread / 8 * 8);
}

CompileOptions sgemm_compile_options(const SgemmConfig& config) {
  CompileOptions options;
  options.defines = config.defines();
  options.name_expressions.emplace_back(sgemm_tuned_entry);
  return options;
}

std::vector<Define> SgemmConfig::defines() const {
  std::vector<Define> defines;
  for (const auto& [name, value] : named_values(*this))
    defines.push_back({name, std::to_string(value)});
  return defines;
}

std::string SgemmConfig::describe() const {
  return std::to_string(block_m()) + "x" + std::to_string(block_n()) + "x" +
         std::to_string(block_k) + " " + std::to_string(thread_m) + "x" + std::to_string(thread_n) +
         "/thread " + std::to_string(warps_m) + "x" + std::to_string(warps_n) + " warps lanes " +
         std::to_string(lanes_m) + "x" + std::to_string(lanes_n()) + " " + std::to_string(stages) +
         " stages min " + std::to_string(min_blocks) + " blocks/SM" +
         (group_m > 1 ? " group " + std::to_string(group_m) : std::string()) +
         (vector_a ? " vector A" : "") + (skip_idle_warps ? " skip idle warps" : "") +
         (split_k > 1 ? " split " + std::to_string(split_k) : std::string()) +
         (tf32x3 ? " 3xTF32" : "");
}

SgemmConfig sgemm_config_with(SgemmConfig base, const std::vector<Define>& defines) {
  const auto fields = int_fields();
  for (const Define& define : defines) {
    const int value = integer_value(define);
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const auto& entry) { return define.name == entry.first; });
    if (field != fields.end())
      base.*(field->second) = value;
    else if (define.name == "VECTOR_A")
      base.vector_a = value != 0;
    else if (define.name == "SKIP_IDLE_WARPS")
      base.skip_idle_warps = value != 0;
    else if (define.name == "TF32X3")
      base.tf32x3 = value != 0;
    else
      throw Error(ErrorKind::invalid_argument,
                  "sgemm: " + define.name + " is not one of sgemm.cu's constants");
  }
  return base;
}

Verdict sgemm_config_fits(const SgemmConfig& config, const DeviceProperties& device) {
  if (Verdict declared = declared_values(config); !declared) return declared;
  const std::string who = config.describe() + ": ";
  if (config.tf32x3 && device.cc_major < 8)
    return Verdict::refused(who + "the tensor cores' TF32 needs compute capability 8.0 or newer, " +
                            device.name + " is " + std::to_string(device.cc_major) + "." +
                            std::to_string(device.cc_minor));
  if (config.threads() > device.max_threads_per_block)
    return Verdict::refused(who + std::to_string(config.threads()) +
                            " threads exceed the device's " +
                            std::to_string(device.max_threads_per_block) + " per block");
  const std::size_t shared = config.shared_bytes();
  if (shared > device.shared_memory_per_block_optin)
    return Verdict::refused(who + std::to_string(shared) +
                            " bytes of shared memory exceed the device's " +
                            std::to_string(device.shared_memory_per_block_optin) + " per block");
  if (config.threads() * config.min_blocks > device.max_threads_per_sm)
    return Verdict::refused(who + std::to_string(config.min_blocks) + " blocks of " +
                            std::to_string(config.threads()) + " threads exceed the SM's " +
                            std::to_string(device.max_threads_per_sm) + " threads");
  const std::size_t shared_memory_per_sm =
      static_cast<std::size_t>(config.min_blocks) * (shared + reserved_shared_memory_per_block);
  if (shared_memory_per_sm > device.shared_memory_per_sm)
    return Verdict::refused(who + std::to_string(config.min_blocks) + " blocks need " +
                            std::to_string(shared_memory_per_sm) +
                            " bytes of shared memory, over the SM's " +
                            std::to_string(device.shared_memory_per_sm));
  const int needed =
      config.thread_m * config.thread_n + config.thread_m + config.thread_n + bookkeeping_registers;
  if (needed > config.register_cap(device))
    return Verdict::refused(who + "needs about " + std::to_string(needed) +
                            " registers, over the cap of " +
                            std::to_string(config.register_cap(device)) + " that " +
                            std::to_string(config.min_blocks) + " blocks per SM leave");
  return {};
}

long long sgemm_tiles(const SgemmConfig& config, int m, int n) {
  return ceil_div(m, config.block_m()) * ceil_div(n, config.block_n());
}

int sgemm_slice_depth(const SgemmConfig& config, int k) {
  if (config.split_k <= 1) return k;
  const long long per_slice =
      ceil_div(ceil_div(k, config.block_k), config.split_k) * config.block_k;
  return static_cast<int>(std::min<long long>(per_slice, k));
}

std::size_t sgemm_workspace_floats(const SgemmConfig& config, int m, int n) {
  if (config.split_k <= 1) return 0;
  return static_cast<std::size_t>(config.split_k) * static_cast<std::size_t>(m) *
         static_cast<std::size_t>(float4_pitch(n));
}

double sgemm_pad_ms(const DeviceProperties& device, int n, int k) {
  const double theoretical = device.theoretical_bandwidth_gb_per_s();
  const double bytes_per_ms = (theoretical > 0.0 ? theoretical : pad_fallback_bandwidth_gb_per_s) *
                              pad_copy_efficiency * 1e6;
  const double pitch = static_cast<double>(float4_pitch(n));
  return static_cast<double>(k) * (n + pitch) * sizeof(float) / bytes_per_ms + pad_launch_ms;
}

bool sgemm_padding_pays(const DeviceProperties& device, int m, int n, int k) {
  const double flop = 2.0 * m * static_cast<double>(n) * k;
  const double product_ms =
      flop / (sgemm_pad_reference_gflop_per_sm * 1e6 * std::max(device.sm_count, 1));
  return sgemm_pad_ms(device, n, k) <= sgemm_pad_b_max_share * product_ms;
}

SgemmPath sgemm_path(const DeviceProperties& device, const SgemmConfig& config, int m, int n, int k,
                     CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, SgemmPadding padding) {
  if (config.vector_a && (k % 4 != 0 || a % 16 != 0)) return SgemmPath::any_alignment;
  // A split writes its partials to the workspace, 16-byte aligned wherever C is.
  const bool c_aligned = config.split_k > 1 || c % 16 == 0;
  if (n % 4 == 0 && b % 16 == 0) return c_aligned ? SgemmPath::vectors : SgemmPath::vector_b;
  const bool pitch_fits = n <= std::numeric_limits<int>::max() - 3;
  const bool pads = padding == SgemmPadding::always ||
                    (padding == SgemmPadding::automatic && sgemm_padding_pays(device, m, n, k));
  return pads && k > 0 && pitch_fits ? SgemmPath::padded_b : SgemmPath::any_alignment;
}

int sgemm_b_pitch(SgemmPath path, int n) {
  return path == SgemmPath::padded_b ? static_cast<int>(float4_pitch(n)) : n;
}

SgemmLaunch sgemm_launch(const SgemmConfig& config, int m, int n, SgemmPath path) {
  return {
      {.grid = Dim3(
           blocks_for(static_cast<unsigned long long>(n), static_cast<unsigned>(config.block_n())),
           blocks_for(static_cast<unsigned long long>(m), static_cast<unsigned>(config.block_m())),
           static_cast<unsigned>(config.split_k)),
       .block = Dim3(static_cast<unsigned>(config.threads())),
       .dynamic_shared_bytes = config.shared_bytes()},
      path == SgemmPath::any_alignment ? "sgemm"
      : path == SgemmPath::vectors     ? "sgemm_aligned"
                                       : "sgemm_pitched_b"};
}

LaunchConfig sgemm_pad_launch(const DeviceProperties& device, int rows, int pitch) {
  const long long row_blocks = ceil_div(ceil_div(static_cast<long long>(pitch), 4), reduce_threads);
  const long long most =
      static_cast<long long>(std::max(device.sm_count, 1)) * reduce_blocks_per_sm;
  const long long rows_at_once =
      std::clamp(most / row_blocks, 1ll, std::min<long long>(std::max(rows, 1), max_grid_y));
  return {.grid = Dim3(static_cast<unsigned>(row_blocks), static_cast<unsigned>(rows_at_once)),
          .block = Dim3(static_cast<unsigned>(reduce_threads))};
}

int sgemm_reduce_groups(int split_k) {
  return split_k >= 8 ? 8 : split_k >= 4 ? 4 : split_k >= 2 ? 2 : 1;
}

LaunchConfig sgemm_reduce_launch(const SgemmConfig& config, const DeviceProperties& device, int m,
                                 int n) {
  const long long units = static_cast<long long>(m) * (float4_pitch(n) / 4);
  const long long most =
      static_cast<long long>(std::max(device.sm_count, 1)) * reduce_blocks_per_sm;
  const long long units_per_block = reduce_threads / sgemm_reduce_groups(config.split_k);
  const long long blocks = std::clamp(ceil_div(units, units_per_block), 1ll, most);
  return {.grid = Dim3(static_cast<unsigned>(blocks)),
          .block = Dim3(static_cast<unsigned>(reduce_threads)),
          .programmatic_serialization = device.cc_major >= 9};
}

}  // namespace ptxrt
