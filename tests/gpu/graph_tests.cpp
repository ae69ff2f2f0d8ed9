// [launch] CUDA graphs on a real GPU: a stream's launches and copies captured, replayed on another
// stream and checked against the CPU; graphs built node by node with dependencies; a kernel
// node's arguments and a whole executable graph updated without instantiating again, and an
// update of another topology refused with the reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "gpu_fixture.hpp"

using namespace ptxrt;
using ptxrt::testing::check_error;
using ptxrt::testing::load_source;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;

namespace {

// step: x = x * 0.5 + k, exact in float (halving is exact, and so is the CPU's same sum), so that
// a hundred steps are checked bit for bit. scale: out = x * factor. combine: out = a + b.
constexpr std::string_view graph_source = R"(
#include <cooperative_groups.h>
extern "C" __global__ void step(float* x, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + k;
}
extern "C" __global__ void scale(const float* x, float* out, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * factor;
}
extern "C" __global__ void combine(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
extern "C" __global__ void grid_total(const float* x, float* partial, float* total, int n) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += x[i];
  atomicAdd(&partial[blockIdx.x], sum);
  cooperative_groups::this_grid().sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    float t = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) t += partial[b];
    *total = t;
  }
}
)";

const Module& graph_module() {
  static const Module module = load_source(graph_source, "graph.cu");
  return module;
}

constexpr int n = 100003;  // not a multiple of the block
constexpr unsigned block = 256;

std::vector<float> cpu_steps(std::vector<float> x, int first_k, int steps) {
  for (int step = 0; step < steps; ++step)
    for (float& value : x) value = value * 0.5f + static_cast<float>(first_k + step);
  return x;
}

// Upload, `steps` step launches with k = first_k, first_k + 1, ..., and the download, on
// `stream`: what the tests capture. The kernel is loaded before: a module load is no work a
// capture can record.
void enqueue_steps(const Kernel& kernel, const Stream& stream, DeviceBuffer<float>& x,
                   PinnedBuffer<float>& host_in, PinnedBuffer<float>& host_out, int first_k,
                   int steps) {
  x.upload_async(host_in.span(), stream.handle());
  for (int step = 0; step < steps; ++step)
    kernel.launch({.grid = blocks_for(n, block), .block = block, .stream = stream.handle()}, x, n,
                  static_cast<float>(first_k + step));
  x.download_async(host_out.span(), stream.handle());
}

void poison(PinnedBuffer<float>& buffer) {
  for (float& value : buffer.span()) value = std::bit_cast<float>(poison_word);
}

}  // namespace

TEST_CASE(
    "100 captured launches replay on another stream, again with new input, matching the CPU") {
  const Context& context = test_context();
  DeviceBuffer<float> x(context, n);
  PinnedBuffer<float> host_in(context, n), host_out(context, n);
  Stream capturing(context), replaying(context);
  const Kernel step = graph_module().kernel("step");
  capturing.begin_capture();
  CHECK(capturing.is_capturing());
  enqueue_steps(step, capturing, x, host_in, host_out, 1, 100);
  const Graph graph = capturing.end_capture();
  CHECK_FALSE(capturing.is_capturing());
  CHECK(graph.nodes().size() == 102);
  CHECK(graph.nodes(GraphNodeType::kernel).size() == 100);
  CHECK(graph.nodes(GraphNodeType::memcpy).size() == 2);
  const GraphExec exec = graph.instantiate();
  for (unsigned seed : {3u, 4u}) {
    CAPTURE(seed);
    const std::vector<float> input = random_floats(n, seed);
    std::copy(input.begin(), input.end(), host_in.span().begin());
    poison(host_out);
    exec.launch(replaying);
    replaying.synchronize();
    const std::vector<float> expected = cpu_steps(input, 1, 100);
    CHECK(std::equal(expected.begin(), expected.end(), host_out.span().begin()));
  }
}

