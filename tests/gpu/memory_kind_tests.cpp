// [launch] Memory kinds on a real GPU: pinned host buffers as async copy sources and targets,
// managed memory touched by the host and by kernels, stream-ordered pool allocations, async fills
// of every kind, and peer access: refused on one device with the reason, used between two where
// the machine has them.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "gpu_fixture.hpp"
#include "log_capture.hpp"

using namespace ptxrt;
using ptxrt::testing::check_error;
using ptxrt::testing::contains;
using ptxrt::testing::load_source;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;

namespace {

constexpr std::string_view memory_source = R"(
extern "C" __global__ void twice_plus_one(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i] + 1.0f;
}
)";

constexpr int n = 250007;  // not a multiple of the block

Kernel twice_plus_one(const Context& context) {
  return load_source(memory_source, "memory_kinds.cu", context).kernel("twice_plus_one");
}

LaunchConfig over_n(CUstream stream = nullptr) {
  return {.grid = blocks_for(n, 256), .block = 256, .stream = stream};
}

std::vector<float> expected_of(const std::vector<float>& input) {
  std::vector<float> out(input.size());
  std::transform(input.begin(), input.end(), out.begin(),
                 [](float value) { return 2.0f * value + 1.0f; });
  return out;
}

std::vector<std::uint32_t> words(const DeviceRange& memory) {
  std::vector<std::uint32_t> values(memory.bytes() / 4);
  memory.download_bytes(values.data(), memory.bytes());
  return values;
}

}  // namespace

TEST_CASE("pinned buffers are async copy sources and targets on a stream, and page-locked") {
  const Context& context = test_context();
  const std::vector<float> input = random_floats(n, 21);
  PinnedBuffer<float> host_in(context, n), host_out(context, n);
  std::copy(input.begin(), input.end(), host_in.span().begin());
  std::fill(host_out.span().begin(), host_out.span().end(), -1.0f);
  CHECK(is_page_locked(context, host_in.data()));
  CHECK_FALSE(is_page_locked(context, input.data()));
  DeviceBuffer<float> in(context, n), out(context, n);
  const Stream stream(context);
  out.memory().fill_words(poison_word, stream.handle());
  in.upload_async(host_in.span(), stream.handle());
  twice_plus_one(context).launch(over_n(stream.handle()), in, out, n);
  out.download_async(host_out.span(), stream.handle());
  stream.synchronize();
  CHECK(std::equal(host_out.span().begin(), host_out.span().end(), expected_of(input).begin()));
}

TEST_CASE(
    "an async copy with pageable memory works, and says at debug level that it cannot "
    "overlap") {
  const Context& context = test_context();
  const std::vector<float> input = random_floats(n, 22);
  DeviceBuffer<float> in(context, n);
  const Stream stream(context);
  ptxrt::testing::LogCapture log(log::Level::debug);
  in.upload_async(input, stream.handle());
  stream.synchronize();
  CHECK(in.download() == input);
  const auto said = std::count_if(log.lines.begin(), log.lines.end(), [](const std::string& line) {
    return contains(line,
                    "asynchronously with pageable host memory: the driver copies it "
                    "synchronously, so it overlaps nothing");
  });
  CHECK(said == 1);
}

TEST_CASE("managed memory written by the host, transformed by a kernel, read by the host") {
  const Context& context = test_context();
  const DeviceProperties& device = context.device().properties();
  REQUIRE(device.managed_memory);
  const std::vector<float> input = random_floats(n, 23);
  ManagedBuffer<float> in(context, n), out(context, n);
  std::copy(input.begin(), input.end(), in.span().begin());
  std::fill(out.span().begin(), out.span().end(), std::bit_cast<float>(poison_word));
  in.memory().advise(ManagedAdvice::set_read_mostly, MemoryLocation::device(context.device()));
  const Stream stream(context);
  if (device.concurrent_managed_access) {
    in.memory().prefetch(MemoryLocation::device(context.device()), stream.handle());
    out.memory().prefetch(MemoryLocation::device(context.device()), stream.handle());
  }
  twice_plus_one(context).launch(over_n(stream.handle()), in, out, n);
  if (device.concurrent_managed_access)
    out.memory().prefetch(MemoryLocation::host(), stream.handle());
  stream.synchronize();
  CHECK(std::equal(out.span().begin(), out.span().end(), expected_of(input).begin()));
  // The same memory as a device range: a fill on a stream, a download.
  out.memory().fill_words(poison_word, stream.handle());
  stream.synchronize();
  for (std::uint32_t word : words(out.memory())) REQUIRE(word == poison_word);
}

