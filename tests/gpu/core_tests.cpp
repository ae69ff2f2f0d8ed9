// [core] on a real GPU: the driver-API path end to end, symbols, launch checks, sticky errors,
// context hygiene and concurrent launches.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <regex>
#include <string>
#include <thread>

#include "gpu_fixture.hpp"

using namespace ptxrt;
using ptxrt::testing::load_source;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;

namespace {

constexpr std::string_view vector_add_source = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

constexpr std::string_view constant_source = R"(
struct Coefficients { float scale; float offset; int unused; };
extern "C" __constant__ Coefficients coefficients;
extern "C" __constant__ float table[16];
extern "C" __device__ int counter;
extern "C" __global__ void affine(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = coefficients.scale * in[i] + coefficients.offset + table[i % 16];
  if (i == 0) atomicAdd(&counter, 1);
}
)";

constexpr std::string_view limits_source = R"(
extern "C" __global__ void two_args(float* out, int n) { if (threadIdx.x < n) out[threadIdx.x] = 1.0f; }
extern "C" __global__ void bounded(float* out) __launch_bounds__(256);
extern "C" __global__ void bounded(float* out) { out[threadIdx.x] = 2.0f; }
extern "C" __global__ void big_shared(float* out, int n) {
  extern __shared__ float scratch[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) scratch[i] = float(i % 7);
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += scratch[i];
    out[0] = sum;
  }
}
extern "C" __global__ void fault(float* out) {
  float* wild = reinterpret_cast<float*>(0x10);
  *wild = out[0];
}
)";

std::vector<float> cpu_vector_add(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

}  // namespace

TEST_CASE("vector add runs end to end through the driver API and matches the CPU") {
  const Context& context = test_context();
  Module module = load_source(vector_add_source, "vector_add.cu");
  Kernel kernel = module.kernel("vector_add");
  for (int n : {1, 255, 1000, 4097, 1 << 20}) {
    const auto a = random_floats(static_cast<std::size_t>(n), 11u + static_cast<unsigned>(n));
    const auto b = random_floats(static_cast<std::size_t>(n), 97u + static_cast<unsigned>(n));
    DeviceBuffer<float> device_a(context, std::span<const float>(a));
    DeviceBuffer<float> device_b(context, std::span<const float>(b));
    DeviceBuffer<float> device_c(context, a.size());
    device_c.memory().fill_words(poison_word);
    kernel.launch({.grid = blocks_for(static_cast<unsigned>(n), 256), .block = 256}, device_a,
                  device_b, device_c, n);
    CHECK(device_c.download() == cpu_vector_add(a, b));
  }
}

TEST_CASE("constant and device symbols round trip and are read by a kernel") {
  struct Coefficients {
    float scale, offset;
    int unused;
  };
  Module module = load_source(constant_source, "constants.cu");
  Symbol<Coefficients> coefficients = module.symbol<Coefficients>("coefficients");
  Symbol<float> table = module.symbol<float>("table");
  Symbol<int> counter = module.symbol<int>("counter");
  CHECK(coefficients.bytes() == sizeof(Coefficients));
  CHECK(table.bytes() == 16 * sizeof(float));

  coefficients.set(Coefficients{2.5f, -1.0f, 7});
  const auto entries = random_floats(16, 5);
  table.set(std::span<const float>(entries));
  counter.set(0);
  const Coefficients read_back = coefficients.get();
  CHECK(read_back.scale == 2.5f);
  CHECK(read_back.offset == -1.0f);
  CHECK(read_back.unused == 7);
  std::vector<float> table_back(16);
  table.get(std::span<float>(table_back));
  CHECK(table_back == entries);

  const int n = 1000;
  const auto input = random_floats(n, 21);
  DeviceBuffer<float> device_in(test_context(), std::span<const float>(input));
  DeviceBuffer<float> device_out(test_context(), input.size());
  device_out.memory().fill_words(poison_word);
  module.kernel("affine").launch({.grid = blocks_for(n, 128), .block = 128}, device_in, device_out,
                                 n);
  const auto output = device_out.download();
  // The GPU may fuse the multiply-add; allow for that one rounding.
  for (int i = 0; i < n; ++i)
    REQUIRE(output[i] == doctest::Approx(2.5f * input[i] + -1.0f + entries[i % 16]).epsilon(1e-6));
  CHECK(counter.get() == 1);
}

