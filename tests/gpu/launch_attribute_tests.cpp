// [launch] Launch attributes on a real GPU: cooperative grids that synchronize, thread-block
// clusters reading each other's shared memory, programmatic dependent launches, priorities; each
// refused before the driver sees it where it cannot run, with the message of the CPU tests; and
// the offline model's co-resident blocks and clusters against the driver's occupancy calculator.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "error_checks.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"

using namespace ptxrt;
using ptxrt::testing::check_error;
using ptxrt::testing::load_source;
using ptxrt::testing::poison_word;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

// grid_count: every block adds one, the grid synchronizes, and every block then reads the total:
// a grid barrier that did not wait for every block shows as a short count somewhere.
// neighbour: each block of a cluster reads the next block's shared memory (dynamic, at least
// blockDim.x words).
constexpr std::string_view launch_source = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_count(unsigned* counter, unsigned* seen) {
  if (threadIdx.x == 0) atomicAdd(counter, 1u);
  cg::this_grid().sync();
  if (threadIdx.x == 0) seen[blockIdx.x] = *reinterpret_cast<volatile unsigned*>(counter);
}

extern "C" __global__ void neighbour(unsigned* out) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ unsigned mine[];  // blockDim.x
  cg::cluster_group cluster = cg::this_cluster();
  mine[threadIdx.x] = blockIdx.x * 1000u + threadIdx.x;
  cluster.sync();
  const unsigned next = (cluster.block_rank() + 1) % cluster.num_blocks();
  const unsigned* theirs = cluster.map_shared_rank(mine, next);
  out[blockIdx.x * blockDim.x + threadIdx.x] = theirs[threadIdx.x];
  cluster.sync();
#endif
}

#if __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) paired(unsigned* out) {
  out[blockIdx.x] = cg::this_cluster().block_rank();
}
#else
extern "C" __global__ void paired(unsigned* out) {}
#endif

extern "C" __global__ void producer(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 2.0f * i;
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

extern "C" __global__ void consumer(const float* data, float* out, int n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = data[i] + 1.0f;
}
)";

const Module& launch_module() {
  static const Module module = load_source(launch_source, "launch_attributes.cu");
  return module;
}

bool has_clusters() { return test_context().device().properties().cluster_launch; }

// The expected cluster contents: block b reads block b's cluster neighbour's values.
std::vector<unsigned> neighbour_values(unsigned blocks, unsigned cluster, unsigned threads) {
  std::vector<unsigned> values;
  for (unsigned block = 0; block < blocks; ++block) {
    const unsigned first = block / cluster * cluster;
    const unsigned next = first + (block - first + 1) % cluster;
    for (unsigned thread = 0; thread < threads; ++thread) values.push_back(next * 1000u + thread);
  }
  return values;
}

}  // namespace

TEST_CASE(
    "a cooperative launch of every co-resident block synchronizes the grid, and one "
    "more is refused") {
  const DeviceProperties& device = test_context().device().properties();
  REQUIRE(device.cooperative_launch);
  const Kernel kernel = launch_module().kernel("grid_count");
  const long long most = kernel.max_cooperative_blocks(256);
  REQUIRE(most >= device.sm_count);
  const auto grid = static_cast<unsigned>(most);
  DeviceBuffer<unsigned> counter(test_context(), 1);
  DeviceBuffer<unsigned> seen(test_context(), grid);
  counter.fill_bytes(0);
  seen.memory().fill_words(poison_word);
  kernel.launch({.grid = grid, .block = 256, .cooperative = true}, counter, seen);
  for (unsigned value : seen.download()) REQUIRE(value == grid);

  const int per_sm = kernel.max_active_blocks_per_sm(256);
  check_error(
      [&] { kernel.launch({.grid = grid + 1, .block = 256, .cooperative = true}, counter, seen); },
      ErrorKind::invalid_argument,
      kernel.describe() + ": cooperative grid " + std::to_string(grid + 1) +
          "x1x1 = " + std::to_string(grid + 1) + " blocks exceeds the " + std::to_string(grid) +
          " blocks that can be resident at once (" + std::to_string(per_sm) +
          " blocks of 256x1x1 per SM x " + std::to_string(device.sm_count) + " SMs)");
}

TEST_CASE(
    "the offline model's cooperative limit is the driver's for the built-in cooperative sum") {
  const DeviceProperties& device = test_context().device().properties();
  const ArchLimits& limits = arch_limits(device.cc_major, device.cc_minor);
  for (const char* block : {"64", "256", "1024"}) {
    CAPTURE(block);
    const CompileOptions options{.defines = {{"BLOCK_SIZE", block}}};
    const Program program = apps::builtin_program("reduce");
    const Kernel kernel =
        test_jit().kernel(program, options, test_context(), "reduce_sum_cooperative");
    const auto image = test_jit().image(program, Jit::target_for(options, test_context()));
    for (const KernelResources& resources : read_cubin_resources(image->data)) {
      if (resources.name != "reduce_sum_cooperative") continue;
      const int threads = std::stoi(block);
      CHECK(co_resident_blocks(compute_occupancy(limits, resources, threads, 0), device.sm_count) ==
            kernel.max_cooperative_blocks(static_cast<unsigned>(threads)));
    }
  }
}

