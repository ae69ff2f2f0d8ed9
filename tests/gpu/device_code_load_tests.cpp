// Images from outside given to the driver's loader: a damaged CUBIN or fatbin is refused by the
// device-code check, naming it, before cuModuleLoadDataEx or cuLibraryLoadData reads a byte; the
// intact image loads. tests/cpu/device_code_tests.cpp checks each rule without a GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "apps/common/builtin_kernels.hpp"
#include "error_checks.hpp"
#include "gpu_fixture.hpp"

using namespace ptxrt;
using ptxrt::testing::check_error;
using ptxrt::testing::test_context;

namespace {

Image builtin_for_device(ImageFormat format) {
  const DeviceProperties& device = test_context().device().properties();
  const std::string sm = std::to_string(device.cc_major * 10 + device.cc_minor);
  CompileOptions options;
  options.target = format == ImageFormat::fatbin ? Target{"sm_" + sm + ",compute_" + sm, format, {}}
                                                 : Target{"sm_" + sm, format, {}};
  return compile(apps::builtin_program("vector_add"), options);
}

}  // namespace

TEST_CASE(
    "Module::load and Library::load refuse a cut or overwritten CUBIN naming it, and load "
    "it intact") {
  const Image cubin = builtin_for_device(ImageFormat::cubin);
  check_error(
      [&] {
        Module::load(test_context(), std::string_view(cubin.data).substr(0, 64), {}, "cut.cubin");
      },
      ErrorKind::invalid_argument, "cut.cubin: malformed CUBIN: ");
  std::string shifted = cubin.data;
  const std::uint64_t past_the_end = shifted.size();
  std::memcpy(shifted.data() + 0x28, &past_the_end, sizeof past_the_end);  // e_shoff
  check_error([&] { Module::load(test_context(), std::string_view(shifted), {}, "shifted.cubin"); },
              ErrorKind::invalid_argument, "shifted.cubin: malformed CUBIN: section header table");
  Image damaged = cubin;
  damaged.data = shifted;
  check_error([&] { Library::load(damaged); }, ErrorKind::invalid_argument,
              "malformed CUBIN: section header table");
  CHECK_NOTHROW(Module::load(test_context(), cubin).kernel("vector_add"));
}

TEST_CASE("the loader refuses LTO-IR, which only the device linker takes, naming the image") {
  const Image ltoir = builtin_for_device(ImageFormat::ltoir);
  check_error([&] { Module::load(test_context(), std::string_view(ltoir.data), {}, "k.ltoir"); },
              ErrorKind::invalid_argument, "k.ltoir cannot be loaded: it is LTO-IR");
}

TEST_CASE("Module::load of 200 mutants of a CUBIN and a fatbin loads each or throws Error") {
  for (const ImageFormat format : {ImageFormat::cubin, ImageFormat::fatbin}) {
    const std::string image = builtin_for_device(format).data;
    std::mt19937 random(7);
    std::size_t refused = 0;
    for (int index = 0; index < 200; ++index) {
      std::string mutant = image;
      if (index % 4 == 0) {
        mutant.resize(random() % image.size());
      } else {
        for (unsigned count = 1 + random() % 4; count > 0; --count)
          mutant[random() % image.size()] = static_cast<char>(random());
      }
      CAPTURE(index);
      try {
        Module::load(test_context(), std::string_view(mutant), {}, "mutant");
      } catch (const Error&) {
        ++refused;
      }
    }
    CHECK(refused > 0);
  }
}
