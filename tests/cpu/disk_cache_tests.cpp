#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/error.hpp"

namespace fs = std::filesystem;
using ptxrt::DiskCache;
using ptxrt::Error;
using ptxrt::ErrorKind;
using ptxrt::Image;
using ptxrt::testing::key_for;
using ptxrt::testing::LogCapture;
using ptxrt::testing::read_file;
using ptxrt::testing::same_image;
using ptxrt::testing::sample_image;
using ptxrt::testing::ScopedEnvironment;
using ptxrt::testing::ScratchDirectory;
using ptxrt::testing::write_file;

namespace {

std::size_t files_under(const fs::path& directory) {
  std::size_t count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    if (entry.is_regular_file()) ++count;
  }
  return count;
}

bool any_line_contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("an image stored in the disk cache loads back equal in every field") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image = sample_image("round trip");
  cache.store(image);
  std::optional<Image> loaded = cache.load(image.key);
  REQUIRE(loaded.has_value());
  CHECK(same_image(*loaded, image));
  CHECK(loaded->data.find('\0') != std::string::npos);
  CHECK(cache.stats().stores == 1);
  CHECK(cache.stats().hits == 1);
}

TEST_CASE("a PTX image with empty lists round-trips too") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image;
  image.format = ptxrt::ImageFormat::ptx;
  image.arch = "compute_90";
  image.data = ".version 8.0\n.target sm_90\n";
  image.key = key_for("ptx");
  cache.store(image);
  std::optional<Image> loaded = cache.load(image.key);
  REQUIRE(loaded.has_value());
  CHECK(same_image(*loaded, image));
}

TEST_CASE("an entry lives at <directory>/<first two key digits>/<key>.ptxrt") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image = sample_image("layout");
  cache.store(image);
  fs::path expected = scratch.path() / image.key.substr(0, 2) / (image.key + ".ptxrt");
  CHECK(cache.entry_path(image.key) == expected);
  CHECK(fs::is_regular_file(expected));
  CHECK(files_under(scratch.path()) == 1);
}

TEST_CASE("a key that was never stored misses") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  CHECK_FALSE(cache.load(key_for("absent")).has_value());
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().discarded == 0);
}

TEST_CASE("storing a key again replaces its entry") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image first = sample_image("replace");
  Image second = first;
  second.compile_log = "second compile";
  cache.store(first);
  cache.store(second);
  std::optional<Image> loaded = cache.load(first.key);
  REQUIRE(loaded.has_value());
  CHECK(loaded->compile_log == "second compile");
  CHECK(files_under(scratch.path()) == 1);
}

TEST_CASE("an entry with a flipped byte is discarded, deleted and reported") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image = sample_image("corrupt");
  cache.store(image);
  fs::path path = cache.entry_path(image.key);
  std::string bytes = read_file(path);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
  write_file(path, bytes);

  LogCapture log;
  CHECK_FALSE(cache.load(image.key).has_value());
  CHECK_FALSE(fs::exists(path));
  CHECK(cache.stats().discarded == 1);
  CHECK(cache.stats().misses == 1);
  REQUIRE(log.lines.size() == 1);
  CHECK(any_line_contains(log.lines, "checksum mismatch"));
  CHECK(any_line_contains(log.lines, path.string()));
}

TEST_CASE("a truncated entry is discarded and deleted") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image = sample_image("truncated");
  cache.store(image);
  fs::path path = cache.entry_path(image.key);
  fs::resize_file(path, fs::file_size(path) - 100);

  LogCapture log;
  CHECK_FALSE(cache.load(image.key).has_value());
  CHECK_FALSE(fs::exists(path));
  CHECK(cache.stats().discarded == 1);
  CHECK(log.lines.size() == 1);
}

TEST_CASE("an empty entry file is discarded as truncated") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  std::string key = key_for("empty");
  fs::create_directories(cache.entry_path(key).parent_path());
  write_file(cache.entry_path(key), "");
  LogCapture log;
  CHECK_FALSE(cache.load(key).has_value());
  CHECK(any_line_contains(log.lines, "truncated"));
  CHECK_FALSE(fs::exists(cache.entry_path(key)));
}

TEST_CASE("an entry found under another key's name is refused as foreign") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image = sample_image("original");
  cache.store(image);
  std::string other_key = key_for("impostor");
  fs::create_directories(cache.entry_path(other_key).parent_path());
  fs::rename(cache.entry_path(image.key), cache.entry_path(other_key));

  LogCapture log;
  CHECK_FALSE(cache.load(other_key).has_value());
  CHECK(any_line_contains(log.lines, "foreign"));
  CHECK_FALSE(fs::exists(cache.entry_path(other_key)));
  CHECK(cache.stats().discarded == 1);
}

