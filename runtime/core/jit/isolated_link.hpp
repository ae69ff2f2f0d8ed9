// Internal: a link run by nvJitLink in a child process (CompileOptions::isolated_link). Past its
// header LTO-IR is NVIDIA's encoded IR, which only nvJitLink reads and check_device_code cannot
// hold to anything: a damaged one can crash nvJitLink, abort it, hang it or make it print
// "LLVM ERROR" and exit. In a child process that costs the child, and the link ends in one Error.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "jit/link.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt::detail {

// Links `request` in a child started as `command` and answering as serve_isolated_link() does,
// killed once `limit` has passed. Returns its result, or throws the Error its link threw. When
// it ends without an answer (a signal, a hang, "LLVM ERROR") throws Error (invalid_argument)
// naming the caller's inputs that nvJitLink reads past ptxrt's checks: "b.ltoir: damaged LTO-IR:
// nvJitLink crashed linking it (SIGSEGV)". Error (io) when the child cannot be started.
// Exported for the tests, which start stand-ins that crash, hang or print "LLVM ERROR".
PTXRT_API LinkResult link_in_child_process(const LinkRequest& request,
                                 const std::vector<std::string>& command,
                                 std::chrono::milliseconds limit);

// This executable, started so that serve_isolated_link() answers.
std::vector<std::string> isolated_link_command();

}  // namespace ptxrt::detail