TEST_CASE("a cluster launch reads the neighbour block's shared memory") {
  if (!has_clusters()) {
    MESSAGE("no thread-block clusters on this device");
    return;
  }
  const Kernel kernel = launch_module().kernel("neighbour");
  for (unsigned cluster : {2u, 4u, 8u}) {
    CAPTURE(cluster);
    const unsigned blocks = 6 * cluster;
    DeviceBuffer<unsigned> out(test_context(), blocks * 32);
    out.memory().fill_words(poison_word);
    kernel.launch(
        {.grid = blocks, .block = 32, .dynamic_shared_bytes = 128, .cluster = Dim3{cluster}}, out);
    CHECK(out.download() == neighbour_values(blocks, cluster, 32));
  }
}

TEST_CASE("cluster checks: the grid, the portable size and its opt-in, the residency") {
  if (!has_clusters()) {
    MESSAGE("no thread-block clusters on this device");
    return;
  }
  const Kernel kernel = launch_module().kernel("neighbour");
  DeviceBuffer<unsigned> out(test_context(), 32 * 32);
  check_error([&] { kernel.launch({.grid = 10, .block = 32, .cluster = Dim3{4}}, out); },
              ErrorKind::invalid_argument,
              kernel.describe() +
                  ": cluster 4x1x1 does not divide grid 10x1x1: x = 10 is not a multiple of 4");
  check_error(
      [&] { kernel.launch({.grid = 32, .block = 32, .cluster = Dim3{16}}, out); },
      ErrorKind::invalid_argument,
      kernel.describe() +
          ": cluster 16x1x1 = 16 blocks exceeds the portable maximum of 8 blocks; opt the "
          "kernel in to non-portable sizes first (Kernel::allow_non_portable_cluster_size)");
  kernel.allow_non_portable_cluster_size();
  const LaunchConfig sixteen{
      .grid = 32, .block = 32, .dynamic_shared_bytes = 128, .cluster = Dim3{16}};
  if (kernel.max_active_clusters(sixteen) > 0) {
    out.memory().fill_words(poison_word);
    kernel.launch(sixteen, out);
    CHECK(out.download() == neighbour_values(32, 16, 32));
  }
  // 1024-thread blocks that take all of an SM's shared memory: one per SM, and a cluster of 16
  // needs a GPC of 16 SMs. Whether one exists is the chip's; both answers are checked.
  const DeviceProperties& device = test_context().device().properties();
  const auto all_shared = device.shared_memory_per_block_optin;
  const LaunchConfig heavy{
      .grid = 16, .block = 1024, .dynamic_shared_bytes = all_shared, .cluster = Dim3{16}};
  DeviceBuffer<unsigned> wide(test_context(), 16 * 1024);
  if (kernel.max_active_clusters(heavy) == 0) {
    check_error([&] { kernel.launch(heavy, wide); }, ErrorKind::invalid_argument,
                kernel.describe() + ": no cluster of 16x1x1 blocks (block 1024x1x1, " +
                    std::to_string(all_shared) +
                    " bytes of dynamic shared memory each) can be resident at once "
                    "(cuOccupancyMaxActiveClusters = 0)");
  } else {
    wide.memory().fill_words(poison_word);
    kernel.launch(heavy, wide);
    CHECK(wide.download() == neighbour_values(16, 16, 1024));
  }
}

TEST_CASE("a kernel's __cluster_dims__ is its cluster with or without the attribute") {
  if (!has_clusters()) {
    MESSAGE("no thread-block clusters on this device");
    return;
  }
  const Kernel kernel = launch_module().kernel("paired");
  REQUIRE(kernel.compiled_cluster().has_value());
  CHECK(to_string(*kernel.compiled_cluster()) == "2x1x1");
  DeviceBuffer<unsigned> out(test_context(), 8);
  out.memory().fill_words(poison_word);
  kernel.launch({.grid = 8, .block = 32}, out);
  CHECK(out.download() == std::vector<unsigned>{0, 1, 0, 1, 0, 1, 0, 1});
  out.memory().fill_words(poison_word);
  kernel.launch({.grid = 8, .block = 32, .cluster = Dim3{2}}, out);
  CHECK(out.download() == std::vector<unsigned>{0, 1, 0, 1, 0, 1, 0, 1});
  check_error([&] { kernel.launch({.grid = 7, .block = 32}, out); }, ErrorKind::invalid_argument,
              kernel.describe() +
                  ": cluster 2x1x1 does not divide grid 7x1x1: x = 7 is not a multiple of 2");
  check_error([&] { kernel.launch({.grid = 8, .block = 32, .cluster = Dim3{4}}, out); },
              ErrorKind::invalid_argument,
              kernel.describe() +
                  ": cluster 4x1x1 differs from the 2x1x1 the kernel was compiled with "
                  "(__cluster_dims__)");
}

