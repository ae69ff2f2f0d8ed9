#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ptxrt::testing {

namespace {

// This process's environment with `added` replacing the variables of the same names.
std::vector<std::string> environment_with(const std::vector<std::string>& added) {
  std::vector<std::string> variables;
  for (char** entry = environ; *entry; ++entry) {
    std::string variable = *entry;
    const std::string name = variable.substr(0, variable.find('=') + 1);
    bool replaced = false;
    for (const std::string& variable_added : added) replaced |= variable_added.rfind(name, 0) == 0;
    if (!replaced) variables.push_back(std::move(variable));
  }
  variables.insert(variables.end(), added.begin(), added.end());
  return variables;
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> list;
  for (const std::string& text : strings) list.push_back(const_cast<char*>(text.c_str()));
  list.push_back(nullptr);
  return list;
}

int unlinked_temporary_file() {
  std::string name = (std::filesystem::temp_directory_path() / "ptxrt-output-XXXXXX").string();
  const int descriptor = ::mkostemp(name.data(), O_CLOEXEC);
  if (descriptor < 0) throw std::runtime_error("cannot create a file for a process's output");
  ::unlink(name.c_str());
  return descriptor;
}

struct ProcessStatus {
  char state = 0;  // 'R', 'S', ... 'Z' for a zombie
  pid_t parent = 0;
};

// From /proc/PID/stat, "pid (command) state ppid ...", whose command may hold spaces and ')'.
std::optional<ProcessStatus> process_status(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const std::size_t after_command = line.rfind(')');
  if (after_command == std::string::npos) return std::nullopt;
  ProcessStatus status;
  std::istringstream(line.substr(after_command + 1)) >> status.state >> status.parent;
  return status;
}

double used_seconds(int who) {
  rusage usage{};
  ::getrusage(who, &usage);
  const auto seconds = [](const timeval& time) {
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

bool is_running(pid_t pid) {
  const std::optional<ProcessStatus> status = process_status(std::to_string(pid));
  return status && status->state != 'Z';
}

std::vector<pid_t> running_children(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::optional<ProcessStatus> status = process_status(name);
    if (status && status->parent == parent && status->state != 'Z')
      children.push_back(std::stoi(name));
  }
  return children;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& arguments,
                                     const std::vector<std::string>& environment, Group group)
    : output_(unlinked_temporary_file()), group_(group) {
  const std::vector<std::string> variables = environment_with(environment);
  std::vector<char*> argv = pointers(arguments);
  std::vector<char*> envp = pointers(variables);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output_, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (group == Group::own) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  const int spawned =
      ::posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ::close(output_);
    throw std::runtime_error("cannot start " + arguments.at(0));
  }
}

BackgroundProcess::~BackgroundProcess() {
  if (!status_) {
    if (group_ == Group::own) ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    wait();
  }
  ::close(output_);
}

void BackgroundProcess::signal(int signal) const { ::kill(pid_, signal); }

void BackgroundProcess::signal_group(int signal) const {
  if (group_ != Group::own) throw std::logic_error("the process has no process group of its own");
  ::kill(-pid_, signal);
}

bool BackgroundProcess::running() {
  if (status_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
  status_ = status;
  return false;
}

ProcessResult BackgroundProcess::wait() {
  if (!status_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    status_ = status;
  }
  ProcessResult result;
  result.exit_code = WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
  result.output = output();
  return result;
}

std::string BackgroundProcess::output() const {
  std::string text;
  char buffer[4096];
  for (off_t offset = 0;;) {
    const ssize_t got = ::pread(output_, buffer, sizeof buffer, offset);
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    offset += got;
  }
  return text;
}

ProcessResult run_process(const std::vector<std::string>& arguments,
                          const std::vector<std::string>& environment) {
  return BackgroundProcess(arguments, environment).wait();
}

double cpu_seconds() { return used_seconds(RUSAGE_SELF); }

double children_cpu_seconds() { return used_seconds(RUSAGE_CHILDREN); }

std::optional<ProcessResult> run_process_within(const std::vector<std::string>& arguments,
                                                int seconds,
                                                const std::vector<std::string>& environment) {
  BackgroundProcess process(arguments, environment);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (process.running()) {
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;  // killed on return
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return process.wait();
}

}  // namespace ptxrt::testing
