#include "gpu_fixture.hpp"

#include <nvrtc.h>

#include <memory>
#include <string>

namespace ptxrt::testing {

const Context& test_context() {
  static const Context context = Context::primary(0);
  return context;
}

std::string compile_ptx(std::string_view source, std::string_view name) {
  const std::string text(source), program_name(name);
  nvrtcProgram program = nullptr;
  check(nvrtcCreateProgram(&program, text.c_str(), program_name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owner(&program, [](nvrtcProgram* p) {
    nvrtcDestroyProgram(p);
  });
  const DeviceProperties& device = test_context().device().properties();
  const std::string arch = "--gpu-architecture=compute_" + std::to_string(device.cc_major) +
                           std::to_string(device.cc_minor);
  const char* options[] = {arch.c_str(), "--std=c++17"};
  if (nvrtcCompileProgram(program, 2, options) != NVRTC_SUCCESS) {
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    throw Error(ErrorKind::compile, "test kernel " + program_name + " failed to compile:\n" + log);
  }
  std::size_t size = 0;
  check(nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");
  std::string ptx(size, '\0');
  check(nvrtcGetPTX(program, ptx.data()), "nvrtcGetPTX");
  return ptx;
}

Module load_source(std::string_view source, std::string_view name) {
  return load_source(source, name, test_context());
}

Module load_source(std::string_view source, std::string_view name, const Context& context) {
  return Module::load(context, compile_ptx(source, name), {}, std::string(name));
}

}  // namespace ptxrt::testing
