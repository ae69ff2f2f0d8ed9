// Where each parameter of a kernel sits in its parameter buffer, read from the image that holds the
// kernel: the layout a launch checks its arguments against. Reading needs no driver (and no GPU):
// the driver can tell a function's parameters only one index at a time, with no count, so asking
// it would mean asking past the end and getting an error back for every kernel.
// Free functions on plain values; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API ParameterInfo {
  std::size_t offset = 0;  // from the start of the parameter buffer
  std::size_t bytes = 0;
  bool operator==(const ParameterInfo&) const = default;
};

struct PTXRT_API EntryParameters {
  std::string name;  // the entry symbol, mangled for C++ kernels ("_Z6kernelPf")
  std::vector<ParameterInfo> parameters;
};

// Every entry point's parameters, in the image's order of entries:
//  - a CUBIN: the records ptxas writes into .nv.info.<kernel> (EIATTR_KPARAM_INFO, or
//    EIATTR_KPARAM_INFO_V2 in kernels with a parameter of 16 KiB or more);
//  - PTX text: each .entry's parameter list, laid out as the PTX ABI lays it out (each parameter
//    at the next multiple of its alignment: its .align, else its type's size);
//  - a fatbin: its first CUBIN member.
// nullopt for a fatbin without an uncompressed CUBIN member: only the driver knows that layout.
// Throws Error (invalid_argument) naming the defect when a CUBIN or PTX is malformed or holds a
// parameter type PTX kernels do not take; never reads outside `image`.
PTXRT_API std::optional<std::vector<EntryParameters>> read_parameter_layouts(
    std::string_view image);

}  // namespace ptxrt
