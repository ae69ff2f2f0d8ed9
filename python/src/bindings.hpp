// The extension module's parts, one file each, and what they share: how Python values become the
// runtime's (contexts, streams, compile options, launch shapes).
#pragma once

#include <nanobind/nanobind.h>

#include <string_view>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/core/stream_ref.hpp"

namespace ptxrt::python {

namespace nb = nanobind;

void bind_errors(nb::module_& module);
void bind_devices(nb::module_& module);  // devices, contexts, streams, events, graphs, memory
void bind_compile(nb::module_& module);  // programs, images, reports, the JIT, modules, symbols
void bind_kernels(nb::module_& module);  // kernels and their launches
void bind_tuner(nb::module_& module);    // problems, plans, tunes, tuned kernels

// `context` as a Context: a ptxrt.Context, or None for device 0's primary context.
Context context_or_primary(nb::handle context);

// `stream` as the runtime takes one: None (the context's default stream), a ptxrt.Stream, an
// object with __cuda_stream__ (cuda.core's protocol), a CuPy stream (.ptr), a PyTorch stream
// (.cuda_stream), or a CUstream handle as an int.
StreamRef stream_from(nb::handle stream);

// A grid, block or cluster: an int or a tuple of 1 to 3 ints, each from 1 to 2^32-1; `what` names
// it in the error.
Dim3 dim3_from(nb::handle value, std::string_view what);

// CompileOptions from the keyword arguments every compiling call takes: the defines as a dict
// ({"TILE": 16, "FAST": True, "NAME": None}: True and False are 1 and 0, None a bare -DNAME) or
// a list of "NAME=VALUE" strings. An empty `arch` leaves
// the target unset (the context's device decides).
CompileOptions compile_options_from(nb::handle defines, const std::vector<std::string>& options,
                                    const std::vector<std::string>& include_paths,
                                    const std::vector<std::string>& name_expressions,
                                    std::string_view arch, std::string_view format);

// Launches `kernel` as `config` says with `arguments` (a tuple or list of Python values, packed
// by the kernel's parameter layout: Kernel.launch's doc says how), the GIL released meanwhile.
void launch_with(const Kernel& kernel, const LaunchConfig& config, nb::handle arguments);

// A kernel's resources and an occupancy as dicts, their fields named as in C++.
nb::dict resources_dict(const KernelResources& resources);
nb::dict occupancy_dict(const Occupancy& occupancy, int block_threads,
                        std::size_t dynamic_shared_bytes);

}  // namespace ptxrt::python
