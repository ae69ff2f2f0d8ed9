// A damaged cache directory: a FIFO, a folder or a link where an entry or a shard folder should
// be, a shard folder others can write, files the cache did not write. The cache never hangs on
// them, never follows or deletes them, skips only the entries they stand in for, and lists them
// (damaged(), `ptxrt cache ls`); the rest of the cache, and `ptxrt cache warm`, go on working.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "process.hpp"
#include "ptxrt/core/disk_cache.hpp"

namespace fs = std::filesystem;
using ptxrt::DiskCache;
using ptxrt::DiskCacheDamage;
using ptxrt::Image;
using ptxrt::testing::finishes_within;
using ptxrt::testing::LogCapture;
using ptxrt::testing::read_file;
using ptxrt::testing::same_image;
using ptxrt::testing::sample_image;
using ptxrt::testing::ScratchDirectory;
using ptxrt::testing::write_file;

namespace {

constexpr std::chrono::seconds patience{20};

bool lists_damage(const DiskCache& cache, const fs::path& path, const std::string& problem) {
  for (const DiskCacheDamage& damage : cache.damaged())
    if (damage.path == path && damage.problem == problem) return true;
  return false;
}

enum class Thing { fifo, folder, link };

// Puts a FIFO, an empty folder or a link to a file outside the cache at `path`; returns what
// damaged() says of it where an entry should be.
std::string plant(Thing thing, const fs::path& path, const fs::path& outside) {
  switch (thing) {
    case Thing::fifo:
      REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
      return "is a FIFO, not a cache entry";
    case Thing::folder:
      fs::create_directory(path);
      return "is a directory, not a cache entry";
    case Thing::link:
      fs::create_symlink(outside, path);
      return "is a symbolic link, not a cache entry";
  }
  return {};
}

bool still_there(Thing thing, const fs::path& path) {
  switch (thing) {
    case Thing::fifo:
      return fs::is_fifo(fs::symlink_status(path));
    case Thing::folder:
      return fs::is_directory(fs::symlink_status(path));
    case Thing::link:
      return fs::is_symlink(fs::symlink_status(path));
  }
  return false;
}

}  // namespace

TEST_CASE(
    "a FIFO, a folder or a link at an entry's path: loads miss at once, stores and clear leave "
    "it, damaged() lists it, other entries work") {
  for (const Thing thing : {Thing::fifo, Thing::folder, Thing::link}) {
    CAPTURE(static_cast<int>(thing));
    ScratchDirectory scratch;
    const fs::path outside = scratch.path() / "outside.ptxrt";
    write_file(outside, "PTXRTIMG and a file outside the cache");
    DiskCache cache(scratch.path() / "cache");
    const Image image = sample_image("damaged entry");
    const fs::path path = cache.entry_path(image.key);
    fs::create_directories(path.parent_path());
    const std::string problem = plant(thing, path, outside);

    REQUIRE(
        finishes_within(patience, [&] { DiskCache(scratch.path() / "cache").load(image.key); }));
    LogCapture log;
    CHECK_FALSE(cache.load(image.key).has_value());
    cache.store(image);
    const ptxrt::CachedImage compiled = cache.load_or_compile(image.key, [&] { return image; });
    CHECK(compiled.compiled);
    CHECK(same_image(compiled.image, image));
    CHECK(cache.usable());
    REQUIRE(log.lines.size() == 1);  // said once, naming the path and what is there
    CHECK(log.lines[0].find("disk cache entry '" + path.string() + "' " + problem) !=
          std::string::npos);
    CHECK(lists_damage(cache, path, problem));

    const Image other = sample_image("an entry beside the damage");
    cache.store(other);
    CHECK(cache.load(other.key).has_value());
    CHECK(cache.clear().entries == 1);
    CHECK(still_there(thing, path));
    CHECK(read_file(outside) == "PTXRTIMG and a file outside the cache");
  }
}