TEST_CASE(
    "a pool allocation is made, used and freed on a stream, from a new pool and the "
    "default one") {
  const Context& context = test_context();
  REQUIRE(context.device().properties().memory_pools);
  const std::vector<float> input = random_floats(n, 24);
  PinnedBuffer<float> host_in(context, n), host_out(context, n);
  std::copy(input.begin(), input.end(), host_in.span().begin());
  const Kernel kernel = twice_plus_one(context);
  MemoryPool own(context);
  own.set_release_threshold(std::uint64_t{64} << 20);
  const MemoryPool shared = MemoryPool::device_default(context);
  for (const MemoryPool* pool : std::initializer_list<const MemoryPool*>{&own, &shared}) {
    const Stream stream(context);
    StreamMemory in(*pool, n * sizeof(float), stream);
    StreamMemory out(*pool, n * sizeof(float), stream);
    out.fill_words(poison_word, stream.handle());
    in.upload_bytes_async(host_in.data(), in.bytes(), stream);
    kernel.launch(over_n(stream.handle()), in, out, n);
    out.download_bytes_async(host_out.data(), out.bytes(), stream);
    in.free_async(stream);
    CHECK(in.address() == 0);
    stream.synchronize();
    CHECK(std::equal(host_out.span().begin(), host_out.span().end(), expected_of(input).begin()));
  }  // `out` is freed on its stream as it goes
  own.trim_to(0);
}

TEST_CASE(
    "peer access on one device is refused with the reason, and copies between its "
    "contexts work") {
  const Context& context = test_context();
  const Device& device = context.device();
  CHECK_FALSE(can_access_peer(device, device));
  check_error([&] { enable_peer_access(context, context); }, ErrorKind::invalid_argument,
              "peer access is between two devices, and both contexts are on device " +
                  std::to_string(device.ordinal()) + ": its own memory needs none");
  CHECK_FALSE(peer_access_enabled(context, context));
  // A context of ptxrt's own on the same device: a copy between contexts takes the peer path.
  const Context created = Context::create(device);
  const std::vector<float> input = random_floats(n, 25);
  const DeviceBuffer<float> source(context, std::span<const float>(input));
  DeviceBuffer<float> destination(created, n);
  destination.memory().fill_words(poison_word);
  destination.memory().copy_from(source.memory(), source.bytes());
  created.synchronize();
  CHECK(destination.download() == input);
}

TEST_CASE("peer access between two devices where the machine has them, and peer copies") {
  if (Device::count() < 2) {
    MESSAGE("one device: nothing to be a peer of");
    return;
  }
  const Context first = Context::primary(0);
  const Context second = Context::primary(1);
  const std::vector<float> input = random_floats(n, 26);
  const DeviceBuffer<float> on_first(first, std::span<const float>(input));
  DeviceBuffer<float> on_second(second, n);
  if (!can_access_peer(first.device(), second.device())) {
    check_error([&] { enable_peer_access(second, first); }, ErrorKind::invalid_argument,
                "device 1 cannot access device 0's memory directly (cuDeviceCanAccessPeer = 0");
  } else {
    enable_peer_access(second, first);
    enable_peer_access(second, first);  // idempotent
    CHECK(peer_access_enabled(second, first));
    // A kernel on device 1 reads device 0's memory directly.
    DeviceBuffer<float> out(second, n);
    out.memory().fill_words(poison_word);
    twice_plus_one(second).launch(over_n(), on_first, out, n);
    CHECK(out.download() == expected_of(input));
  }
  // Peer copies work either way: direct, or staged by the driver.
  const Stream stream(second);
  on_second.memory().fill_words(poison_word, stream.handle());
  on_second.memory().copy_from(on_first.memory(), on_first.bytes(), stream.handle());
  stream.synchronize();
  CHECK(on_second.download() == input);
}

TEST_CASE("stream-ordered memory on a stream of another device is refused, naming both") {
  if (Device::count() < 2) {
    MESSAGE("one device");
    return;
  }
  const MemoryPool pool(Context::primary(0));
  const Stream other(Context::primary(1));
  check_error([&] { StreamMemory(pool, 1024, other); }, ErrorKind::invalid_argument,
              "allocating on a stream of device 1 with a pool of device 0: both must be of one "
              "device");
}
