// The tuning database's folder, lock and temporary file: the folder is private like the cache's,
// and nothing is written or deleted through a link, or in place of a file ptxrt did not write.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "disk_cache_test_support.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace fs = std::filesystem;
using ptxrt::Measurement;
using ptxrt::TuningDatabase;
using ptxrt::TuningKey;
using ptxrt::testing::mode_of;
using ptxrt::testing::read_file;
using ptxrt::testing::ScratchDirectory;

namespace {

const TuningKey key{"matmul", "hash-1",    "TILE_WIDTH in {8,16,32}", "NVIDIA H100", "9.0",
                    13000,    {64, 64, 64}};

Measurement measured(double ms) {
  Measurement measurement;
  measurement.config = ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"TILE_WIDTH", "16"}});
  measurement.status = ptxrt::MeasurementStatus::ok;
  measurement.median_ms = ms;
  measurement.runs = 5;
  return measurement;
}

// The message of the Error (io) that recording into `path` throws.
std::string record_error(const fs::path& path) {
  try {
    TuningDatabase(path).record(key, measured(1.0));
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::io);
    return error.what();
  }
  return "recorded";
}

}  // namespace

TEST_CASE("the tuning database's missing folders are created with mode 0700") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "results" / "tunes" / "tuning.json";
  TuningDatabase(path).record(key, measured(1.0));
  CHECK(mode_of(path.parent_path()) == 0700);
  CHECK(mode_of(path.parent_path().parent_path()) == 0700);
  CHECK(mode_of(path) == 0600);
  CHECK(mode_of(path.string() + ".lock") == 0600);
}

TEST_CASE("a tuning database folder that others can write, or a link, is refused unwritten") {
  ScratchDirectory scratch;
  const fs::path shared = scratch.path() / "shared";
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all);
  CHECK(record_error(shared / "tuning.json") ==
        "tuning database folder '" + shared.string() +
            "': is writable by group or others (mode 0777), so another user could plant files "
            "in it; chmod 700 it");
  CHECK(fs::is_empty(shared));
  fs::permissions(shared, fs::perms::owner_all);
  fs::create_directory_symlink(shared, scratch.path() / "link");
  CHECK(record_error(scratch.path() / "link" / "tuning.json")
            .find("': is a symbolic link, which ptxrt does not follow") != std::string::npos);
  CHECK(fs::is_empty(shared));
}

TEST_CASE(
    "a link or a FIFO at the lock's or the temporary's name is neither followed nor waited on") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  const fs::path outside = scratch.path() / "outside.txt";
  std::ofstream(outside) << "keep me";
  for (const std::string suffix : {".lock", ".tmp"}) {
    CAPTURE(suffix);
    const fs::path planted = path.string() + suffix;
    fs::create_symlink(outside, planted);
    CHECK(record_error(path).find(planted.string() + "': is a symbolic link") != std::string::npos);
    fs::remove(planted);
    REQUIRE(::mkfifo(planted.c_str(), 0600) == 0);
    REQUIRE(ptxrt::testing::finishes_within(std::chrono::seconds(20), [&] {
      try {
        TuningDatabase(path).record(key, measured(1.0));
      } catch (const ptxrt::Error&) {
      }
    }));
    CHECK(record_error(path).find(planted.string() + "': is a FIFO") != std::string::npos);
    CHECK(fs::is_fifo(planted));
    fs::remove(planted);
  }
  CHECK(read_file(outside) == "keep me");
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("a temporary file ptxrt did not write is left in place, and the database unchanged") {
  ScratchDirectory scratch;
  const fs::path path = scratch.path() / "tuning.json";
  TuningDatabase(path).record(key, measured(2.0));
  const std::string before = read_file(path);
  std::ofstream(path.string() + ".tmp") << "my own notes, not a database";
  CHECK(record_error(path) == "tuning database '" + path.string() +
                                  ".tmp': is in the way (not a temporary file ptxrt wrote; "
                                  "remove it)");
  CHECK(read_file(path.string() + ".tmp") == "my own notes, not a database");
  CHECK(read_file(path) == before);
}

TEST_CASE("a database file that is a link is not replaced by a file") {
  ScratchDirectory scratch;
  const fs::path real = scratch.path() / "real.json";
  TuningDatabase(real).record(key, measured(2.0));
  const fs::path link = scratch.path() / "tuning.json";
  fs::create_symlink(real, link);
  CHECK(record_error(link) ==
        "tuning database '" + link.string() + "': is a symbolic link, not a regular file");
  CHECK(fs::is_symlink(link));
}
