// The precompiled-header folder (<cache>/pch, or CompileOptions::precompiled_header_directory):
// private like the cache's own folder, off where that is refused, and kept under its bound by
// deleting NVRTC's PCH files alone, never another file, never through a link.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "jit/precompiled_headers.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"

namespace fs = std::filesystem;
using ptxrt::detail::PrivateFolder;
using ptxrt::testing::LogCapture;
using ptxrt::testing::mode_of;
using ptxrt::testing::read_file;
using ptxrt::testing::ScopedEnvironment;
using ptxrt::testing::ScratchDirectory;
using ptxrt::testing::write_file;

namespace {

// What NVRTC's PCH files begin with, then filler to `bytes`.
std::string fake_precompiled_header(std::size_t bytes) {
  std::string text = "EDG C/C++ version 6.6 (Aug 20 2025 14:13:45)\n";
  text.resize(bytes, '\0');
  return text;
}

// The names in `folder`, sorted.
std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

void make_older(const fs::path& path, std::chrono::hours age) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

// A kernel whose compile makes NVRTC create a PCH (its heavy header), in a folder of its own so
// that NVRTC's PCH file is named after it.
const char* const cooperative_kernel = R"(#include <cooperative_groups.h>
extern "C" __global__ void fill(float* y, int n) {
  const unsigned i = cooperative_groups::this_grid().thread_rank();
  if (i < n) y[i] = 1.0f;
}
)";

bool nvrtc_has_precompiled_headers() {
  if (ptxrt::nvrtc_version() >= 12080) return true;
  MESSAGE("skipped: NVRTC " << ptxrt::nvrtc_version() << " has no precompiled headers");
  return false;
}

ptxrt::CompileOptions sm_90_cubin() {
  ptxrt::CompileOptions options;
  options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
  return options;
}

}  // namespace

TEST_CASE(
    "the PCH folder's bound deletes NVRTC's PCH files, oldest first, and no other file, never "
    "through a link") {
  ScratchDirectory scratch;
  const PrivateFolder folder = PrivateFolder::open(scratch.path() / "pch", "test pch");
  const fs::path outside = scratch.path() / "outside_9.pch";
  write_file(outside, fake_precompiled_header(1000));
  write_file(folder.path_of("oldest_0.pch"), fake_precompiled_header(1000));
  write_file(folder.path_of("newest_1.pch"), fake_precompiled_header(1000));
  const std::vector<std::pair<std::string, std::string>> kept{
      {"thesis.tex", fake_precompiled_header(1000)},
      {"results.csv", "a,b\n1,2\n"},
      {"notes_2.pch", std::string(1000, 'n')},        // NVRTC's kind of name, not its content
      {"plain.pch", fake_precompiled_header(1000)}};  // its content, not its kind of name
  for (const auto& [name, text] : kept) write_file(folder.path_of(name), text);
  fs::create_symlink(outside, folder.path_of("linked_3.pch"));
  fs::create_directory(folder.path_of("folder_4.pch"));
  for (const auto& [name, text] : kept) make_older(folder.path_of(name), std::chrono::hours(5));
  make_older(folder.path_of("oldest_0.pch"), std::chrono::hours(4));
  make_older(folder.path_of("newest_1.pch"), std::chrono::hours(1));
  fs::permissions(folder.path_of("newest_1.pch"), fs::perms::owner_read | fs::perms::owner_write |
                                                      fs::perms::group_read |
                                                      fs::perms::others_read);

  ptxrt::detail::keep_precompiled_headers_private_and_bounded(folder, 1500);

  CHECK_FALSE(fs::exists(folder.path_of("oldest_0.pch")));
  CHECK(fs::exists(folder.path_of("newest_1.pch")));
  CHECK(mode_of(folder.path_of("newest_1.pch")) == 0600);
  for (const auto& [kept_name, text] : kept) {
    const auto& name = kept_name;  // clang before 16 captures no binding
    CAPTURE(name);
    CHECK(read_file(folder.path_of(name)) == text);
  }
  CHECK(fs::is_symlink(folder.path_of("linked_3.pch")));
  CHECK(read_file(outside) == fake_precompiled_header(1000));
  CHECK(fs::is_directory(folder.path_of("folder_4.pch")));
}