TEST_CASE("a symbol copy of the wrong size names the symbol and both sizes") {
  Module module = load_source(constant_source, "constants.cu");
  Symbol<float> table = module.symbol<float>("table");
  const std::vector<float> too_short(15, 1.0f);
  CHECK_THROWS_WITH_AS(table.set(std::span<const float>(too_short)),
                       doctest::Contains("is 64 bytes, but 60 bytes were given to write"), Error);
  CHECK_THROWS_WITH_AS(module.symbol<double>("coefficients").get(),
                       doctest::Contains("is 12 bytes, but 8 bytes were asked for"), Error);
}

// The driver's refusal of a name makes this case fail a driver call on purpose: its name says so
// for scripts/sanitize_gpu_tests.py. An unknown symbol is bad_input_tests.cpp's.
TEST_CASE(
    "the driver refuses an unknown kernel name, and the error lists the module's entry "
    "points") {
  Module module = load_source(limits_source, "limits.cu");
  try {
    module.kernel("two_arg");
    FAIL("an unknown kernel name was accepted");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK(message.find("no kernel named 'two_arg' in module limits.cu") != std::string::npos);
    for (const char* entry : {"two_args", "bounded", "big_shared", "fault"})
      CHECK(message.find(entry) != std::string::npos);
    CHECK(error.kind() == ErrorKind::not_found);
  }
}

TEST_CASE("launch checks reject bad launches before the driver sees them") {
  Module module = load_source(limits_source, "limits.cu");
  Kernel two_args = module.kernel("two_args");
  DeviceBuffer<float> out(test_context(), 1024);

  SUBCASE("wrong argument count") {
    CHECK_THROWS_WITH_AS(two_args.launch({.grid = 1, .block = 32}, out),
                         doctest::Contains(": takes 2 argument(s), but 1 were given"), Error);
  }
  SUBCASE("wrong argument size") {
    CHECK_THROWS_WITH_AS(two_args.launch({.grid = 1, .block = 32}, out, 5.0),
                         doctest::Contains("argument 1 is 4 bytes in the kernel, but a 8-byte "
                                           "double was given"),
                         Error);
  }
  SUBCASE("2048-thread block") {
    CHECK_THROWS_WITH_AS(two_args.launch({.grid = 1, .block = {64, 32}}, out, 1),
                         doctest::Contains("block 64x32x1 = 2048 threads exceeds the kernel's "
                                           "max 1024 threads per block"),
                         Error);
  }
  SUBCASE("the kernel's own launch bounds") {
    CHECK_THROWS_WITH_AS(module.kernel("bounded").launch({.grid = 1, .block = 512}, out),
                         doctest::Contains("block 512x1x1 = 512 threads exceeds the kernel's max "
                                           "256 threads per block"),
                         Error);
  }
  SUBCASE("too much dynamic shared memory") {
    const auto& device = test_context().device().properties();
    const std::size_t too_much = device.shared_memory_per_block_optin + 4;
    CHECK_THROWS_WITH_AS(
        module.kernel("big_shared")
            .launch({.grid = 1, .block = 128, .dynamic_shared_bytes = too_much}, out, 4),
        doctest::Contains("bytes of dynamic shared memory exceed the"), Error);
  }
  SUBCASE("a rejected argument list stays rejected and a right one still runs") {
    CHECK_THROWS_AS(two_args.launch({.grid = 1, .block = 32}, out, 2.0f, 1), Error);
    CHECK_THROWS_AS(two_args.launch({.grid = 1, .block = 32}, out, 2.0f, 1), Error);
    out.memory().fill_words(poison_word);
    two_args.launch({.grid = 1, .block = 32}, out, 3);
    const auto values = out.download();
    CHECK(values[0] == 1.0f);
    CHECK(values[2] == 1.0f);
    CHECK(std::isnan(values[3]));
  }
}