TEST_CASE("the offline cluster model against cuOccupancyMaxActiveClusters") {
  const DeviceProperties& device = test_context().device().properties();
  if (!has_clusters() || device.cc_major != 9) {
    MESSAGE("the cluster model knows CC 9.0 only");
    return;
  }
  const ArchLimits& limits = arch_limits(device.cc_major, device.cc_minor);
  const Program program = Program::from_string(std::string(launch_source), "launch_attributes.cu");
  const auto image = test_jit().image(program, Jit::target_for({}, test_context()));
  KernelResources resources;
  for (const KernelResources& found : read_cubin_resources(image->data))
    if (found.name == "neighbour") resources = found;
  const Kernel kernel = launch_module().kernel("neighbour");
  kernel.allow_non_portable_cluster_size();
  for (unsigned block : {32u, 256u, 1024u})
    for (std::size_t shared : {std::size_t{0}, std::size_t{60} * 1024, std::size_t{200} * 1024})
      for (unsigned cluster : {1u, 2u, 4u, 8u, 16u}) {
        CAPTURE(block);
        CAPTURE(shared);
        CAPTURE(cluster);
        const Occupancy occupancy =
            compute_occupancy(limits, resources, static_cast<int>(block), shared);
        const int model =
            co_resident_clusters(limits, occupancy, static_cast<int>(cluster), device.sm_count);
        const int driver = kernel.max_active_clusters({.grid = cluster,
                                                       .block = block,
                                                       .dynamic_shared_bytes = shared,
                                                       .cluster = Dim3{cluster}});
        MESSAGE("block " << block << ", " << shared << " B shared, cluster " << cluster
                         << ": model " << model << ", driver " << driver);
        // Clusters of one or two blocks fit every GPC's even SM count exactly, however the chip
        // was harvested; for larger ones the model's even GPCs are an upper bound.
        if (cluster <= 2)
          CHECK(model == driver);
        else
          CHECK(driver <= model);
      }
}

TEST_CASE("a programmatic dependent launch sees its producer's results") {
  const DeviceProperties& device = test_context().device().properties();
  const Kernel producer = launch_module().kernel("producer");
  const Kernel consumer = launch_module().kernel("consumer");
  const int n = 100003;
  DeviceBuffer<float> data(test_context(), n);
  DeviceBuffer<float> out(test_context(), n);
  const Stream stream(test_context());
  // On the launches' stream: it does not wait for the legacy default stream. Data poisoned too,
  // so that a consumer reading it before the producer wrote it fails.
  data.memory().fill_words(poison_word, stream.handle());
  out.memory().fill_words(poison_word, stream.handle());
  const LaunchConfig config{.grid = blocks_for(n, 256), .block = 256, .stream = stream.handle()};
  if (device.cc_major < 9) {
    LaunchConfig dependent = config;
    dependent.programmatic_serialization = true;
    check_error([&] { consumer.launch(dependent, data, out, n); }, ErrorKind::invalid_argument,
                "programmatic stream serialization needs compute capability 9.0 or newer");
    return;
  }
  producer.launch(config, data, n);
  LaunchConfig dependent = config;
  dependent.programmatic_serialization = true;
  consumer.launch(dependent, data, out, n);
  stream.synchronize();
  const std::vector<float> result = out.download();
  for (int i = 0; i < n; ++i)
    REQUIRE(result[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i) + 1.0f);
}

TEST_CASE(
    "a launch priority in the context's range runs, and one outside is refused with the range") {
  const StreamPriorities priorities = test_context().stream_priorities();
  const Kernel kernel = launch_module().kernel("producer");
  const int n = 1000;
  DeviceBuffer<float> data(test_context(), n);
  data.memory().fill_words(poison_word);
  kernel.launch({.grid = blocks_for(n, 256), .block = 256, .priority = priorities.highest}, data,
                n);
  const std::vector<float> result = data.download();
  for (int i = 0; i < n; ++i)
    REQUIRE(result[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i));
  check_error(
      [&] { kernel.launch({.grid = 4, .block = 256, .priority = priorities.lowest + 1}, data, n); },
      ErrorKind::invalid_argument,
      kernel.describe() + ": priority " + std::to_string(priorities.lowest + 1) +
          " is outside the device's range " + std::to_string(priorities.highest) +
          " (highest) to " + std::to_string(priorities.lowest) + " (lowest)");
}
