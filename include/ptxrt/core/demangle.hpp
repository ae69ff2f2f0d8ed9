// Kernel names as they were written: the symbol "_Z18convolution_kernelPfS_S_" of a kernel with
// C++ linkage reads "convolution_kernel(float*, float*, float*)". Every report and message that
// names a module's kernels shows them this way, the symbol beside where a caller needs it (to
// ask Module::kernel for it, or in JSON). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "ptxrt/export.hpp"

namespace ptxrt {

// The demangled name of a C++ (Itanium ABI, "_Z...") symbol; any other symbol (extern "C") or
// one that does not demangle comes back as it is.
PTXRT_API std::string demangle(std::string_view symbol);

}  // namespace ptxrt
