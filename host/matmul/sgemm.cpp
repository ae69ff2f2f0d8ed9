#include "host/matmul/sgemm.hpp"

#include <algorithm>
#include <array>
#include <charconv>
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

std::array<std::pair<const char*, int>, 11> named_values(const SgemmConfig& config) {
  return {{{"WARPS_M", config.warps_m},
           {"WARPS_N", config.warps_n},
           {"LANES_M", config.lanes_m},
           {"TM", config.thread_m},
           {"TN", config.thread_n},
           {"BK", config.block_k},
           {"STAGES", config.stages},
           {"MIN_BLOCKS", config.min_blocks},
           {"GROUP_M", config.group_m},
           {"VECTOR_A", config.vector_a ? 1 : 0},
           {"SKIP_IDLE_WARPS", config.skip_idle_warps ? 1 : 0}}};
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

SgemmConfig sgemm_config_with(SgemmConfig base, const std::vector<Define>& defines) {
  const std::pair<const char*, int*> fields[] = {
      {"WARPS_M", &base.warps_m}, {"WARPS_N", &base.warps_n},       {"LANES_M", &base.lanes_m},
      {"TM", &base.thread_m},     {"TN", &base.thread_n},           {"BK", &base.block_k},
      {"STAGES", &base.stages},   {"MIN_BLOCKS", &base.min_blocks}, {"GROUP_M", &base.group_m}};
  for (const Define& define : defines) {
    int value = 0;
    const auto [end, error] =
        std::from_chars(define.value.data(), define.value.data() + define.value.size(), value);
    if (error != std::errc() || end != define.value.data() + define.value.size())
      throw Error(ErrorKind::invalid_argument,
                  "sgemm: " + define.name + "=" + define.value + " is not an integer");
    const auto field = std::find_if(std::begin(fields), std::end(fields),
                                    [&](const auto& entry) { return define.name == entry.first; });
    if (field != std::end(fields))
      *field->second = value;
    else if (define.name == "VECTOR_A")
      base.vector_a = value != 0;
    else if (define.name == "SKIP_IDLE_WARPS")
      base.skip_idle_warps = value != 0;
    else
      throw Error(ErrorKind::invalid_argument,
                  "sgemm: " + define.name + " is not one of sgemm.cu's constants");
  }
  return base;
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
         (vector_a ? " vector A" : "") + (skip_idle_warps ? " skip idle warps" : "");
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

namespace {

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

// warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks; then group_m,
// vector_a, skip_idle_warps through with(). docs/perf-notes.md predicts each.
const std::vector<ListedConfig>& listed_configs() {
  using enum SgemmShape;
  constexpr SgemmConfig base{4, 2, 4, 8, 8, 16, 3, 2};          // 128×128×16, the default
  constexpr SgemmConfig wide_m{4, 2, 4, 16, 8, 16, 3, 1};       // 256×128×16: 16×8 per thread
  constexpr SgemmConfig half_n{4, 1, 4, 8, 8, 16, 3, 3};        // 128×64×16, 128 threads
  constexpr SgemmConfig tall_thread{2, 2, 4, 16, 8, 16, 3, 2};  // 128×128×16, 128 threads
  static const std::vector<ListedConfig> listed = {
      {base, {square, ragged, skinny}},
      // Measured before (perf-notes): BK 8, rings of 2 and 4, other tiles.
      {{4, 2, 4, 8, 8, 8, 3, 2}, {}},
      {{4, 2, 4, 8, 8, 8, 2, 2}, {}},
      {{4, 2, 4, 8, 8, 16, 4, 2}, {square}},
      {{4, 2, 4, 8, 16, 8, 3, 1}, {}},
      {{2, 4, 8, 8, 8, 8, 3, 2}, {}},
      {{4, 2, 4, 16, 8, 8, 3, 1}, {}},
      {{2, 2, 4, 16, 8, 8, 3, 2}, {skinny}},
      {{4, 1, 4, 8, 8, 8, 3, 3}, {ragged}},
      {{2, 2, 4, 8, 4, 8, 4, 4}, {}},
      // The default with each switch, and the best 4096³ config with both that matter there.
      {with(base, 1, true, false), {square, skinny}},
      {with({4, 2, 4, 8, 8, 16, 4, 2}, 8, true, false), {square, skinny}},
      {with(base, 1, false, true), {square, ragged}},
      // The winner of `ptxrt tune sgemm --size 4096` on the H100: 64×256×16, 4 stages, no
      // register cap (46.6 TFLOP/s, 0.917× cuBLAS in the same run).
      {{2, 4, 4, 8, 8, 16, 4, 1}, {square, ragged, skinny}},
      {with({2, 4, 4, 8, 8, 16, 4, 1}, 1, true, false), {square, skinny}},
      // The winner of the 664-config tune with BK 32 and vector A (47.9 TFLOP/s, 0.937×).
      {with({4, 2, 4, 8, 16, 32, 4, 1}, 1, true, false), {square, skinny}},
      // BK 32: half the loop, barrier and address cost per FFMA, twice the shared memory.
      {with({4, 2, 4, 8, 8, 32, 3, 2}, 1, true, false), {square, skinny}},
      {with({4, 2, 4, 8, 8, 32, 3, 2}, 1, false, true), {ragged}},
      // One block per SM: 256×128 and 128×256 with 16×8 or 8×16 per thread (8 warps), or 8×8
      // per thread in 16 warps.
      {with(wide_m, 1, true, false), {square}},
      {with({4, 2, 4, 16, 8, 32, 3, 1}, 1, true, false), {square}},
      {with({8, 2, 4, 8, 8, 16, 3, 1}, 1, true, false), {square, skinny}},
      {with({4, 2, 4, 8, 16, 16, 3, 1}, 1, true, false), {square}},
      {with(wide_m, 1, false, true), {ragged}},
      // 128 threads with 16×8 each: 6 LDS.128 per 128 FFMA.
      {with(tall_thread, 1, true, false), {square, skinny}},
      {with(tall_thread, 1, false, true), {ragged}},
      // The winner of `ptxrt tune sgemm --size 4097` on the H100 (40.3 TFLOP/s, 0.93× cuBLAS):
      // 128×64×16 from 2×2 warps of 8×4 lanes (tuned with VECTOR_A=1, which the any-alignment
      // entry that N % 4 != 0 runs does not use).
      {{2, 2, 8, 8, 8, 16, 3, 2}, {ragged}},
      // 128×64 at 3 blocks per SM: finer waves for ragged sizes, more overlap for skinny ones.
      {with({4, 1, 4, 8, 8, 8, 3, 3}, 1, false, true), {ragged}},
      {with(half_n, 1, false, true), {ragged}},
      {with(half_n, 1, true, false), {skinny}},
  };
  return listed;
}

}  // namespace

std::vector<SgemmConfig> sgemm_configs(const DeviceProperties& device) {
  std::vector<SgemmConfig> usable;
  for (const ListedConfig& listed : listed_configs())
    if (!sgemm_config_problem(listed.config, device)) usable.push_back(listed.config);
  return usable;
}

SgemmShape sgemm_shape_of(int m, int n, int k) {
  if (static_cast<long long>(k) * 16 <= std::min(m, n)) return SgemmShape::skinny;
  if (m % 128 != 0 || n % 128 != 0) return SgemmShape::ragged;
  return SgemmShape::square;
}

const char* to_string(SgemmShape shape) {
  switch (shape) {
    case SgemmShape::square: return "square";
    case SgemmShape::ragged: return "ragged";
    case SgemmShape::skinny: return "skinny";
  }
  return "unknown";
}

std::vector<SgemmConfig> sgemm_candidates(const DeviceProperties& device, int m, int n, int k) {
  const SgemmShape shape = sgemm_shape_of(m, n, k);
  std::vector<SgemmConfig> candidates;
  for (const ListedConfig& listed : listed_configs())
    if (std::find(listed.shapes.begin(), listed.shapes.end(), shape) != listed.shapes.end() &&
        !sgemm_config_problem(listed.config, device))
      candidates.push_back(listed.config);
  return candidates;
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

bool sgemm_alignment_allows_vectors(const SgemmConfig& config, CUdeviceptr a, CUdeviceptr b,
                                    CUdeviceptr c, int n, int k) {
  const bool a_allows = !config.vector_a || (k % 4 == 0 && a % 16 == 0);
  return n % 4 == 0 && b % 16 == 0 && c % 16 == 0 && a_allows;
}

void prepare_sgemm(Jit& jit, const Context& context, const SgemmConfig& config) {
  CompileOptions options;
  options.defines = config.defines();
  jit.module(sgemm_program(), options, context);
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
  SgemmLaunch plan = sgemm_launch(
      config, m, n,
      sgemm_alignment_allows_vectors(config, a.address(), b.address(), c.address(), n, k));
  plan.launch.stream = stream;
  CompileOptions options;
  options.defines = config.defines();
  const Kernel kernel = jit.kernel(sgemm_program(), options, context, plan.entry);
  kernel.launch(plan.launch, a, b, c, m, n, k);
}

}  // namespace ptxrt::host
