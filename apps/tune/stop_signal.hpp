// Ctrl-C and SIGTERM as a request to stop a long job cleanly: the first SIGINT or SIGTERM sets a
// flag that the job polls between steps (a tune points TuneOptions::stop at it), so that the step
// in progress finishes and its result is kept; the same signal a second time ends the process at
// once, as if no handler were there.
//
// Signal handlers belong to the whole process: one StopSignal at a time (a second one throws
// Error (invalid_argument) while the first lives); its destructor puts back the handlers it
// replaced. requested() and signal() may be read from any thread.
#pragma once

#include <atomic>
#include <string>

namespace ptxrt::apps {

class StopSignal {
 public:
  // `notice` is written to stderr when the first signal arrives (with write(2), the one output a
  // signal handler may do), to say that the request was heard.
  explicit StopSignal(std::string notice);
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // True once a SIGINT or SIGTERM has arrived.
  const std::atomic<bool>& requested() const noexcept;
  // That signal's number (SIGINT, SIGTERM), 0 while none has arrived.
  int signal() const noexcept;
  // The exit status of a process that stopped for `signal`: 128 + its number, as a shell reports
  // a process the signal killed (130 for SIGINT, 143 for SIGTERM).
  static int exit_code(int signal) noexcept { return 128 + signal; }

 private:
  std::string notice_;  // read by the handler: lives as long as it is installed
};

}  // namespace ptxrt::apps