TEST_CASE("a file that is not a ptxrt entry is refused and left in place, not replaced") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  std::string key = key_for("garbage");
  fs::create_directories(cache.entry_path(key).parent_path());
  write_file(cache.entry_path(key), std::string(200, 'x'));
  LogCapture log;
  CHECK_FALSE(cache.load(key).has_value());
  CHECK(any_line_contains(log.lines, "not a ptxrt cache entry"));
  Image image = sample_image("garbage");
  cache.store(image);
  CHECK(read_file(cache.entry_path(key)) == std::string(200, 'x'));
  CHECK(cache.usable());
}

TEST_CASE("a symlink in place of an entry is never followed") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image image = sample_image("target");
  cache.store(image);
  std::string link_key = key_for("link");
  fs::create_directories(cache.entry_path(link_key).parent_path());
  fs::create_symlink(cache.entry_path(image.key), cache.entry_path(link_key));
  LogCapture log;
  CHECK_FALSE(cache.load(link_key).has_value());
  CHECK(log.lines.size() == 1);
  CHECK(cache.load(image.key).has_value());
}

TEST_CASE("keys that are not 64 lowercase hex digits are rejected as invalid arguments") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  for (std::string bad :
       {std::string("../../etc/passwd"), std::string(63, 'a'), std::string(65, 'a'),
        std::string(64, 'A'), "../" + std::string(61, 'a'), std::string()}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(cache.load(bad), Error);
    try {
      cache.load(bad);
    } catch (const Error& error) {
      CHECK(error.kind() == ErrorKind::invalid_argument);
    }
    Image image = sample_image("bad key");
    image.key = bad;
    CHECK_THROWS_AS(cache.store(image), Error);
  }
  CHECK(files_under(scratch.path()) == 0);
}

TEST_CASE("the cache directory is created with mode 0700, parents included") {
  ScratchDirectory scratch;
  fs::path directory = scratch.path() / "nested" / "ptxrt";
  DiskCache cache(directory);
  CHECK(cache.usable());
  REQUIRE(fs::is_directory(directory));
  struct stat info {};
  REQUIRE(::stat(directory.c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0700);
}

TEST_CASE("a directory that cannot be created leaves the cache working without disk") {
  ScratchDirectory scratch;
  write_file(scratch.path() / "regular-file", "not a directory");
  LogCapture log;
  DiskCache cache(scratch.path() / "regular-file" / "ptxrt");
  CHECK_FALSE(cache.usable());
  Image image = sample_image("uncached");
  CHECK_NOTHROW(cache.store(image));
  CHECK_FALSE(cache.load(image.key).has_value());
  CHECK_NOTHROW(cache.store(image));
  CHECK(cache.stats().stores == 0);
  CHECK(cache.stats().misses == 1);
  CHECK(log.lines.size() == 1);
  CHECK(any_line_contains(log.lines, "running without a disk cache"));
}

TEST_CASE("a read-only cache directory: store warns once, then both store and load do nothing") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: running as root, where mode 0500 does not stop writes");
    return;
  }
  ScratchDirectory scratch;
  fs::path directory = scratch.path() / "cache";
  fs::create_directory(directory);
  fs::permissions(directory, fs::perms::owner_read | fs::perms::owner_exec);
  LogCapture log;
  DiskCache cache(directory);
  Image image = sample_image("read only");
  CHECK_NOTHROW(cache.store(image));
  CHECK_NOTHROW(cache.store(image));
  CHECK_FALSE(cache.load(image.key).has_value());
  CHECK_FALSE(cache.usable());
  CHECK(log.lines.size() == 1);
  CHECK(any_line_contains(log.lines, "Permission denied"));
}

TEST_CASE("a cache directory writable by group or others is refused") {
  ScratchDirectory scratch;
  fs::permissions(scratch.path(), fs::perms::owner_all | fs::perms::group_all);
  LogCapture log;
  DiskCache cache(scratch.path());
  CHECK_FALSE(cache.usable());
  CHECK(any_line_contains(log.lines, "writable by group or others (mode 0770)"));
  cache.store(sample_image("refused"));
  CHECK(files_under(scratch.path()) == 0);
}

TEST_CASE("an entry or a directory owned by another user is refused and left in place") {
  if (!ptxrt::testing::can_give_files_away()) {
    MESSAGE("skipped: only root can give a file to another user");
    return;
  }
  ScratchDirectory scratch;
  DiskCache cache(scratch.path() / "cache");
  Image image = sample_image("planted");
  cache.store(image);
  fs::path path = cache.entry_path(image.key);
  ptxrt::testing::give_away(path);
  {
    LogCapture log;
    CHECK_FALSE(cache.load(image.key).has_value());
    CHECK(fs::exists(path));
    CHECK(any_line_contains(log.lines, "is owned by uid 65534, not by this user"));
  }
  ptxrt::testing::give_away(scratch.path() / "cache");
  LogCapture log;
  DiskCache refused(scratch.path() / "cache");
  CHECK_FALSE(refused.usable());
  CHECK(any_line_contains(log.lines, "owned by uid 65534"));
}