TEST_CASE(
    "a FIFO, a file or a link at a shard folder's path: its entries are skipped, never written "
    "through, and damaged() lists it") {
  ScratchDirectory scratch;
  const fs::path elsewhere = ptxrt::testing::make_folder(scratch.path() / "elsewhere");
  const std::vector<std::pair<std::string, std::string>> seeds{
      {"fifo", "is a FIFO, not a folder"},
      {"file", "is a regular file, not a folder"},
      {"link",
       "is a symbolic link, which ptxrt does not follow into a folder it writes (name the folder "
       "itself)"}};
  DiskCache cache(scratch.path() / "cache");
  for (const auto& [seed_kind, problem] : seeds) {
    const std::string& kind = seed_kind;  // clang before 16 captures no binding
    CAPTURE(kind);
    const Image image = sample_image("shard " + kind);
    const fs::path shard = cache.entry_path(image.key).parent_path();
    REQUIRE_FALSE(fs::exists(fs::symlink_status(shard)));  // the seeds fall in different shards
    if (kind == "fifo") REQUIRE(::mkfifo(shard.c_str(), 0600) == 0);
    if (kind == "file") write_file(shard, "a file of someone's");
    if (kind == "link") fs::create_directory_symlink(elsewhere, shard);
    REQUIRE(
        finishes_within(patience, [&] { DiskCache(scratch.path() / "cache").load(image.key); }));
    LogCapture log;
    CHECK_FALSE(cache.load(image.key).has_value());
    cache.store(image);
    CHECK(cache.load_or_compile(image.key, [&] { return image; }).compiled);
    CHECK(cache.usable());
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0].find("disk cache '" + shard.string() + "': " + problem) !=
          std::string::npos);
    CHECK(lists_damage(cache, shard, problem));
  }
  CHECK(fs::is_empty(elsewhere));
  CHECK(read_file(cache.entry_path(sample_image("shard file").key).parent_path()) ==
        "a file of someone's");
  const Image working = sample_image("an entry in a good shard");
  cache.store(working);
  CHECK(cache.load(working.key).has_value());
}

TEST_CASE("a shard folder that group or others can write, or another user's, is not written") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path() / "cache");
  const Image image = sample_image("open shard");
  const fs::path shard = cache.entry_path(image.key).parent_path();
  ptxrt::testing::make_folder(shard, fs::perms::all);
  cache.store(image);
  CHECK(fs::is_empty(shard));
  CHECK(lists_damage(cache, shard,
                     "is writable by group or others (mode 0777), so another user could plant "
                     "files in it; chmod 700 it"));
  if (!ptxrt::testing::can_give_files_away()) {
    MESSAGE("skipped the shard of another user: only root can give a folder away");
    return;
  }
  fs::permissions(shard, fs::perms::owner_all);
  ptxrt::testing::give_away(shard);
  cache.store(image);
  CHECK(fs::is_empty(shard));
  CHECK(lists_damage(cache, shard, "is owned by uid 65534, not by this user (uid 0)"));
}

