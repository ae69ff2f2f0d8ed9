// Runs a program (no shell) and captures its exit code and output: for the tests that check a
// whole process's behaviour (the CLI, driver loading under a different LD_LIBRARY_PATH), and, in
// the background, for those that signal a process while it works (an interrupted tune).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace ptxrt::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + the signal's number when a signal ended it, as a shell reports
  std::string output;  // stdout and stderr together, in order
};

// `environment` entries ("NAME=VALUE") are added to (or replace in) this process's environment.
ProcessResult run_process(const std::vector<std::string>& arguments,
                          const std::vector<std::string>& environment = {});
// The same for a program that must end within `seconds` (one that would block on a FIFO, or read
// /dev/zero forever, if it regressed): nothing when it had to be killed.
std::optional<ProcessResult> run_process_within(const std::vector<std::string>& arguments,
                                                int seconds,
                                                const std::vector<std::string>& environment = {});

// A program started and left running; its stdout and stderr go to an unlinked temporary file,
// so that it never blocks on a full pipe. With Group::own it leads a process group of its own,
// which signal_group() reaches as a terminal's Ctrl-C reaches a foreground job (the program and
// the children it started). The destructor kills (SIGKILL) what is still running, and reaps it.
// Neither copied nor moved; one thread at a time.
class BackgroundProcess {
 public:
  enum class Group { shared, own };
  // Throws std::runtime_error when it cannot be started.
  explicit BackgroundProcess(const std::vector<std::string>& arguments,
                             const std::vector<std::string>& environment = {},
                             Group group = Group::shared);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  // Sends `signal` to the program alone.
  void signal(int signal) const;
  // Sends `signal` to its process group (Group::own only).
  void signal_group(int signal) const;
  // Whether it is still running (reaps it when it has ended).
  bool running();
  // Everything it has written so far.
  std::string output() const;
  // Waits for it to end and returns its exit code and everything it wrote.
  ProcessResult wait();

 private:
  pid_t pid_ = -1;
  int output_ = -1;
  Group group_;
  std::optional<int> status_;  // waitpid's, once reaped
};

// CPU seconds (user and system) this process has used, and those its reaped children have: what
// a test of how much work a step does measures, where the wall clock also counts the other
// processes of a busy machine.
double cpu_seconds();
double children_cpu_seconds();

// Whether process `pid` runs: it exists and is not a zombie (from /proc).
bool is_running(pid_t pid);
// The running processes that `parent` started (from /proc): a tune's workers.
std::vector<pid_t> running_children(pid_t parent);

}  // namespace ptxrt::testing
