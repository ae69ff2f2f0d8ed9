// What ptxrt promises about the machine it runs on: no shell is ever started, the cache directory
// is private to its user, and nothing is written outside the cache directory and the files the
// user names (docs/errors.md, "Files ptxrt writes"); a cache directory that is a link, another
// user's or writable by others is not written at all, its pch/ folder included. Refusing other
// users' entries and damaged entries is in disk_cache_tests and disk_cache_damage_tests.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "process.hpp"
#include "ptxrt/jit.hpp"
#include "ptxrt/target.hpp"

namespace fs = std::filesystem;
using ptxrt::testing::give_away;
using ptxrt::testing::LogCapture;
using ptxrt::testing::make_folder;
using ptxrt::testing::mode_of;
using ptxrt::testing::ScratchDirectory;

namespace {

std::vector<fs::path> regular_files_under(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

std::vector<fs::path> everything_under(const fs::path& directory) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(directory))
    found.push_back(entry.path());
  return found;
}

// A kernel that includes a heavy header, whose compile makes NVRTC create precompiled headers,
// with the problem a dry-run tune needs.
const char* const cooperative_kernel = R"(#include <cooperative_groups.h>
extern "C" __global__ void fill(float* y, int n) {
  const unsigned i = cooperative_groups::this_grid().thread_rank();
  if (i < n) y[i] = 1.0f;
}
)";
const char* const cooperative_problem = R"({
  "name": "fill",
  "kernel": "fill",
  "sizes": {"n": 4096},
  "tune": {"block_size_x": [64, 128]},
  "block": ["block_size_x"],
  "problem_size": ["n"],
  "grid_div_x": ["block_size_x"],
  "arguments": [
    {"name": "y", "type": "float", "count": "n", "role": "output"},
    {"name": "n", "type": "int32", "value": "n"}
  ]
})";

// A Jit on `cache` compiles the cooperative kernel twice (the first compile may only size
// NVRTC's PCH heap, the second creates the PCH) without writing anything there.
void check_compiles_without_writing(const fs::path& cache) {
  LogCapture log;
  ptxrt::Jit jit({.cache_directory = cache});
  CHECK_FALSE(jit.disk_cache()->usable());
  ptxrt::CompileOptions options;
  options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
  for (const char* name : {"fill.cu", "fill_again.cu"})
    CHECK_FALSE(
        jit.image(ptxrt::Program::from_string(std::string(cooperative_kernel) + "// " + name, name),
                  options)
            ->data.empty());
  CHECK(jit.stats().compiles == 2);
  REQUIRE(log.lines.size() == 2);  // said once each: the cache refused, and so its pch/
  CHECK(log.lines[0].find("running without a disk cache") != std::string::npos);
  CHECK(log.lines[1].find("precompiled headers are off") != std::string::npos);
}

}  // namespace

TEST_CASE(
    "no source starts a shell, and two launchers start every program: the tuner's worker and "
    "the disassembler, and the CLI's LTO-IR reader") {
  // Calls, not words in comments: a name followed by "(". Two launchers start programs with
  // posix_spawn and no shell, each given its arguments as a list: runtime/tune/child_process.cpp
  // the tuner's worker process and the toolkit's nvdisasm or cuobjdump for SASS
  // (host/common/disassembly.cpp), found by path; tools/ltoir_reader.cpp the CLI itself
  // (/proc/self/exe), reading LTO-IR apart with its output captured whole.
  const fs::path worker_launcher =
      fs::path(PTXRT_SOURCE_DIR) / "runtime" / "tune" / "child_process.cpp";
  const fs::path ltoir_reader = fs::path(PTXRT_SOURCE_DIR) / "tools" / "ltoir_reader.cpp";
  const std::regex spawn(R"(\b(system|popen|execl|execlp|execle|execv|execvp|execvpe|fork|vfork|)"
                         R"(posix_spawnp?)\s*\()");
  std::size_t scanned = 0;
  std::vector<std::string> offenders;
  for (const char* folder : {"include", "runtime", "host", "tools"}) {
    for (const fs::path& file : regular_files_under(fs::path(PTXRT_SOURCE_DIR) / folder)) {
      std::ifstream in(file);
      std::string line;
      for (int number = 1; std::getline(in, line); ++number)
        if (std::regex_search(line.substr(0, line.find("//")), spawn) &&
            !(file == worker_launcher && line.find("::posix_spawn(") != std::string::npos) &&
            !(file == ltoir_reader && line.find(" posix_spawn(&pid") != std::string::npos))
          offenders.push_back(file.string() + ":" + std::to_string(number) + ": " + line);
      ++scanned;
    }
  }
  CHECK(offenders == std::vector<std::string>{});
  CHECK(scanned > 50);
}

