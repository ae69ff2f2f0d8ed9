#include "ptxrt/core/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace ptxrt {

std::string demangle(std::string_view symbol) {
  // Only function symbols: __cxa_demangle also reads bare type codes, and would turn an extern "C"
  // kernel named "f" into "float".
  if (!symbol.starts_with("_Z")) return std::string(symbol);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(std::string(symbol).c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(symbol);
}

}  // namespace ptxrt
