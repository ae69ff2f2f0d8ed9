// The folders ptxrt writes (support/private_folder.hpp): created private, refused when another
// user could redirect or plant what ptxrt writes there, and never followed through a link.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/error.hpp"
#include "support/private_folder.hpp"

namespace fs = std::filesystem;
using ptxrt::detail::OpenedFile;
using ptxrt::detail::PrivateFolder;
using ptxrt::testing::give_away;
using ptxrt::testing::make_folder;
using ptxrt::testing::mode_of;
using ptxrt::testing::read_file;
using ptxrt::testing::ScratchDirectory;

namespace {

std::string refusal(const fs::path& path) {
  try {
    PrivateFolder::open(path, "test folder");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::io);
    return error.what();
  }
  return "not refused";
}

bool accept_any(const OpenedFile&) { return true; }

// For finishes_within, whose child reports by exit code alone: the refusal expected is an Error.
void refused_quietly(const std::function<void()>& action) {
  try {
    action();
  } catch (const ptxrt::Error&) {
  }
}

}  // namespace

TEST_CASE("a private folder is created with mode 0700, its missing parents too") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "a" / "b" / "folder";
  const PrivateFolder folder = PrivateFolder::open(path, "test folder");
  CHECK(folder.path() == path);
  CHECK(mode_of(path) == 0700);
  CHECK(mode_of(scratch.path() / "a" / "b") == 0700);
  REQUIRE(folder.make_folder("child"));
  CHECK(mode_of(path / "child") == 0700);
  CHECK(folder.open_folder("child").has_value());
  CHECK_FALSE(folder.open_folder("missing").has_value());
}

TEST_CASE("a folder that is a symbolic link is refused, even to a folder of this user's") {
  ScratchDirectory scratch;
  fs::create_directory_symlink(make_folder(scratch.path() / "real"), scratch.path() / "link");
  CHECK(refusal(scratch.path() / "link") ==
        "test folder '" + (scratch.path() / "link").string() +
            "': is a symbolic link, which ptxrt does not follow into a folder it writes (name the "
            "folder itself)");
  const PrivateFolder parent = PrivateFolder::open(scratch.path(), "test folder");
  CHECK_THROWS_WITH_AS(parent.open_folder("link"), doctest::Contains("is a symbolic link"),
                       ptxrt::Error);
}

TEST_CASE("a folder that group or others can write is refused, and nothing is created in it") {
  ScratchDirectory scratch;
  const fs::path shared = make_folder(scratch.path() / "shared", fs::perms::all);
  CHECK(refusal(shared) == "test folder '" + shared.string() +
                               "': is writable by group or others (mode 0777), so another user "
                               "could plant files in it; chmod 700 it");
  CHECK(fs::is_empty(shared));
}

TEST_CASE("a FIFO or a file where a folder should be is refused by name, without blocking") {
  ScratchDirectory scratch;
  REQUIRE(::mkfifo((scratch.path() / "fifo").c_str(), 0600) == 0);
  std::ofstream(scratch.path() / "file") << "text";
  REQUIRE(ptxrt::testing::finishes_within(std::chrono::seconds(10), [&] {
    refused_quietly([&] { PrivateFolder::open(scratch.path() / "fifo", "test folder"); });
  }));
  CHECK(refusal(scratch.path() / "fifo") ==
        "test folder '" + (scratch.path() / "fifo").string() + "': is a FIFO, not a folder");
  CHECK(refusal(scratch.path() / "file") == "test folder '" + (scratch.path() / "file").string() +
                                                "': is a regular file, not a folder");
}

TEST_CASE("a folder of another user is refused") {
  if (!ptxrt::testing::can_give_files_away()) {
    MESSAGE("skipped: only root can give a folder to another user");
    return;
  }
  ScratchDirectory scratch;
  const fs::path theirs = make_folder(scratch.path() / "theirs");
  give_away(theirs);
  CHECK(refusal(theirs) ==
        "test folder '" + theirs.string() + "': is owned by uid 65534, not by this user (uid 0)");
}