TEST_CASE("NVRTC's own PCH files are made private and recognised, and a file of mine stays") {
  if (!nvrtc_has_precompiled_headers()) return;
  ScratchDirectory scratch;
  const fs::path pch = scratch.path() / "pch";
  fs::create_directory(pch);
  fs::permissions(pch, fs::perms::owner_all);
  write_file(pch / "my notes.txt", "mine");
  write_file(pch / "draft_1.pch", "mine too");
  ptxrt::CompileOptions options = sm_90_cubin();
  options.precompiled_header_directory = pch;
  const ptxrt::Program program = ptxrt::Program::from_string(cooperative_kernel, "fill.cu");
  // A compile may only learn the PCH heap NVRTC needs; the next creates the PCH, named after the
  // program and numbered by NVRTC.
  std::vector<std::string> created;
  for (int round = 0; round < 3 && created.empty(); ++round) {
    ptxrt::compile(program, options);
    for (const std::string& name : names_in(pch))
      if (name.starts_with("fill_") && name.ends_with(".pch")) created.push_back(name);
  }
  REQUIRE(created.size() == 1);
  CHECK(mode_of(pch / created[0]) == 0600);

  ptxrt::detail::keep_precompiled_headers_private_and_bounded(PrivateFolder::open(pch, "test pch"),
                                                              0);
  CHECK(names_in(pch) == std::vector<std::string>{"draft_1.pch", "my notes.txt"});
  CHECK(read_file(pch / "my notes.txt") == "mine");
  CHECK(read_file(pch / "draft_1.pch") == "mine too");
}

TEST_CASE(
    "a pch/ folder that is a link into another user's folder turns precompiled headers off, said "
    "once, and that folder is left as it was") {
  if (!nvrtc_has_precompiled_headers()) return;
  ScratchDirectory scratch;
  const fs::path cache = scratch.path() / "cache";
  const fs::path victim = scratch.path() / "victim";
  fs::create_directory(victim);
  write_file(victim / "thesis.tex", "\\documentclass{article}");
  write_file(victim / "results.csv", "a,b\n1,2\n");
  write_file(victim / "old_0.pch", fake_precompiled_header(100));
  make_older(victim / "old_0.pch", std::chrono::hours(100));
  if (ptxrt::testing::can_give_files_away()) {
    for (const fs::path& path :
         {victim, victim / "thesis.tex", victim / "results.csv", victim / "old_0.pch"})
      ptxrt::testing::give_away(path);
  } else {
    MESSAGE("the linked folder stays this user's: only root can give it away");
  }
  fs::create_directory_symlink(victim, ptxrt::testing::make_folder(cache) / "pch");
  ScopedEnvironment bound("PTXRT_CACHE_MAX_BYTES", "4K");
  LogCapture log;
  ptxrt::Jit jit({.cache_directory = cache});
  REQUIRE(jit.disk_cache()->usable());
  // Two compiles: the first may only learn the PCH heap NVRTC needs, the second creates the PCH.
  for (const char* name : {"fill.cu", "fill_again.cu"})
    jit.image(ptxrt::Program::from_string(std::string(cooperative_kernel) + "// " + name, name),
              sm_90_cubin());
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0].find("precompiled-header folder '" + (cache / "pch").string() +
                          "': is a symbolic link") != std::string::npos);
  CHECK(names_in(victim) == std::vector<std::string>{"old_0.pch", "results.csv", "thesis.tex"});
  CHECK(read_file(victim / "thesis.tex") == "\\documentclass{article}");
}
