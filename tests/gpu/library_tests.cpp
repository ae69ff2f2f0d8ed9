// Context-independent loading on a real GPU: one Library loaded once and run in the primary
// context, a created context, a context the application made itself, and every device of the
// same arch; single flight through Jit::library; the same launch checks as a Module's kernels.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <thread>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/reference.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/core/library.hpp"

using namespace ptxrt;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;

namespace {

Jit memory_only_jit() {
  JitOptions options;
  options.cache_directory.clear();
  return Jit(options);
}

const Program& vector_add_program() {
  static const Program program = apps::builtin_program("vector_add");
  return program;
}

// c = a + b through `kernel` in its own context, compared bit for bit with the CPU.
void check_vector_add(const Kernel& kernel, unsigned seed) {
  const Context& context = kernel.context();
  const long long n = 3001;
  const auto a = random_floats(n, seed), b = random_floats(n, seed + 1);
  DeviceBuffer<float> da(context, std::span<const float>(a));
  DeviceBuffer<float> db(context, std::span<const float>(b));
  DeviceBuffer<float> dc(context, a.size());
  dc.memory().fill_words(poison_word);
  kernel.launch({.grid = blocks_for(n, 256), .block = 256}, da, db, dc, n);
  CHECK(dc.download() == apps::vector_add(a, b));
}

// Every device that can run device 0's image: same compute capability.
std::vector<Context> primary_contexts_of_device_0_arch() {
  const std::string arch = test_context().device().properties().arch();
  std::vector<Context> contexts;
  for (int ordinal = 0; ordinal < Device::count(); ++ordinal)
    if (Device::get(ordinal).properties().arch() == arch)
      contexts.push_back(Context::primary(ordinal));
  return contexts;
}

Library tiled_matmul_library() {
  return Library::load(
      compile(apps::builtin_program("matmul_tiled"),
              Jit::target_for({.defines = {{"TILE_WIDTH", "16"}}}, test_context())));
}

}  // namespace

TEST_CASE("one library, loaded once, runs in a primary, a created and every same-arch context") {
  Jit jit = memory_only_jit();
  const CompileOptions options = Jit::target_for({}, test_context());
  const Library library = jit.library(vector_add_program(), options);
  MESSAGE("context-independent loading: "
          << (Library::context_independent_loading() ? "yes (cuLibraryLoadData)"
                                                      : "no (a module per context)"));
  CHECK((library.handle() != nullptr) == Library::context_independent_loading());

  std::vector<Context> contexts = primary_contexts_of_device_0_arch();
  contexts.push_back(Context::create(test_context().device()));
  unsigned seed = 10;
  for (const Context& context : contexts) {
    INFO("device " << context.device().ordinal() << (context.is_primary() ? " primary" : " created"));
    const Kernel kernel = jit.library(vector_add_program(), options).kernel("vector_add", context);
    CHECK(kernel.context() == context);
    CHECK(kernel.describe() == "kernel 'vector_add' of " + library.label());
    check_vector_add(kernel, seed += 2);
  }
  const JitStats stats = jit.stats();
  CHECK(stats.compiles == 1);
  CHECK(stats.library_loads == 1);
  CHECK(stats.library_hits == contexts.size());
  CHECK(stats.module_loads == 0);
}

TEST_CASE("a library's kernel is made once per context and shared") {
  const Library library = Library::load(
      compile(vector_add_program(), Jit::target_for({}, test_context())));
  const Context created = Context::create(test_context().device());
  const Kernel first = library.kernel("vector_add", test_context());
  CHECK(library.kernel("vector_add", test_context()).handle() == first.handle());
  const Kernel other = library.kernel("vector_add", created);
  CHECK(other.handle() != first.handle());
  CHECK(other.context() == created);
}

TEST_CASE("sixteen threads asking for one library compile and load it once") {
  Jit jit = memory_only_jit();
  const Program program = apps::builtin_program("matmul_tiled");
  const CompileOptions options =
      Jit::target_for({.defines = {{"TILE_WIDTH", "8"}}}, test_context());
  std::vector<std::thread> threads;
  std::vector<CUfunction> functions(16);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      functions[i] = jit.library(program, options).kernel("matmul_tiled", test_context()).handle();
    });
  for (std::thread& thread : threads) thread.join();
  for (CUfunction function : functions) CHECK(function == functions[0]);
  const JitStats stats = jit.stats();
  CHECK(stats.compiles == 1);
  CHECK(stats.library_loads == 1);
  CHECK(stats.library_hits == 15);
}

TEST_CASE("a library kernel gets the launch checks of a module kernel") {
  const Library library = tiled_matmul_library();
  const Kernel kernel = library.kernel("matmul_tiled", test_context());
  DeviceBuffer<float> matrix(test_context(), 32 * 32);
  const int size = 32;
  CHECK_THROWS_WITH_AS(kernel.launch({.grid = {2, 2}, .block = {32, 32}}, matrix, matrix, matrix,
                                     size, size, size),
                       doctest::Contains("1024 threads exceeds the kernel's max 256"), Error);
  REQUIRE(kernel.has_parameter_layout());
  CHECK_THROWS_WITH_AS(
      kernel.launch({.grid = {2, 2}, .block = {16, 16}}, matrix, matrix, matrix, size, size),
      doctest::Contains("takes 6 argument(s), but 5 were given"), Error);
}

TEST_CASE(
    "the driver refuses an unknown kernel name in a library, and the error names the "
    "library") {
  const Library library = tiled_matmul_library();
  // "in library <label>", or "in module <label>" where the driver loads a module per context.
  CHECK_THROWS_WITH_AS(library.kernel("no_such_kernel", test_context()),
                       doctest::Contains("no kernel named 'no_such_kernel' in"), Error);
  CHECK_THROWS_WITH_AS(library.kernel("no_such_kernel", test_context()),
                       doctest::Contains(library.label().c_str()), Error);
}

TEST_CASE("a library runs in a context the application made, and forget lets it destroy it") {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW);
  REQUIRE(driver != nullptr);
  using CreateFunction = CUresult (*)(CUcontext*, CUctxCreateParams*, unsigned, CUdevice);
  using ContextFunction = CUresult (*)(CUcontext);
  using PopFunction = CUresult (*)(CUcontext*);
  auto create = reinterpret_cast<CreateFunction>(dlsym(driver, "cuCtxCreate_v4"));
  auto destroy = reinterpret_cast<ContextFunction>(dlsym(driver, "cuCtxDestroy_v2"));
  auto pop = reinterpret_cast<PopFunction>(dlsym(driver, "cuCtxPopCurrent_v2"));
  REQUIRE((create && destroy && pop));
  Jit jit = memory_only_jit();
  const CompileOptions options = Jit::target_for({}, test_context());
  const Device device = Device::get(0);
  CUcontext own = nullptr;
  REQUIRE(create(&own, nullptr, 0, device.handle()) == CUDA_SUCCESS);
  {
    const Context borrowed = Context::borrow(own, device);
    check_vector_add(jit.library(vector_add_program(), options).kernel("vector_add", borrowed), 40);
    CHECK(current_context() == own);
    jit.forget(borrowed);
  }
  CUcontext popped = nullptr;
  CHECK(pop(&popped) == CUDA_SUCCESS);
  CHECK(popped == own);
  CHECK(destroy(own) == CUDA_SUCCESS);
  // The library outlives the application's context and still serves others.
  check_vector_add(jit.library(vector_add_program(), options).kernel("vector_add", test_context()),
                   50);
}
