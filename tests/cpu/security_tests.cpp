// What ptxrt promises about the machine it runs on: no shell is ever started, the cache directory
// is private to its user, and nothing is written outside the cache directory and the files the
// user names (docs/errors.md, "Files ptxrt writes"). Refusing other users' entries and
// directories is in disk_cache_tests.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "process.hpp"

namespace fs = std::filesystem;
using ptxrt::testing::mode_of;
using ptxrt::testing::ScratchDirectory;

namespace {

std::vector<fs::path> regular_files_under(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

}  // namespace

TEST_CASE(
    "no source starts a shell, and one launcher starts every program: the tuner's worker, the "
    "disassembler") {
  // Calls, not words in comments: a name followed by "(". One launcher,
  // runtime/tune/child_process.cpp, starts programs with posix_spawn and no shell: the tuner's
  // worker process, and the toolkit's nvdisasm or cuobjdump for SASS
  // (host/common/disassembly.cpp), found by path and given their arguments as a list.
  const fs::path worker_launcher =
      fs::path(PTXRT_SOURCE_DIR) / "runtime" / "tune" / "child_process.cpp";
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
            !(file == worker_launcher && line.find("::posix_spawn(") != std::string::npos))
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