TEST_CASE("a kernel node's arguments change in the executable graph without instantiating it") {
  const Context& context = test_context();
  const Kernel scale = graph_module().kernel("scale");
  const std::vector<float> input = random_floats(n, 5);
  const DeviceBuffer<float> x(context, std::span<const float>(input));
  DeviceBuffer<float> out(context, n), other(context, n);
  PinnedBuffer<float> host_out(context, n);
  const LaunchConfig config{.grid = blocks_for(n, block), .block = block};
  Graph graph;
  const GraphNode poisoned = graph.add_fill_words(out.memory(), poison_word);
  const GraphNode scaled = graph.add_kernel(scale, config, {poisoned}, x, out, 3.0f, n);
  graph.add_download(host_out.data(), out.memory(), out.bytes(), {scaled});
  CHECK(scaled.type() == GraphNodeType::kernel);
  GraphExec exec = graph.instantiate();
  Stream stream(context);
  for (float factor : {3.0f, -0.25f}) {
    CAPTURE(factor);
    if (factor != 3.0f) exec.set_kernel_arguments(scaled, scale, config, x, out, factor, n);
    exec.launch(stream);
    stream.synchronize();
    for (int i = 0; i < n; ++i) REQUIRE(host_out.span()[i] == input[i] * factor);
  }
  check_error(
      [&] { exec.set_kernel_arguments(scaled, scale, config, x, out, 2.0, n); },
      ErrorKind::invalid_argument,
      scale.describe() + ": argument 2 is 4 bytes in the kernel, but a 8-byte double was given");
  check_error([&] { exec.set_kernel_arguments(poisoned, scale, config, x, out, 1.0f, n); },
              ErrorKind::invalid_argument,
              scale.describe() +
                  ": set_kernel_arguments needs a kernel node of the graph this "
                  "executable graph was instantiated from");
}

TEST_CASE(
    "a re-captured graph updates the executable graph, and another topology is refused with the "
    "reason") {
  const Context& context = test_context();
  DeviceBuffer<float> x(context, n);
  PinnedBuffer<float> host_in(context, n), host_out(context, n);
  const std::vector<float> input = random_floats(n, 6);
  std::copy(input.begin(), input.end(), host_in.span().begin());
  Stream stream(context);
  const Kernel step = graph_module().kernel("step");
  auto capture = [&](int first_k, int steps) {
    stream.begin_capture();
    enqueue_steps(step, stream, x, host_in, host_out, first_k, steps);
    return stream.end_capture();
  };
  GraphExec exec = capture(1, 100).instantiate();
  const Graph shifted = capture(7, 100);
  const Verdict update = exec.update(shifted);
  CHECK(update.allowed());
  CHECK(update.reason().empty());
  poison(host_out);
  exec.launch(stream);
  stream.synchronize();
  const std::vector<float> expected = cpu_steps(input, 7, 100);
  CHECK(std::equal(expected.begin(), expected.end(), host_out.span().begin()));

  const Verdict refused = exec.update(capture(1, 99));
  CHECK_FALSE(refused.allowed());
  CHECK(refused.reason() ==
        "the new graph has 101 nodes, the executable graph 102: the topology "
        "changed");
  // Refused, the executable graph is as it was.
  poison(host_out);
  exec.launch(stream);
  stream.synchronize();
  CHECK(std::equal(expected.begin(), expected.end(), host_out.span().begin()));
}

TEST_CASE("a graph built node by node runs its diamond of dependencies and checks every node") {
  const Context& context = test_context();
  const Kernel scale = graph_module().kernel("scale");
  const Kernel combine = graph_module().kernel("combine");
  const std::vector<float> input = random_floats(n, 8);
  PinnedBuffer<float> host_in(context, n), host_out(context, n);
  std::copy(input.begin(), input.end(), host_in.span().begin());
  DeviceBuffer<float> x(context, n), doubled(context, n), tripled(context, n), sum(context, n);
  const LaunchConfig config{.grid = blocks_for(n, block), .block = block};
  Graph graph;
  const GraphNode uploaded = graph.add_upload(x.memory(), host_in.data(), x.bytes());
  const GraphNode poisoned = graph.add_fill_words(sum.memory(), poison_word);
  const GraphNode left = graph.add_kernel(scale, config, {uploaded}, x, doubled, 2.0f, n);
  const GraphNode right = graph.add_kernel(scale, config, {uploaded}, x, tripled, 3.0f, n);
  const GraphNode joined =
      graph.add_kernel(combine, config, {left, right, poisoned}, doubled, tripled, sum, n);
  DeviceBuffer<float> copy(context, n);
  const GraphNode copied = graph.add_copy(copy.memory(), sum.memory(), sum.bytes(), {joined});
  graph.add_download(host_out.data(), copy.memory(), copy.bytes(), {copied});
  poison(host_out);
  Stream stream(context);
  graph.instantiate().launch(stream);
  stream.synchronize();
  for (int i = 0; i < n; ++i) REQUIRE(host_out.span()[i] == input[i] * 2.0f + input[i] * 3.0f);

  check_error([&] { graph.add_kernel(scale, config, {}, x, doubled, 2.0f); },
              ErrorKind::invalid_argument,
              scale.describe() + ": takes 4 argument(s), but 3 were given");
  check_error([&] { graph.add_kernel(scale, {.grid = 1, .block = 2048}, {}, x, doubled, 2.0f, n); },
              ErrorKind::invalid_argument, "block 2048x1x1 has x = 2048, over the device's max");
  LaunchConfig dependent = config;
  dependent.programmatic_serialization = true;
  check_error([&] { graph.add_kernel(scale, dependent, {}, x, doubled, 2.0f, n); },
              ErrorKind::invalid_argument,
              scale.describe() +
                  ": programmatic stream serialization is an attribute of stream "
                  "launches, not of graph kernel nodes: capture the launch instead");
  check_error([&] { graph.add_upload(x.memory(), host_in.data(), x.bytes() + 4); },
              ErrorKind::invalid_argument,
              "a graph's upload of " + std::to_string(x.bytes() + 4) +
                  " bytes does not fit a device buffer of " + std::to_string(x.bytes()) + " bytes");
}