TEST_CASE("eviction keeps the cache under its bound by dropping the least recently used") {
  ScratchDirectory scratch;
  DiskCache probe(scratch.path() / "probe");
  probe.store(sample_image("probe"));
  const std::uintmax_t entry_bytes = fs::file_size(probe.entry_path(key_for("probe")));

  // Room for three and a half entries; evicting goes down to 90% of that, i.e. three entries.
  DiskCache cache(scratch.path() / "cache", entry_bytes * 7 / 2);
  const std::string names[] = {"a", "b", "c", "d"};
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 3; ++i) {
    cache.store(sample_image(names[i]));
    fs::last_write_time(cache.entry_path(key_for(names[i])), now - std::chrono::minutes(30 - i));
  }
  REQUIRE(cache.load(key_for("a")).has_value());  // a is now the most recently used
  cache.store(sample_image("d"));

  CHECK(cache.stats().evictions == 1);
  CHECK_FALSE(fs::exists(cache.entry_path(key_for("b"))));
  for (const char* kept : {"a", "c", "d"}) {
    CAPTURE(kept);
    CHECK(cache.load(key_for(kept)).has_value());
  }
  std::uintmax_t total = 0;
  for (const auto& entry : cache.entries()) total += entry.size_bytes;
  CHECK(total <= cache.max_bytes());
}

TEST_CASE(
    "a stale temporary file from a crashed store is removed, a fresh one or one the cache did not "
    "write is left alone") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path() / "cache");
  std::string key = key_for("temporary");
  fs::path shard = cache.entry_path(key).parent_path();
  fs::create_directories(shard);
  fs::path stale = shard / (key + ".ptxrt.tmp.1.2.3");
  fs::path fresh = shard / (key + ".ptxrt.tmp.4.5.6");
  fs::path not_ours = shard / (key + ".ptxrt.tmp.7.8.9");
  DiskCache probe(scratch.path() / "probe");
  probe.store(sample_image("temporary"));
  const std::string partial = read_file(probe.entry_path(key_for("temporary"))).substr(0, 100);
  write_file(stale, partial);
  write_file(fresh, partial);
  write_file(not_ours, "partial notes of someone else");
  for (const fs::path& old : {stale, not_ours})
    fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(2));
  cache.store(sample_image("another"));
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh));
  CHECK(read_file(not_ours) == "partial notes of someone else");
}

TEST_CASE("entries lists key, size, name and arch, most recently used first, clear empties it") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path());
  Image older = sample_image("older");
  Image newer = sample_image("newer");
  newer.name = "transpose.cu";
  newer.arch = "sm_80";
  cache.store(older);
  cache.store(newer);
  fs::last_write_time(cache.entry_path(older.key),
                      fs::file_time_type::clock::now() - std::chrono::hours(1));

  auto listed = cache.entries();
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].key == newer.key);
  CHECK(listed[0].name == "transpose.cu");
  CHECK(listed[0].arch == "sm_80");
  CHECK(listed[0].size_bytes == fs::file_size(cache.entry_path(newer.key)));
  CHECK(listed[1].key == older.key);
  CHECK(listed[1].name == "matmul_tiled.cu");
  CHECK(listed[1].last_use < listed[0].last_use);

  cache.clear();
  CHECK(cache.entries().empty());
  CHECK_FALSE(cache.load(newer.key).has_value());
}

TEST_CASE("sizes parse as bytes with an optional K, M or G suffix") {
  CHECK(DiskCache::parse_size("1048576") == 1048576);
  CHECK(DiskCache::parse_size("4k") == 4096);
  CHECK(DiskCache::parse_size("512M") == 512ull << 20);
  CHECK(DiskCache::parse_size("2G") == 2ull << 30);
  for (const char* bad :
       {"", "G", "12X", "-1", "1.5G", " 5", "99999999999999999999", "99999999999G"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(DiskCache::parse_size(bad), Error);
  }
}

TEST_CASE("the size bound comes from PTXRT_CACHE_MAX_BYTES, else 1 GiB") {
  {
    ScopedEnvironment bound("PTXRT_CACHE_MAX_BYTES", "64M");
    CHECK(DiskCache::default_max_bytes() == 64ull << 20);
  }
  ScopedEnvironment unset("PTXRT_CACHE_MAX_BYTES", nullptr);
  CHECK(DiskCache::default_max_bytes() == 1ull << 30);
}

TEST_CASE("the directory is PTXRT_CACHE_DIR, else XDG_CACHE_HOME/ptxrt, else ~/.cache/ptxrt") {
  ScopedEnvironment home("HOME", "/home/someone");
  {
    ScopedEnvironment explicit_directory("PTXRT_CACHE_DIR", "/scratch/kernels");
    ScopedEnvironment xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(DiskCache::default_directory() == fs::path("/scratch/kernels"));
  }
  ScopedEnvironment no_explicit_directory("PTXRT_CACHE_DIR", nullptr);
  {
    ScopedEnvironment xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(DiskCache::default_directory() == fs::path("/xdg/ptxrt"));
  }
  {
    ScopedEnvironment relative_xdg("XDG_CACHE_HOME", "relative");
    CHECK(DiskCache::default_directory() == fs::path("/home/someone/.cache/ptxrt"));
  }
}
