// Shared by the disk cache tests and those of the other folders ptxrt writes: a scratch
// directory, whole-file reads and writes, an Image with every field set, field-by-field
// comparison, a scoped environment variable, a watchdog for what must never hang, folders given
// to another user, and (log_capture.hpp) a capture of log output.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "jit/hash.hpp"
#include "log_capture.hpp"
#include "ptxrt/core/image.hpp"

namespace ptxrt::testing {

class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ptxrt-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code error;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, error);
    std::filesystem::remove_all(path_, error);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string key_for(const std::string& seed) { return sha256_hex(seed); }

// The permission bits of a file or folder (0700, 0600, ...).
inline unsigned mode_of(const std::filesystem::path& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

// Every field set, and data that is binary: NULs and high bytes included.
inline Image sample_image(const std::string& seed, std::size_t data_bytes = 4096) {
  Image image;
  image.format = ImageFormat::cubin;
  image.arch = "sm_90a";
  image.data.resize(data_bytes);
  for (std::size_t i = 0; i < data_bytes; ++i) image.data[i] = static_cast<char>((i * 31) % 256);
  image.data += seed;
  image.name = "matmul_tiled.cu";
  image.defines = {{"TILE_WIDTH", "32"}, {"USE_FAST_MATH", ""}};
  image.options = {"--gpu-architecture=sm_90a", "-DTILE_WIDTH=32", "-DUSE_FAST_MATH"};
  image.compile_log = std::string("ptxas info: used 32 registers\n") + '\xff' + '\0' + " end";
  image.lowered_names = {{"scale<float>", "_Z5scaleIfEvPT_"}};
  image.key = key_for(seed);
  image.nvrtc_version = 13000;
  return image;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Sets an environment variable for one scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;
  ~ScopedEnvironment() {
    if (previous_)
      ::setenv(name_, previous_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

// Whether `action`, run in a child process, returns (without throwing) within `limit`: a test
// of what must never hang, such as reading a FIFO put where a file should be, then fails instead
// of hanging. The child is killed when the limit passes.
inline bool finishes_within(std::chrono::seconds limit, const std::function<void()>& action) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      action();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A user id that is not this process's, for the tests of what another user owns: only root can
// give a file away, so elsewhere those tests are skipped (with the reason).
constexpr uid_t other_user = 65534;  // 'nobody'; an id without an account would do as well
inline bool can_give_files_away() { return ::geteuid() == 0; }
inline void give_away(const std::filesystem::path& path) {
  REQUIRE(::lchown(path.c_str(), other_user, other_user) == 0);
}

// Creates the folder `path` with exactly `permissions` (the umask aside): 0700 by default, as
// ptxrt makes the folders it writes.
inline std::filesystem::path make_folder(
    const std::filesystem::path& path,
    std::filesystem::perms permissions = std::filesystem::perms::owner_all) {
  std::filesystem::create_directory(path);
  std::filesystem::permissions(path, permissions);
  return path;
}

inline bool same_image(const Image& a, const Image& b) {
  return a.format == b.format && a.arch == b.arch && a.data == b.data && a.name == b.name &&
         a.defines == b.defines && a.options == b.options && a.compile_log == b.compile_log &&
         a.lowered_names == b.lowered_names && a.key == b.key && a.nvrtc_version == b.nvrtc_version;
}

}  // namespace ptxrt::testing
