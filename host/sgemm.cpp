#include "host/sgemm.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "ptxrt/error.hpp"
#include "ptxrt/program.hpp"

namespace ptxrt::host {

namespace {

// The per-block shared memory the system keeps in front of a kernel's own (1 KiB since sm_80).
constexpr std::size_t reserved_shared_per_block = 1024;
// Registers a thread needs besides its accumulators and fragments: loader rows and columns,
// shared-memory offsets, loop counters, pointers. The default config uses about 22.
constexpr int bookkeeping_registers = 16;

const Program& sgemm_program() {
  static const Program program = Program::builtin("sgemm");
  return program;
}

std::array<std::pair<const char*, int>, 8> named_values(const SgemmConfig& config) {
  return {{{"WARPS_M", config.warps_m},
           {"WARPS_N", config.warps_n},
           {"LANES_M", config.lanes_m},
           {"TM", config.thread_m},
           {"TN", config.thread_n},
           {"BK", config.block_k},
           {"STAGES", config.stages},
           {"MIN_BLOCKS", config.min_blocks}}};
}

std::optional<std::string> undeclared_value(const SgemmConfig& config) {
  const Manifest& manifest = sgemm_program().manifest();
  for (const auto& [name, value] : named_values(config)) {
    const ManifestDefine* declared = manifest.find_define(name);
    const std::string text = std::to_string(value);
    if (declared == nullptr ||
        std::find(declared->values.begin(), declared->values.end(), text) == declared->values.end())
      return std::string(name) + "=" + text + " is not among sgemm.cu's declared values";
  }
  return std::nullopt;
}

void require_elements(const char* matrix, std::size_t size, long long rows, long long columns) {
  const auto needed = static_cast<std::size_t>(rows * columns);
  if (size >= needed) return;
  throw Error(ErrorKind::invalid_argument,
              std::string("sgemm: ") + matrix + " has " + std::to_string(size) +
                  " elements, but a " + std::to_string(rows) + "x" + std::to_string(columns) +
                  " matrix needs " + std::to_string(needed));
}

}  // namespace

std::size_t SgemmConfig::shared_bytes() const {
  return static_cast<std::size_t>(stages) * static_cast<std::size_t>(block_k) *
         static_cast<std::size_t>(block_m() + 4 + block_n()) * sizeof(float);
}

int SgemmConfig::register_cap(const DeviceProperties& device) const {
  // Registers are granted per warp in multiples of 256, so per thread in multiples of 8.
  const int per_thread = device.registers_per_sm / (threads() * min_blocks);
  return std::min(255, per_thread / 8 * 8);
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
         " stages min " + std::to_string(min_blocks) + " blocks/SM";
}

std::optional<std::string> sgemm_config_problem(const SgemmConfig& config,
                                                const DeviceProperties& device) {
  if (auto problem = undeclared_value(config)) return problem;
  const std::string who = config.describe() + ": ";
  if (config.threads() > device.max_threads_per_block)
    return who + std::to_string(config.threads()) + " threads exceed the device's " +
           std::to_string(device.max_threads_per_block) + " per block";
  const std::size_t shared = config.shared_bytes();
  if (shared > static_cast<std::size_t>(device.shared_memory_per_block_optin))
    return who + std::to_string(shared) + " bytes of shared memory exceed the device's " +
           std::to_string(device.shared_memory_per_block_optin) + " per block";
  if (config.threads() * config.min_blocks > device.max_threads_per_sm)
    return who + std::to_string(config.min_blocks) + " blocks of " +
           std::to_string(config.threads()) + " threads exceed the SM's " +
           std::to_string(device.max_threads_per_sm) + " threads";
  const std::size_t shared_per_sm =
      static_cast<std::size_t>(config.min_blocks) * (shared + reserved_shared_per_block);
  if (shared_per_sm > static_cast<std::size_t>(device.shared_memory_per_sm))
    return who + std::to_string(config.min_blocks) + " blocks need " +
           std::to_string(shared_per_sm) + " bytes of shared memory, over the SM's " +
           std::to_string(device.shared_memory_per_sm);
  const int needed =
      config.thread_m * config.thread_n + config.thread_m + config.thread_n + bookkeeping_registers;
  if (needed > config.register_cap(device))
    return who + "needs about " + std::to_string(needed) + " registers, over the cap of " +
           std::to_string(config.register_cap(device)) + " that " +
           std::to_string(config.min_blocks) + " blocks per SM leave";
  return std::nullopt;
}

std::vector<SgemmConfig> sgemm_configs(const DeviceProperties& device) {
  // warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks
  const std::vector<SgemmConfig> candidates = {
      {4, 2, 4, 8, 8, 16, 3, 2},  // 128×128×16: the classic tile, half the per-tile cost of BK 8
      {4, 2, 4, 8, 8, 8, 3, 2},   // 128×128×8, 256 threads: the classic tile as usually written
      {4, 2, 4, 8, 8, 8, 2, 2},   // 128×128×8, double buffered
      {4, 2, 4, 8, 8, 16, 4, 2},  // 128×128×16, deeper ring
      {4, 2, 4, 8, 16, 8, 3, 1},  // 128×256×8: 8×16 per thread, half of B's reads per FFMA
      {2, 4, 8, 8, 8, 8, 3, 2},   // 128×128×8 with 64×32 warp tiles instead of 32×64
      {4, 2, 4, 16, 8, 8, 3, 1},  // 256×128×8: 16×8 per thread
      {2, 2, 4, 16, 8, 8, 3, 2},  // 128×128×8 with 128 threads, 16×8 per thread
      {4, 1, 4, 8, 8, 8, 3, 3},   // 128×64×8, 128 threads: more blocks for small grids
      {2, 2, 4, 8, 4, 8, 4, 4},   // 64×64×8, 128 threads: for small or ragged matrices
  };
  std::vector<SgemmConfig> usable;
  for (const SgemmConfig& config : candidates)
    if (!sgemm_config_problem(config, device)) usable.push_back(config);
  return usable;
}

SgemmConfig default_sgemm_config(const DeviceProperties& device) {
  const std::vector<SgemmConfig> usable = sgemm_configs(device);
  if (usable.empty())
    throw Error(ErrorKind::invalid_argument, "sgemm: no config suits " + device.name + " (sm_" +
                                                 std::to_string(device.cc_major) +
                                                 std::to_string(device.cc_minor) + ")");
  return usable.front();
}

SgemmLaunch sgemm_launch(const SgemmConfig& config, int m, int n, bool aligned) {
  return {
      {.grid = Dim3(
           blocks_for(static_cast<unsigned long long>(n), static_cast<unsigned>(config.block_n())),
           blocks_for(static_cast<unsigned long long>(m), static_cast<unsigned>(config.block_m()))),
       .block = Dim3(static_cast<unsigned>(config.threads())),
       .dynamic_shared_bytes = config.shared_bytes()},
      aligned ? "sgemm_aligned" : "sgemm"};
}

bool sgemm_alignment_allows_vectors(CUdeviceptr b, CUdeviceptr c, int n) {
  return n % 4 == 0 && b % 16 == 0 && c % 16 == 0;
}

void sgemm(Jit& jit, const Context& context, const DeviceBuffer<float>& a,
           const DeviceBuffer<float>& b, DeviceBuffer<float>& c, int m, int n, int k,
           const SgemmConfig& config, CUstream stream) {
  if (m < 0 || n < 0 || k < 0)
    throw Error(ErrorKind::invalid_argument,
                "sgemm: sizes must not be negative, got m=" + std::to_string(m) +
                    " n=" + std::to_string(n) + " k=" + std::to_string(k));
  require_elements("A", a.size(), m, k);
  require_elements("B", b.size(), k, n);
  require_elements("C", c.size(), m, n);
  if (auto problem = sgemm_config_problem(config, context.device().properties()))
    throw Error(ErrorKind::invalid_argument, "sgemm: " + *problem);
  if (m == 0 || n == 0) return;
  SgemmLaunch plan =
      sgemm_launch(config, m, n, sgemm_alignment_allows_vectors(b.address(), c.address(), n));
  plan.launch.stream = stream;
  CompileOptions options;
  options.defines = config.defines();
  const Kernel kernel = jit.kernel(sgemm_program(), options, context, plan.entry);
  kernel.launch(plan.launch, a, b, c, m, n, k);
}

}  // namespace ptxrt::host
