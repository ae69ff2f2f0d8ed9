#include "support/child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "ptxrt/core/error.hpp"

extern char** environ;

namespace ptxrt::detail {

namespace {

using Clock = std::chrono::steady_clock;

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           std::string(strsignal(WTERMSIG(status))) + ")";
  return "ended with status " + std::to_string(status);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& arguments, int standard_input,
                           int standard_error) {
  if (arguments.empty()) throw Error(ErrorKind::invalid_argument, "no program to start");
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw Error(ErrorKind::io, std::string("socketpair failed: ") + std::strerror(errno));
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the duplicates, so only stdin, stdout and stderr reach the child.
  posix_spawn_file_actions_adddup2(&actions, standard_input >= 0 ? standard_input : ends[1],
                                   STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
  if (standard_error >= 0) posix_spawn_file_actions_adddup2(&actions, standard_error, STDERR_FILENO);
  const int spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ends[1]);
  if (spawned != 0) {
    ::close(ends[0]);
    throw Error(ErrorKind::io, "cannot start '" + arguments[0] + "': " + std::strerror(spawned));
  }
  socket_ = ends[0];
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      socket_(std::exchange(other.socket_, -1)),
      buffer_(std::move(other.buffer_)),
      closed_(other.closed_) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) terminate();
}

bool ChildProcess::send_line(std::string_view line) {
  std::string text(line);
  text += '\n';
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t sent = ::send(socket_, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    rest.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

std::optional<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    if (const std::size_t newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (!receive(deadline)) return std::nullopt;
  }
}

std::optional<std::string> ChildProcess::read_bytes(std::size_t count,
                                                    std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (buffer_.size() < count)
    if (!receive(deadline)) return std::nullopt;
  std::string bytes = buffer_.substr(0, count);
  buffer_.erase(0, count);
  return bytes;
}

bool ChildProcess::receive(Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd waiting{socket_, POLLIN, 0};
    const int ready = ::poll(&waiting, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char chunk[65536];
    const ssize_t got = ::recv(socket_, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      closed_ = true;
      return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(got));
    return true;
  }
}

std::string ChildProcess::terminate() {
  if (pid_ <= 0) return "not running";
  if (socket_ >= 0) ::close(std::exchange(socket_, -1));
  int status = 0;
  pid_t reaped = 0;
  // A child that is exiting on its own gets a moment to do so, so that its own status is told.
  for (int wait = 0; wait < 20 && (reaped = ::waitpid(pid_, &status, WNOHANG)) == 0; ++wait)
    ::usleep(10'000);
  if (reaped == 0) {
    ::kill(pid_, SIGKILL);
    while ((reaped = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  return reaped > 0 ? describe_status(status) : "lost (waitpid failed)";
}

bool write_all(int descriptor, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(descriptor, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

FileDescriptor memory_file(std::string_view bytes, const char* name) {
  FileDescriptor file(::memfd_create(name, MFD_CLOEXEC));
  if (!file) throw Error(ErrorKind::io, std::string("memfd_create failed: ") + std::strerror(errno));
  if (!write_all(file.get(), bytes))
    throw Error(ErrorKind::io, std::string("cannot write a memory file: ") + std::strerror(errno));
  ::lseek(file.get(), 0, SEEK_SET);
  return file;
}

std::string read_memory_file(const FileDescriptor& file) {
  std::string bytes;
  char chunk[65536];
  for (off_t offset = 0;;) {
    const ssize_t got = ::pread(file.get(), chunk, sizeof chunk, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return bytes;
    bytes.append(chunk, static_cast<std::size_t>(got));
    offset += got;
  }
}

void tie_to_parent() {
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

}  // namespace ptxrt::detail