TEST_CASE("remove_file_if deletes only a regular file of this user that it recognises") {
  ScratchDirectory scratch;
  const PrivateFolder folder = PrivateFolder::open(scratch.path() / "folder", "test folder");
  const fs::path outside = scratch.path() / "outside.txt";
  std::ofstream(outside) << "keep me";
  fs::create_symlink(outside, folder.path_of("link"));
  REQUIRE(::mkfifo(folder.path_of("fifo").c_str(), 0600) == 0);
  std::ofstream(folder.path_of("mine")) << "ptxrt wrote this";
  std::ofstream(folder.path_of("yours")) << "someone else's";
  const auto written_by_ptxrt = [](const OpenedFile& file) {
    char start[5] = {};
    return ::pread(file.descriptor.get(), start, sizeof start, 0) == 5 &&
           std::string_view(start, sizeof start) == "ptxrt";
  };
  CHECK_FALSE(folder.remove_file_if("link", accept_any));
  CHECK_FALSE(folder.remove_file_if("fifo", accept_any));
  CHECK_FALSE(folder.remove_file_if("yours", written_by_ptxrt));
  CHECK_FALSE(folder.remove_file_if("missing", accept_any));
  CHECK(folder.remove_file_if("mine", written_by_ptxrt));
  CHECK_FALSE(fs::exists(folder.path_of("mine")));
  CHECK(fs::is_symlink(folder.path_of("link")));
  CHECK(read_file(outside) == "keep me");
  CHECK(fs::is_fifo(folder.path_of("fifo")));
  CHECK(read_file(folder.path_of("yours")) == "someone else's");
  if (!ptxrt::testing::can_give_files_away()) {
    MESSAGE("skipped the file of another user: only root can give a file away");
    return;
  }
  std::ofstream(folder.path_of("given away")) << "ptxrt wrote this";
  give_away(folder.path_of("given away"));
  CHECK_FALSE(folder.remove_file_if("given away", written_by_ptxrt));
  CHECK(fs::exists(folder.path_of("given away")));
}

TEST_CASE("files are opened in the folder opened, even after its path is renamed") {
  ScratchDirectory scratch;
  const PrivateFolder folder = PrivateFolder::open(scratch.path() / "folder", "test folder");
  fs::rename(scratch.path() / "folder", scratch.path() / "moved");
  fs::create_directory(scratch.path() / "folder");
  ptxrt::detail::FileDescriptor file = folder.open_file("written", O_WRONLY | O_CREAT, 0600);
  REQUIRE(file);
  CHECK(fs::exists(scratch.path() / "moved" / "written"));
  CHECK(fs::is_empty(scratch.path() / "folder"));
}

TEST_CASE("a lock file that is a link or a FIFO is refused at once, never followed or waited on") {
  ScratchDirectory scratch;
  const PrivateFolder folder = PrivateFolder::open(scratch.path() / "folder", "test lock");
  const fs::path outside = scratch.path() / "outside.txt";
  std::ofstream(outside) << "keep me";
  fs::create_symlink(outside, folder.path_of("linked.lock"));
  REQUIRE(::mkfifo(folder.path_of("fifo.lock").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(folder.open_own_file("linked.lock", O_RDWR, "test lock"),
                       doctest::Contains("is a symbolic link, not a regular file"), ptxrt::Error);
  REQUIRE(ptxrt::testing::finishes_within(std::chrono::seconds(10), [&] {
    refused_quietly([&] { folder.open_own_file("fifo.lock", O_RDWR, "test lock"); });
  }));
  CHECK_THROWS_WITH_AS(folder.open_own_file("fifo.lock", O_RDWR, "test lock"),
                       doctest::Contains("is a FIFO, not a regular file"), ptxrt::Error);
  CHECK(read_file(outside) == "keep me");
  CHECK(static_cast<bool>(folder.open_own_file("new.lock", O_RDWR, "test lock")));
  CHECK(mode_of(folder.path_of("new.lock")) == 0600);
}
