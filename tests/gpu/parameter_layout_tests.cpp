// Parameter layouts on a real GPU: the layout ptxrt reads from each kind of image (CUBIN, PTX, a
// fatbin's bytes, a Library) equals the host compiler's
// (tests/support/parameter_layout_kernels.hpp) and the driver's own cuFuncGetParamInfo for every
// parameter index that exists, and launches of kernels with every parameter shape deliver every
// argument. No driver call here fails: the module stays clean under compute-sanitizer with API
// errors reported.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "parameter_layout_kernels.hpp"
#include "ptxrt/core/library.hpp"

using namespace ptxrt;
using namespace ptxrt::testing::layouts;
using ptxrt::testing::poison_word;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

using KernelSource = std::function<Kernel(const std::string& name)>;

CompileOptions layout_options(ImageFormat format) {
  CompileOptions options{.name_expressions = {template_expression}};
  options.target.format = format;
  return Jit::target_for(options, test_context());
}

const Program& layout_program() {
  static const Program program = Program::from_string(source, "layouts.cu");
  return program;
}

// The driver's layout of `kernel`, asked only for the `count` indices the host's parameter list
// says exist: asking past the end would fail, which compute-sanitizer reports.
std::vector<ParameterInfo> driver_layout(const Kernel& kernel, std::size_t count) {
  using GetParamInfo = CUresult (*)(CUfunction, std::size_t, std::size_t*, std::size_t*);
  void* const driver = dlopen("libcuda.so.1", RTLD_NOW);
  REQUIRE(driver != nullptr);
  void* const entry = dlsym(driver, "cuFuncGetParamInfo");
  REQUIRE(entry != nullptr);
  const auto get_param_info = reinterpret_cast<GetParamInfo>(entry);
  std::vector<ParameterInfo> layout(count);
  for (std::size_t index = 0; index < layout.size(); ++index)
    REQUIRE(get_param_info(kernel.handle(), index, &layout[index].offset, &layout[index].bytes) ==
            CUDA_SUCCESS);
  dlclose(driver);
  return layout;
}

void check_layouts(const KernelSource& kernel_named) {
  for (const ExpectedEntry& expected : expected_entries()) {
    CAPTURE(expected.name);
    const Kernel kernel = kernel_named(expected.name);
    REQUIRE(kernel.has_parameter_layout());
    CHECK(kernel.parameters() == expected.parameters);
    CHECK(driver_layout(kernel, expected.parameters.size()) == expected.parameters);
  }
}

// Launches every kernel once with fresh random arguments and compares what each wrote with the
// arguments it was given. A kernel without a layout (arguments unchecked) must behave the same.
void check_launches(const KernelSource& kernel_named) {
  const std::uint64_t seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 random(seed);
  auto small = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  // Eighths: exact in a float, and not all integers.
  auto eighths = [&](int low, int high) { return static_cast<float>(small(low, high)) / 8.0f; };
  const Context& context = test_context();
  DeviceBuffer<float> out(context, many_outputs);
  const LaunchConfig single{.grid = 1, .block = 1};

  kernel_named("none").launch(single);

  out.memory().fill_words(poison_word);
  kernel_named("one").launch(single, out);
  CHECK(out.download()[0] == 42.0f);

  const int n = small(-100000, 100000);
  const char c = static_cast<char>(small(-100, 100));
  const double d = small(-5000, 5000) / 4.0;
  const short s = static_cast<short>(small(-30000, 30000));
  const float4 v{eighths(-99, 99), eighths(-99, 99), eighths(-99, 99), eighths(-99, 99)};
  const Padded padded{static_cast<char>(small(-100, 100)), small(-5000, 5000) / 2.0};
  const Odd odd{{static_cast<char>(small(-100, 100)), static_cast<char>(small(-100, 100)),
                 static_cast<char>(small(-100, 100))}};
  const unsigned long long u = static_cast<unsigned long long>(small(0, 1 << 23));
  out.memory().fill_words(poison_word);
  kernel_named("many").launch(single, out, n, c, d, s, v, padded, odd, u);
  CHECK(out.download() == std::vector<float>{float(n), float(c), float(d), float(s), v.x, v.y, v.z,
                                             v.w, float(padded.c), float(padded.d),
                                             float(odd.bytes[0]), float(odd.bytes[1]),
                                             float(odd.bytes[2]), float(u)});

  Wide wide{};
  for (float& value : wide.values) value = eighths(-1000, 1000);
  out.memory().fill_words(poison_word);
  kernel_named("wide").launch(single, c, wide, out);
  const std::vector<float> wide_out = out.download();
  CHECK(wide_out[0] == float(c));
  CHECK(wide_out[1] == wide.values[0]);
  CHECK(wide_out[2] == wide.values[4999]);

  const int count = 37;
  const double factor = small(-1000, 1000) / 8.0;
  DeviceBuffer<double> scaled(context, count);
  scaled.memory().fill_words(poison_word);
  kernel_named(template_expression).launch(single, scaled, factor, count);
  const std::vector<double> scaled_out = scaled.download();
  for (int i = 0; i < count; ++i) CHECK(scaled_out[static_cast<std::size_t>(i)] == factor * i);
}

