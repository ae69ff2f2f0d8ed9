// LTO-IR from a file read by nvJitLink in a process of its own before the command links it.
// After its header LTO-IR is NVIDIA's encoded IR, with no size or checksum that check_device_code
// could hold it to, and nvJitLink may crash, abort or print "LLVM ERROR" and exit on a damaged
// one. A child process of this executable (the hidden `read-ltoir` command) parses each such
// input the way the link will; when nvJitLink takes the child down the command stops with one
// error naming the file, and only inputs that survived are linked in this process.
#include "ltoir_reader.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "ptxrt/core/error.hpp"
#include "support/file_descriptor.hpp"
#include "support/quoted.hpp"
#include "support/regular_file.hpp"

extern char** environ;

namespace ptxrt::cli {
namespace {

using detail::FileDescriptor;

constexpr std::string_view reader_command = "read-ltoir";
// Parsing intact LTO-IR takes well under a second; a minute is a hang.
constexpr std::chrono::seconds reader_limit{60};
// What the child prints is only searched for "LLVM ERROR", which ends it: the last of it is kept.
constexpr std::size_t kept_output_bytes = 64 * 1024;

[[noreturn]] void system_failure(const std::string& what) {
  throw Error(ErrorKind::io, what + ": " + std::strerror(errno));
}

// Whether nvJitLink, linking with -lto, may read LTO-IR in `object`: LTO-IR itself, and the
// containers that can carry LTO-IR entries (a fatbin, an object or library from nvcc -dlto).
bool may_hold_ltoir(const DeviceObject& object) {
  return object.kind != DeviceObjectKind::cubin && object.kind != DeviceObjectKind::ptx;
}

// The child's stdin: the bytes this process read and checked, not the file again, which may
// have changed since.
FileDescriptor memory_file(std::string_view bytes) {
  FileDescriptor file(memfd_create("ptxrt-ltoir", MFD_CLOEXEC));
  if (!file) system_failure("cannot create a memory file for the LTO-IR reader");
  for (std::size_t written = 0; written < bytes.size();) {
    const ssize_t count = write(file.get(), bytes.data() + written, bytes.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) system_failure("cannot write the LTO-IR reader's input");
    written += static_cast<std::size_t>(count);
  }
  if (lseek(file.get(), 0, SEEK_SET) != 0)
    system_failure("cannot rewind the LTO-IR reader's input");
  return file;
}

struct ReaderEnd {
  int status = 0;  // waitpid's, when it ended by itself
  bool timed_out = false;
  std::string output;  // stdout and stderr, at least the last kept_output_bytes
};

pid_t spawn_reader(const std::vector<std::string>& arguments, int input, int output) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int failed = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) {
    errno = failed;
    system_failure("cannot start the LTO-IR reader " + arguments.front());
  }
  return pid;
}

// Reads the child's output until it closes it, then reaps it; kills it at the deadline.
ReaderEnd wait_for_reader(pid_t pid, int output) {
  const auto deadline = std::chrono::steady_clock::now() + reader_limit;
  ReaderEnd end;
  bool open = true;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      end.timed_out = true;
    }
    if (open && !end.timed_out) {
      pollfd readable{output, POLLIN, 0};
      if (poll(&readable, 1, static_cast<int>(left.count())) > 0) {
        char buffer[4096];
        const ssize_t count = read(output, buffer, sizeof buffer);
        if (count > 0) end.output.append(buffer, static_cast<std::size_t>(count));
        if (end.output.size() > 2 * kept_output_bytes)
          end.output.erase(0, end.output.size() - kept_output_bytes);
        open = count > 0 || (count < 0 && errno == EINTR);
      }
      continue;
    }
    // Its output closed: it is exiting, or it closed its descriptors and goes on.
    const pid_t reaped = waitpid(pid, &end.status, end.timed_out ? 0 : WNOHANG);
    if (reaped == pid || (reaped < 0 && errno != EINTR)) return end;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// "SIGSEGV" for 11.
std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
}

// What the child's end says is wrong with the LTO-IR; empty when nvJitLink survived reading it
// (an undefined symbol or another link error there is the link's to report, not damage).
std::string damage_seen(const ReaderEnd& end) {
  if (end.timed_out)
    return "nvJitLink ran past " + std::to_string(reader_limit.count()) + " s reading it";
  if (WIFSIGNALED(end.status))
    return "nvJitLink crashed reading it (" + signal_name(WTERMSIG(end.status)) + ")";
  const std::size_t fatal = end.output.find("LLVM ERROR: ");
  if (fatal != std::string::npos) {
    const std::size_t line_end = end.output.find('\n', fatal);
    return "nvJitLink failed reading it (" +
           detail::printable(end.output.substr(fatal, line_end - fatal)) + ")";
  }
  return {};
}

void read_apart(const DeviceObject& object, const std::string& arch) {
  const FileDescriptor input = memory_file(object.bytes);
  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC) != 0) system_failure("cannot open a pipe to the LTO-IR reader");
  const FileDescriptor output(pipe_ends[0]);
  FileDescriptor output_writer(pipe_ends[1]);
  const pid_t pid = spawn_reader({"/proc/self/exe", std::string(reader_command), "--arch", arch},
                                 input.get(), output_writer.get());
  output_writer.close();
  const std::string damage = damage_seen(wait_for_reader(pid, output.get()));
  if (!damage.empty())
    throw Error(ErrorKind::invalid_argument,
                object.name + ": damaged " + std::string(to_string(object.kind)) + ": " + damage);
}

// The child: nvJitLink parses its stdin as the link would (a handle for `arch` with -lto, the
// object added, the link completed, to PTX for a virtual architecture). Ends 0 whatever the link
// says: only how the process ends and "LLVM ERROR" on its output are the parent's verdict.
void run_reader(const std::string& arch) {
  // Lets the tests see a crashing reader reported without an input that crashes this toolkit.
  // The default action, so that a sanitizer's handler does not turn the crash into an exit.
  if (std::getenv("PTXRT_TEST_CRASH_LTOIR_READER") != nullptr) {
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  try {
    Program program = Program::from_string("", "ltoir-reader.cu");
    program.add_device_object(
        DeviceObject::from_bytes(detail::read_regular_file("/dev/stdin", "LTO-IR"), "input"));
    CompileOptions options;
    options.target = {
        arch, arch.starts_with("compute_") ? ImageFormat::ptx : ImageFormat::cubin, {}};
    options.lto = true;
    options.resource_usage = false;
    compile(program, options);
  } catch (const Error&) {
  }
}

}  // namespace

void read_ltoir_apart(const Program& program, const std::string& arch_list, bool lto) {
  if (!lto) return;  // without it the link refuses LTO-IR unread
  // A fatbin's parts link alike; the first stands for them.
  const std::string arch = arch_list.substr(0, arch_list.find(','));
  std::set<std::string_view> read;
  for (const DeviceObject& object : program.device_objects())
    if (may_hold_ltoir(object) && read.insert(object.bytes).second) read_apart(object, arch);
}

void add_ltoir_reader_command(CLI::App& app) {
  auto arch = std::make_shared<std::string>();
  // No group: hidden from --help, started only by read_ltoir_apart.
  CLI::App* command = app.add_subcommand(std::string(reader_command), "")->group("");
  command->add_option("--arch", *arch)->required();
  command->callback([arch] { run_reader(*arch); });
}

}  // namespace ptxrt::cli
