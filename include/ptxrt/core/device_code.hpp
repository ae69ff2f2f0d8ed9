// Device code from outside the process (a file given to link with, an image given to load)
// recognised by its content and checked whole before a toolkit library reads it: nvJitLink and
// the driver's loader assume well-formed input and crash, hang or link garbage on damaged input.
// The check reads every container ptxrt knows (ELF, fatbin, ar archive, LTO-IR headers) the way
// LLVM's object readers do: every size, offset and index against the bytes that hold it, before
// anything is read through it. Pure functions on bytes; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt {

// What a prebuilt input to the device linker is, recognised from its content (never only from
// its file name): each maps to one NVJITLINK_INPUT_* kind.
enum class DeviceObjectKind {
  cubin,    // a CUDA ELF (nvcc -cubin, or relocatable from nvcc -dc -cubin)
  ptx,      // PTX text
  ltoir,    // NVVM IR for link-time optimisation (nvcc -dlto -dc, NVRTC -dlto)
  fatbin,   // a fatbin (nvcc -fatbin, nvFatbin)
  object,   // a host object holding device code (nvcc -dc)
  library,  // a static library of such objects (nvcc -lib, ar)
};
PTXRT_API std::string_view to_string(DeviceObjectKind kind);

// Who reads the device code next, which decides the kinds it may be: the device linker
// (nvJitLink) takes every kind; the driver's loader takes a CUBIN, PTX or a fatbin.
enum class DeviceCodeReader { linker, loader };

// What the check found.
struct PTXRT_API DeviceCode {
  DeviceObjectKind kind = DeviceObjectKind::cubin;
  // Each architecture it holds code for, once, in file order: "sm_90" for a CUBIN (from its ELF
  // header), "compute_90" for PTX (from its .target); a fatbin's entries and those of the fatbins
  // in an object or library count. None for LTO-IR, whose target NVIDIA does not document.
  std::vector<std::string> architectures;
  // Each CUBIN in it that a linker reads as it is: itself, or the uncompressed CUBIN entries of
  // its fatbins (those of a library's members too). Views into the bytes checked.
  std::vector<std::string_view> cubins;
};

// Recognises `bytes` and checks all of it: an ELF file's header, program and section tables,
// sections, string, symbol and relocation tables, notes and .nv.info records; a fatbin's header
// and entries, and each entry's payload (a CUBIN as above, PTX that ends, LTO-IR's header, the
// sizes a compressed one declares); a host object's device-code sections; a static library's
// member headers, symbol table, names, and each member as above; LTO-IR as NVRTC and nvcc -dlto
// write it (and LLVM bitcode, bare or wrapped); PTX. Throws Error (invalid_argument) whose
// message starts with `name` and says where and what is wrong ("libfoo.a: member bar.o: ...:
// section 12 (.nv.info) at offset 40960 + 812 bytes runs past the end (41000 bytes)"), or that
// the bytes are no kind `reader` takes.
PTXRT_API DeviceCode check_device_code(std::string_view bytes, std::string_view name,
                                       DeviceCodeReader reader);

}  // namespace ptxrt