KernelSource from(const Module& module) {
  return [module](const std::string& name) { return module.kernel(name); };
}

// For what knows no name expressions (a Library, a module loaded from bytes): the template
// kernel by the symbol `image` lowered it to.
KernelSource by_symbol(const Image& image, std::function<Kernel(const std::string&)> kernel) {
  return [&image, kernel = std::move(kernel)](const std::string& name) {
    return kernel(entry_symbol(image, name));
  };
}

void check_none_ran(const Module& module) {
  Symbol<int> none_ran = module.symbol<int>("none_ran");
  none_ran.set(0);
  module.kernel("none").launch({.grid = 1, .block = 1});
  CHECK(none_ran.get() == 1);
}

}  // namespace

TEST_CASE(
    "a CUBIN module's kernels of every parameter shape have the driver's layout and get "
    "every argument") {
  const Module module =
      test_jit().module(layout_program(), layout_options(ImageFormat::cubin), test_context());
  check_layouts(from(module));
  check_launches(from(module));
  check_none_ran(module);
}

TEST_CASE(
    "a PTX module's kernels of every parameter shape have the driver's layout and get "
    "every argument") {
  const Module module =
      Module::load(test_context(), compile(layout_program(), layout_options(ImageFormat::ptx)));
  check_layouts(from(module));
  check_launches(from(module));
}

TEST_CASE(
    "a module loaded from a CUBIN's bytes alone has the driver's layouts and gets every "
    "argument") {
  const Image cubin = compile(layout_program(), layout_options(ImageFormat::cubin));
  const KernelSource kernel_named =
      by_symbol(cubin, from(Module::load(test_context(), std::string_view(cubin.data))));
  check_layouts(kernel_named);
  check_launches(kernel_named);
}

TEST_CASE(
    "a library's kernels of every parameter shape have the driver's layout and get every "
    "argument") {
  const Image cubin = compile(layout_program(), layout_options(ImageFormat::cubin));
  const Library library = Library::load(cubin);
  const KernelSource kernel_named = by_symbol(
      cubin, [&library](const std::string& name) { return library.kernel(name, test_context()); });
  check_layouts(kernel_named);
  check_launches(kernel_named);
}

TEST_CASE(
    "a fatbin's bytes give its CUBIN's layouts, and with every member compressed the "
    "launches still work, unchecked") {
  const Image cubin = compile(layout_program(), layout_options(ImageFormat::cubin));
  const Image ptx = compile(layout_program(), layout_options(ImageFormat::ptx));
  const KernelSource kernel_named = by_symbol(
      cubin, from(Module::load(test_context(), std::string_view(make_fatbin(cubin, ptx)))));
  check_layouts(kernel_named);
  check_launches(kernel_named);
  const KernelSource compressed = by_symbol(
      cubin, from(Module::load(test_context(),
                               std::string_view(make_fatbin(cubin, ptx, "--compress-all")))));
  CHECK_FALSE(compressed("many").has_parameter_layout());
  check_launches(compressed);
}
