// LTO-IR read by nvJitLink in a child process before `ptxrt compile` and `ptxrt resources` link
// it: past its header LTO-IR is NVIDIA's encoded IR, which only nvJitLink reads, and a damaged
// one can crash it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "ptxrt/core/program.hpp"

namespace ptxrt::cli {

// With `lto`, each distinct device object of `program` that may hold LTO-IR (LTO-IR, a fatbin, an
// object or a library) is first parsed by nvJitLink in a child process of this executable (the
// hidden command add_ltoir_reader_command registers), for the first architecture of
// `arch_list`. Throws Error (invalid_argument) "x.ltoir: damaged LTO-IR: nvJitLink crashed
// reading it (SIGSEGV)" when the child dies by a signal, prints "LLVM ERROR" or runs past a
// minute; a link error there is no damage. Error (io) when the child cannot be started.
void read_ltoir_apart(const Program& program, const std::string& arch_list, bool lto);

void add_ltoir_reader_command(CLI::App& app);

}  // namespace ptxrt::cli