TEST_CASE("dynamic shared memory over 48 KiB opts the kernel in automatically") {
  Module module = load_source(limits_source, "limits.cu");
  Kernel kernel = module.kernel("big_shared");
  const int count = 100 * 1024 / 4;  // 100 KiB of floats
  DeviceBuffer<float> out(test_context(), 1);
  out.memory().fill_words(poison_word);
  kernel.launch({.grid = 1, .block = 256, .dynamic_shared_bytes = count * sizeof(float)}, out,
                count);
  // Small integers, so that the float sum is exact whatever the order.
  double expected = 0;
  for (int i = 0; i < count; ++i) expected += i % 7;
  CHECK(out.download()[0] == expected);
  CHECK(kernel.attributes().max_dynamic_shared_bytes >= count * sizeof(float));
}

// The fault poisons this process's use of the device, so the case runs last-in-process only
// under CTest (one process per case); scripts/gpu-check.sh excludes it from whole-binary runs.
TEST_CASE("a faulting kernel is reported as a sticky error that names the way out") {
  const Device device = Device::get(0);
  Context faulty = Context::create(device);
  Module module = load_source(limits_source, "limits.cu", faulty);
  DeviceBuffer<float> out(faulty, 4);
  module.kernel("fault").launch({.grid = 1, .block = 1}, out);
  try {
    faulty.synchronize();
    FAIL("the faulting kernel was not reported");
  } catch (const Error& error) {
    CHECK(error.is_sticky());
    CHECK(error.kind() == ErrorKind::sticky);
    CHECK(error.code_name() == "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK(error.call() == "cuCtxSynchronize");
    CHECK(std::string(error.what()).find("sticky error: the context is now unusable") !=
          std::string::npos);
  }
  // Every later call in that context reports the same sticky error rather than doing work.
  CHECK_THROWS_WITH_AS(DeviceBuffer<float>(faulty, 4).download(),
                       doctest::Contains("CUDA_ERROR_ILLEGAL_ADDRESS"), Error);
}

TEST_CASE(
    "every ptxrt call leaves the caller's current context as it was, even when the driver refuses "
    "one") {
  const Device device = Device::get(0);
  Context mine = Context::create(device);
  ContextGuard application_context(mine);  // what the calling thread had current
  REQUIRE(current_context() == mine.handle());

  Module module = load_source(limits_source, "limits.cu");  // primary context, not mine
  CHECK(current_context() == mine.handle());
  DeviceBuffer<float> out(test_context(), 64);
  CHECK(current_context() == mine.handle());
  module.kernel("two_args").launch({.grid = 1, .block = 64}, out, 64);
  CHECK(current_context() == mine.handle());
  CHECK_THROWS_AS(module.kernel("two_args").launch({.grid = 1, .block = 2048}, out, 64), Error);
  CHECK(current_context() == mine.handle());
  CHECK_THROWS_AS(module.kernel("missing"), Error);
  CHECK(current_context() == mine.handle());
  {
    ContextGuard inner(test_context());
    CHECK(current_context() == test_context().handle());
    CHECK_THROWS_AS(out.upload(std::vector<float>(65)), Error);
    CHECK(current_context() == test_context().handle());
  }
  CHECK(current_context() == mine.handle());
  test_context().synchronize();
  CHECK(current_context() == mine.handle());
}

TEST_CASE("a context the application created with the driver itself works through borrow") {
  // The application side: it opens the driver on its own, as a program using it directly would.
  void* library = dlopen("libcuda.so.1", RTLD_NOW);
  REQUIRE(library != nullptr);
  using CreateFunction = CUresult (*)(CUcontext*, CUctxCreateParams*, unsigned, CUdevice);
  using ContextFunction = CUresult (*)(CUcontext);
  using PopFunction = CUresult (*)(CUcontext*);
  auto create = reinterpret_cast<CreateFunction>(dlsym(library, "cuCtxCreate_v4"));
  auto destroy = reinterpret_cast<ContextFunction>(dlsym(library, "cuCtxDestroy_v2"));
  auto pop = reinterpret_cast<PopFunction>(dlsym(library, "cuCtxPopCurrent_v2"));
  REQUIRE((create && destroy && pop));
  const Device device = Device::get(0);
  CUcontext own = nullptr;
  REQUIRE(create(&own, nullptr, 0, device.handle()) == CUDA_SUCCESS);
  CHECK(current_context() == own);  // cuCtxCreate made it current, as the application expects
  {
    Context borrowed = Context::borrow(own, device);
    Module module = load_source(vector_add_source, "vector_add.cu", borrowed);
    const int n = 777;
    const auto a = random_floats(n, 3), b = random_floats(n, 4);
    DeviceBuffer<float> da(borrowed, std::span<const float>(a)),
        db(borrowed, std::span<const float>(b));
    DeviceBuffer<float> dc(borrowed, a.size());
    dc.memory().fill_words(poison_word);
    module.kernel("vector_add").launch({.grid = blocks_for(n, 128), .block = 128}, da, db, dc, n);
    CHECK(dc.download() == cpu_vector_add(a, b));
    CHECK(current_context() == own);
    // The application is about to destroy its context: nothing of ptxrt's may outlive it.
    ptxrt::testing::test_jit().forget(borrowed);
  }
  CUcontext popped = nullptr;
  CHECK(pop(&popped) == CUDA_SUCCESS);
  CHECK(popped == own);
  CHECK(destroy(own) == CUDA_SUCCESS);  // borrow never destroyed it: the application does
}

TEST_CASE("two host threads launching on one module concurrently get correct results") {
  Module module = load_source(vector_add_source, "vector_add.cu");
  Kernel kernel = module.kernel("vector_add");
  auto work = [&](unsigned seed, bool& correct) {
    Stream stream(test_context());
    correct = true;
    for (int round = 0; round < 50; ++round) {
      const int n = 10000 + round * 37 + static_cast<int>(seed);
      const auto a = random_floats(n, seed * 1000 + round), b = random_floats(n, seed * 7 + round);
      DeviceBuffer<float> da(test_context(), std::span<const float>(a));
      DeviceBuffer<float> db(test_context(), std::span<const float>(b));
      DeviceBuffer<float> dc(test_context(), a.size());
      dc.memory().fill_words(poison_word, stream.handle());
      kernel.launch({.grid = blocks_for(n, 256), .block = 256, .stream = stream.handle()}, da, db,
                    dc, n);
      std::vector<float> c(a.size());
      dc.download_async(std::span<float>(c), stream.handle());
      stream.synchronize();
      correct = correct && c == cpu_vector_add(a, b);
    }
  };
  bool first = false, second = false;
  std::thread one(work, 1u, std::ref(first)), two(work, 2u, std::ref(second));
  one.join();
  two.join();
  CHECK(first);
  CHECK(second);
}

TEST_CASE("device properties describe a real GPU and events time work") {
  const DeviceProperties& p = test_context().device().properties();
  CHECK(p.cc_major >= 7);
  CHECK(p.sm_count > 0);
  CHECK(p.warp_size == 32);
  CHECK(p.max_threads_per_block == 1024);
  CHECK(p.shared_memory_per_block == 48 * 1024);
  CHECK(p.shared_memory_per_block_optin > p.shared_memory_per_block);
  CHECK(p.theoretical_bandwidth_gb_per_s() > 100.0);
  // NVML's form: 8 hex digits of domain, 2 of bus and 2 of device, function 0.
  CHECK(std::regex_match(p.pci_bus_id, std::regex("[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\\.0")));
  CHECK(format_properties(p).find(p.name) != std::string::npos);
  MESSAGE(format_properties(p));

  Module module = load_source(vector_add_source, "vector_add.cu");
  const int n = 1 << 24;
  DeviceBuffer<float> a(test_context(), n), b(test_context(), n), c(test_context(), n);
  a.fill_bytes(0);
  b.fill_bytes(0);
  Stream stream(test_context());
  Event start(test_context()), stop(test_context());
  // The events' interval lies inside the host's: a bound in the right unit that no slow
  // machine (or compute-sanitizer) can break.
  const auto host_start = std::chrono::steady_clock::now();
  start.record(stream);
  module.kernel("vector_add")
      .launch({.grid = blocks_for(n, 256), .block = 256, .stream = stream.handle()}, a, b, c, n);
  stop.record(stream);
  stop.synchronize();
  const double host_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start)
          .count();
  const float milliseconds = Event::elapsed_ms(start, stop);
  CHECK(milliseconds > 0.0f);
  CHECK(milliseconds <= host_milliseconds);
}