TEST_CASE("a cooperative kernel node synchronizes its grid at every replay") {
  const Context& context = test_context();
  REQUIRE(context.device().properties().cooperative_launch);
  const Kernel kernel = graph_module().kernel("grid_total");
  const auto grid = static_cast<unsigned>(kernel.max_cooperative_blocks(block));
  const std::vector<float> input(n, 1.0f);
  const DeviceBuffer<float> x(context, std::span<const float>(input));
  DeviceBuffer<float> partial(context, grid), total(context, 1);
  Graph graph;
  const GraphNode zeroed = graph.add_fill_bytes(partial.memory(), 0);
  const GraphNode poisoned = graph.add_fill_words(total.memory(), poison_word);
  graph.add_kernel(kernel, {.grid = grid, .block = block, .cooperative = true}, {zeroed, poisoned},
                   x, partial, total, n);
  const GraphExec exec = graph.instantiate();
  Stream stream(context);
  for (int replay = 0; replay < 3; ++replay) {
    exec.launch(stream);
    stream.synchronize();
    CHECK(total.download() == std::vector<float>{static_cast<float>(n)});
  }
  check_error(
      [&] {
        graph.add_kernel(kernel, {.grid = grid + 1, .block = block, .cooperative = true}, {}, x,
                         partial, total, n);
      },
      ErrorKind::invalid_argument,
      kernel.describe() + ": cooperative grid " + std::to_string(grid + 1) + "x1x1");
}

TEST_CASE("a stream waits for another library's stream, and not while it captures") {
  const Context& context = test_context();
  // late_fill spins ~25 ms before it writes: a copy on another stream that did not wait for it
  // would read the zeros.
  const Module module = ptxrt::testing::test_jit().module(
      Program::from_file(std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/late_fill.cu"), {},
      context);
  const Kernel late_fill = module.kernel("late_fill");
  const Kernel copy = module.kernel("copy");
  DeviceBuffer<float> written(context, n), out(context, n);
  written.memory().fill_words(0);
  out.memory().fill_words(poison_word);
  context.synchronize();
  Stream writer(context), reader(context);
  const long long cycles = 50'000'000;
  late_fill.launch({.grid = blocks_for(n, block), .block = block, .stream = writer.handle()},
                   written, n, cycles, 7.0f);
  wait_for_stream(context, reader, writer);
  copy.launch({.grid = blocks_for(n, block), .block = block, .stream = reader.handle()}, out,
              written, n);
  reader.synchronize();
  const std::vector<float> copied = out.download();
  CHECK(std::all_of(copied.begin(), copied.end(), [](float v) { return v == 7.0f; }));

  // A capturing stream is left as it is (its launches run when the graph does), and its capture
  // survives the call.
  reader.begin_capture(CaptureMode::global);
  late_fill.launch({.grid = blocks_for(n, block), .block = block, .stream = writer.handle()},
                   written, n, 0LL, 1.0f);
  wait_for_stream(context, reader, writer);
  copy.launch({.grid = blocks_for(n, block), .block = block, .stream = reader.handle()}, out,
              written, n);
  CHECK(reader.is_capturing());
  CHECK(reader.end_capture().nodes(GraphNodeType::kernel).size() == 1);
}