TEST_CASE("the CLI writes only its cache directory (0700, entries 0600) and the files named") {
  if (std::string_view(PTXRT_CLI_PATH).empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  ScratchDirectory scratch;
  const fs::path cache = scratch.path() / "cache";
  const fs::path home = scratch.path() / "home";
  const fs::path temporary = scratch.path() / "tmp";
  fs::create_directories(home);
  fs::create_directories(temporary);
  const fs::path points = scratch.path() / "points.csv";
  std::ofstream(points) << "0,0\n3,4\n";
  const fs::path cubin = scratch.path() / "out.cubin";
  const std::string kernel = std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu";
  const std::vector<std::string> environment{"PTXRT_CACHE_DIR=" + cache.string(),
                                             "HOME=" + home.string(),
                                             "XDG_CACHE_HOME=", "TMPDIR=" + temporary.string()};
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"cache", "warm", "--arch", "sm_90", "--kernel", kernel},
        {"compile", kernel, "--arch", "sm_90", "--emit", "cubin", "-o", cubin.string()},
        {"resources", kernel, "--arch", "sm_90"},
        {"closest-pair", "--input", points.string()},
        {"cache", "ls"}}) {
    std::vector<std::string> arguments{PTXRT_CLI_PATH};
    arguments.insert(arguments.end(), command.begin(), command.end());
    const auto result = ptxrt::testing::run_process(arguments, environment);
    CAPTURE(command);
    CHECK_MESSAGE(result.exit_code == 0, result.output);
  }
  CHECK(fs::is_empty(home));
  CHECK(fs::is_empty(temporary));
  CHECK(mode_of(cache) == 0700);
  const std::vector<fs::path> entries = regular_files_under(cache);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].extension() == ".ptxrt");
  CHECK(mode_of(entries[0]) == 0600);
  CHECK(mode_of(entries[0].parent_path()) == 0700);
  std::vector<fs::path> written = regular_files_under(scratch.path());
  std::erase_if(written, [&](const fs::path& file) { return file == entries[0]; });
  std::sort(written.begin(), written.end());
  CHECK(written == std::vector<fs::path>{cubin, points});
}

TEST_CASE(
    "a dry-run tune with a cache folder that others can write writes nothing there, pch/ "
    "included") {
  if (std::string_view(PTXRT_CLI_PATH).empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  ScratchDirectory scratch;
  const fs::path shared = make_folder(scratch.path() / "shared", fs::perms::all);
  const fs::path kernel = scratch.path() / "fill.cu";
  const fs::path problem = scratch.path() / "fill.json";
  std::ofstream(kernel) << cooperative_kernel;
  std::ofstream(problem) << cooperative_problem;
  const auto result =
      ptxrt::testing::run_process({PTXRT_CLI_PATH, "tune", kernel.string(), "--problem",
                                   problem.string(), "--arch", "sm_90", "--dry-run"},
                                  {"PTXRT_CACHE_DIR=" + shared.string(), "PTXRT_LOG=warning"});
  CHECK_MESSAGE(result.exit_code == 0, result.output);
  CHECK_MESSAGE(
      result.output.find("is writable by group or others (mode 0777)") != std::string::npos,
      result.output);
  CHECK(everything_under(shared).empty());
}

TEST_CASE("a cache folder of another user is not written at all, pch/ included") {
  if (!ptxrt::testing::can_give_files_away()) {
    MESSAGE("skipped: only root can give a folder to another user");
    return;
  }
  ScratchDirectory scratch;
  const fs::path theirs =
      make_folder(scratch.path() / "theirs", fs::perms::owner_all | fs::perms::group_read |
                                                 fs::perms::group_exec | fs::perms::others_read |
                                                 fs::perms::others_exec);
  give_away(theirs);
  check_compiles_without_writing(theirs);
  CHECK(everything_under(theirs).empty());
}

TEST_CASE(
    "a cache directory that is a link is refused, to a folder of another user or of this one: "
    "nothing is written where it points, pch/ included") {
  ScratchDirectory scratch;
  const fs::path target = make_folder(scratch.path() / "target");
  std::ofstream(target / "notes.txt") << "a file of the folder's owner";
  if (ptxrt::testing::can_give_files_away())
    give_away(target);
  else
    MESSAGE("the linked folder stays this user's: only root can give it away");
  fs::create_directory_symlink(target, scratch.path() / "cache");
  check_compiles_without_writing(scratch.path() / "cache");
  CHECK(everything_under(target) == std::vector<fs::path>{target / "notes.txt"});
}
