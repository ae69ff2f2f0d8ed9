#include "gpu_fixture.hpp"

#include <cstdlib>

#include "ptxrt/core/jit.hpp"

namespace ptxrt::testing {

const Context& test_context() {
  static const Context context = Context::primary(0);
  return context;
}

Jit& test_jit() {
  static Jit jit([] {
    JitOptions options;
    options.cache_directory.clear();  // memory only: tests leave no files behind
    return options;
  }());
  return jit;
}

bool under_compute_sanitizer() {
  static const bool sanitized = std::getenv("PTXRT_UNDER_COMPUTE_SANITIZER") != nullptr;
  return sanitized;
}

std::string compile_ptx(std::string_view source, std::string_view name) {
  CompileOptions options;
  options.target.format = ImageFormat::ptx;
  options = Jit::target_for(options, test_context());
  return compile(Program::from_string(std::string(source), std::string(name)), options).data;
}

Module load_source(std::string_view source, std::string_view name) {
  return load_source(source, name, test_context());
}

Module load_source(std::string_view source, std::string_view name, const Context& context) {
  return test_jit().module(Program::from_string(std::string(source), std::string(name)), {},
                           context);
}

}  // namespace ptxrt::testing
