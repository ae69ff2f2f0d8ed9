// A child process spoken to in lines: posix_spawn (no shell) with its stdin and stdout joined to
// one socket of ours, stderr shared with ours. The tuner's worker runs behind one, so that a
// config that faults the GPU context, aborts or hangs costs a worker, not the tune; the toolkit's
// disassembler runs behind one too (apps/common/disassembly), reading a file given as its stdin,
// and so does an isolated link (jit/isolated_link), whose stderr is kept apart.
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
#include "support/file_descriptor.hpp"

namespace ptxrt::detail {

// Exported for the host programs' disassembler and the tests, which start programs through it too.
class PTXRT_API ChildProcess {
 public:
  // Starts arguments[0] (a path) with this process's environment. `standard_input`, when given,
  // is the child's stdin instead of the socket (a file it reads as /dev/stdin); `standard_error`
  // its stderr instead of ours. Throws Error (io) when it cannot be started.
  explicit ChildProcess(const std::vector<std::string>& arguments, int standard_input = -1,
                        int standard_error = -1);
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
  // The next `count` bytes the child writes; nothing when it closed its end first or `timeout`
  // passed.
  std::optional<std::string> read_bytes(std::size_t count, std::chrono::milliseconds timeout);
  // Whether the child has closed its end (read_line saw the end of its output).
  bool closed() const noexcept { return closed_; }
  // Ends the child (SIGKILL unless it has exited) and says how it ended: "exited with code 1",
  // "killed by signal 11 (Segmentation fault)".
  std::string terminate();

 private:
  pid_t pid_ = -1;
  int socket_ = -1;
  // Reads what the socket holds into buffer_ within `deadline`; false when the child closed its
  // end or the deadline passed first.
  bool receive(std::chrono::steady_clock::time_point deadline);

  std::string buffer_;  // read but not yet returned
  bool closed_ = false;
};

// Writes all of `bytes` to `descriptor`, through short writes and EINTR; false when a write fails
// (a reader that has gone, a full disk), with errno set.
PTXRT_API bool write_all(int descriptor, std::string_view bytes);

// An anonymous in-memory file holding `bytes`, read from its start: a child's stdin (programs that
// read a path read it as /dev/stdin) that leaves nothing on disk. Empty, it can take a child's
// stderr. Throws Error (io).
PTXRT_API FileDescriptor memory_file(std::string_view bytes, const char* name);

// Everything in `file` from its start: what a child wrote to a memory_file.
PTXRT_API std::string read_memory_file(const FileDescriptor& file);

// For a child process: dies with its parent, and leaves Ctrl-C and SIGTERM to the parent, which
// ends it.
PTXRT_API void tie_to_parent();

}  // namespace ptxrt::detail
