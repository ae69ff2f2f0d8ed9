// A child process spoken to in lines: posix_spawn (no shell) with its stdin and stdout joined to
// one socket of ours, stderr shared with ours. The tuner's worker runs behind one, so that a
// config that faults the GPU context, aborts or hangs costs a worker, not the tune; the toolkit's
// disassembler runs behind one too (apps/common/disassembly), reading a file given as its stdin.
//
// The socket (rather than pipes) lets a write to a dead child fail with EPIPE instead of raising
// SIGPIPE in this process. Move-only; one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt::detail {

// Exported for the host programs' disassembler and the tests, which start programs through it too.
class PTXRT_API ChildProcess {
 public:
  // Starts arguments[0] (a path) with this process's environment. `standard_input`, when given,
  // is the child's stdin instead of the socket (a file it reads as /dev/stdin). Throws Error (io)
  // when it cannot be started.
  explicit ChildProcess(const std::vector<std::string>& arguments, int standard_input = -1);
  // Kills the child if it is still running, and reaps it.
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Writes `line` and a newline; false when the child has gone.
  bool send_line(std::string_view line);
  // The next line the child writes (without its newline); nothing when it closed its end (exited)
  // or `timeout` passed first.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Whether the child has closed its end (read_line saw the end of its output).
  bool closed() const noexcept { return closed_; }
  // Ends the child (SIGKILL unless it has exited) and says how it ended: "exited with code 1",
  // "killed by signal 11 (Segmentation fault)".
  std::string terminate();

 private:
  pid_t pid_ = -1;
  int socket_ = -1;
  std::string buffer_;  // read but not yet returned
  bool closed_ = false;
};

}  // namespace ptxrt::detail