TEST_CASE("files the cache did not write survive eviction and clear, while its own entries go") {
  ScratchDirectory scratch;
  const fs::path directory = scratch.path() / "cache";
  DiskCache probe(scratch.path() / "probe");
  probe.store(sample_image("probe"));
  const std::uintmax_t entry_bytes = fs::file_size(probe.entry_path(sample_image("probe").key));
  DiskCache cache(directory, entry_bytes * 3);

  const Image first = sample_image("first");
  cache.store(first);
  const fs::path shard = cache.entry_path(first.key).parent_path();
  const std::string key = ptxrt::testing::key_for("not an entry");
  const fs::path planted_shard = cache.entry_path(key).parent_path();
  fs::create_directories(planted_shard);
  const std::vector<std::pair<fs::path, std::string>> foreign{
      {directory / "notes.txt", "notes"},
      {shard / "README.md", "a readme"},
      {cache.entry_path(key), std::string(4 * entry_bytes, 'x')},
      {planted_shard / (key + ".lock"), "a lock file with content is not the cache's"},
      {planted_shard / (key + ".ptxrt.tmp.1.2.3"), "a temporary of someone else's"}};
  for (const auto& [path, text] : foreign) write_file(path, text);
  fs::last_write_time(planted_shard / (key + ".ptxrt.tmp.1.2.3"),
                      fs::file_time_type::clock::now() - std::chrono::hours(3));
  fs::last_write_time(cache.entry_path(key),
                      fs::file_time_type::clock::now() - std::chrono::hours(3));

  // Over the bound: eviction, which would take the oldest, the planted file, first.
  for (const char* seed : {"second", "third", "fourth"}) cache.store(sample_image(seed));
  CHECK(cache.stats().evictions > 0);
  for (const auto& [path, text] : foreign) CHECK(read_file(path) == text);
  CHECK(lists_damage(cache, cache.entry_path(key), "is not a ptxrt cache entry"));

  const ptxrt::DiskCacheCleared cleared = cache.clear();
  CHECK(cleared.entries >= 1);
  CHECK(cache.entries().empty());
  for (const auto& [path, text] : foreign) CHECK(read_file(path) == text);
}

namespace {

bool have_cli() { return !std::string_view(PTXRT_CLI_PATH).empty(); }

// The CLI with PTXRT_CACHE_DIR=`cache`, killed (and failed) when it outlives `patience`.
ptxrt::testing::ProcessResult run_cli(const fs::path& cache, std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  ptxrt::testing::BackgroundProcess process(
      arguments, {"PTXRT_CACHE_DIR=" + cache.string(), "PTXRT_LOG=warning"});
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (process.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (process.running()) {
    FAIL_CHECK("ptxrt " << arguments.at(1) << " hung: killed after " << patience.count() << " s");
    return {-1, process.output()};
  }
  return process.wait();
}

}  // namespace

TEST_CASE(
    "cache ls and cache warm neither hang on nor fail for a FIFO or a folder at an entry's path: "
    "ls lists it, and warm stores the entry once it is gone") {
  if (!have_cli()) {
    MESSAGE("the CLI is not built");
    return;
  }
  const std::string kernel = std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu";
  const std::vector<std::string> warm{"cache", "warm", "--arch", "sm_90", "--kernel", kernel};
  ScratchDirectory scratch;
  const fs::path cache = scratch.path() / "cache";
  REQUIRE(run_cli(cache, warm).exit_code == 0);
  const std::vector<ptxrt::DiskCacheEntry> entries = DiskCache(cache).entries();
  REQUIRE(entries.size() == 1);
  const fs::path path = DiskCache(cache).entry_path(entries[0].key);
  for (const Thing thing : {Thing::fifo, Thing::folder}) {
    CAPTURE(static_cast<int>(thing));
    fs::remove(path);
    const std::string problem = plant(thing, path, scratch.path() / "unused");
    const ptxrt::testing::ProcessResult listed = run_cli(cache, {"cache", "ls", "--json"});
    REQUIRE_MESSAGE(listed.exit_code == 0, listed.output);
    const nlohmann::json damaged = nlohmann::json::parse(listed.output).at("damaged");
    CHECK(damaged == nlohmann::json::array({{{"path", path.string()}, {"problem", problem}}}));
    for (int round = 0; round < 2; ++round) {
      const ptxrt::testing::ProcessResult warmed = run_cli(cache, warm);
      CHECK_MESSAGE(warmed.exit_code == 0, warmed.output);
      CHECK(warmed.output.find("compiled") != std::string::npos);
    }
    CHECK(still_there(thing, path));
    fs::remove(path);
    REQUIRE(run_cli(cache, warm).exit_code == 0);
    const ptxrt::testing::ProcessResult cached = run_cli(cache, warm);
    CHECK_MESSAGE(cached.output.find("1 already cached") != std::string::npos, cached.output);
  }
}
