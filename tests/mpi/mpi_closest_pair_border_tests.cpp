// The pairs across slab borders, on slabs the tests cut themselves (ptxrt_mpi_closest_pair_probe
// takes the splitters by point index): a pair across one border, a point reaching back across a
// slab thinner than the least distance, ties and duplicates split by a border, empty slabs, and
// splitters out of key order. Each answer is also one process's (`ptxrt closest-pair`).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "mpirun.hpp"

using nlohmann::json;
using ptxrt::apps::Point2;
using ptxrt::testing::contains;
using ptxrt::testing::mpirun;
using ptxrt::testing::printed_json;
using ptxrt::testing::ProcessResult;
using ptxrt::testing::ScratchDirectory;

namespace {

std::filesystem::path write_points(const ScratchDirectory& scratch,
                                   const std::vector<Point2>& points) {
  const std::filesystem::path path = scratch.path() / "points.bin";
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  // The format is little-endian float32 pairs, as this host's own layout.
  file.write(reinterpret_cast<const char*>(points.data()),
             static_cast<std::streamsize>(points.size() * sizeof(Point2)));
  return path;
}

// `ranks` ranks over the slabs cut at the points `splitters` lists (indices, in key order).
json probe(int ranks, const std::filesystem::path& points, const std::string& splitters) {
  const ProcessResult result = mpirun(ranks, {PTXRT_CLOSEST_PAIR_PROBE_PATH, "--points",
                                              points.string(), "--splitters", splitters});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  return printed_json(result);
}

// The probe's answer is one process's, pair and distance.
void check_one_process_answer(const ScratchDirectory& scratch, const std::filesystem::path& points,
                              const json& found) {
  const ProcessResult result =
      ptxrt::testing::run_process({PTXRT_CLI_PATH, "closest-pair", "--input", points.string(),
                                   "--method", "cpu-brute", "--json"},
                                  {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const json expected = printed_json(result);
  INFO("one process: " << expected.dump() << "\ndistributed: " << found.dump());
  CHECK(found["i"] == expected["i"]);
  CHECK(found["j"] == expected["j"]);
  CHECK(found["distance"].get<double>() == expected["distance"].get<double>());
}

std::vector<std::uint64_t> column(const json& found, const char* key) {
  std::vector<std::uint64_t> values;
  for (const json& rank : found["ranks"]) values.push_back(rank[key].get<std::uint64_t>());
  return values;
}

}  // namespace

TEST_CASE("distributed closest pair: a pair across a border is found by the earlier slab's rank") {
  ScratchDirectory scratch;
  // Points 3 and 4, 0.0005 apart, lie on either side of splitter 3; every other pair is 1 or
  // more apart, so the slabs' least answer (1) reaches across.
  const std::filesystem::path points =
      write_points(scratch, {{0, 0}, {1, 0}, {2, 0}, {1.5f, 5}, {1.5005f, 5}, {3, 0}, {4, 0}});
  const json found = probe(2, points, "3");
  CHECK(found["i"] == 3);
  CHECK(found["j"] == 4);
  CHECK(column(found, "slab_points") == std::vector<std::uint64_t>{3, 4});
  CHECK(column(found, "border_points_sent") == std::vector<std::uint64_t>{0, 2});
  CHECK(column(found, "border_points_received") == std::vector<std::uint64_t>{2, 0});
  check_one_process_answer(scratch, points, found);
}

TEST_CASE(
    "distributed closest pair: a point reaches back across a slab thinner than the least "
    "distance") {
  ScratchDirectory scratch;
  // Slab 1 holds points 3 and 4 only, 0.0001 wide in x and far in y; points 2 (slab 0) and 5
  // (slab 2) are 0.0002 apart, across it.
  const std::filesystem::path points = write_points(scratch, {{-10, 0},
                                                              {-9, 0},
                                                              {1.0f, 0},
                                                              {1.00005f, 100},
                                                              {1.0001f, 200},
                                                              {1.0002f, 0},
                                                              {5, 0},
                                                              {6, 0}});
  const json found = probe(3, points, "2,4");
  CHECK(found["i"] == 2);
  CHECK(found["j"] == 5);
  CHECK(column(found, "slab_points") == std::vector<std::uint64_t>{3, 2, 3});
  CHECK(column(found, "border_points_sent") == std::vector<std::uint64_t>{0, 0, 1});
  CHECK(column(found, "border_points_received") == std::vector<std::uint64_t>{1, 0, 0});
  check_one_process_answer(scratch, points, found);
}

TEST_CASE("distributed closest pair: ties across a border resolve by index, as in one process") {
  ScratchDirectory scratch;
  // Three pairs 1 apart: (0, 1) across splitter 0, (2, 3) in slab 0, (4, 5) in slab 1.
  const std::filesystem::path across_first =
      write_points(scratch, {{1, 0}, {2, 0}, {-5, 0}, {-4, 0}, {7, 0}, {8, 0}});
  json found = probe(2, across_first, "0");
  CHECK(found["i"] == 0);
  CHECK(found["j"] == 1);
  check_one_process_answer(scratch, across_first, found);
  // The pair across, (4, 5), now has the larger indices: slab 0's (0, 1) is the answer.
  const std::filesystem::path across_last =
      write_points(scratch, {{-5, 0}, {-4, 0}, {7, 0}, {8, 0}, {1, 0}, {2, 0}});
  found = probe(2, across_last, "4");
  CHECK(found["i"] == 0);
  CHECK(found["j"] == 1);
  CHECK(column(found, "border_points_received") == std::vector<std::uint64_t>{1, 0});
  check_one_process_answer(scratch, across_last, found);
}

TEST_CASE("distributed closest pair: duplicates a splitter separates meet at distance 0") {
  ScratchDirectory scratch;
  // Points 1 and 3 are one point; the splitter is point 1, so point 3 lies in the next slab.
  const std::filesystem::path points =
      write_points(scratch, {{0, 0}, {0.5f, 0.5f}, {3, 3}, {0.5f, 0.5f}, {6, 6}});
  const json found = probe(2, points, "1");
  CHECK(found["i"] == 1);
  CHECK(found["j"] == 3);
  CHECK(found["distance"].get<double>() == 0.0);
  CHECK(column(found, "slab_points") == std::vector<std::uint64_t>{2, 3});
  check_one_process_answer(scratch, points, found);
}

TEST_CASE("distributed closest pair: repeated splitters leave slabs empty, and the answer whole") {
  ScratchDirectory scratch;
  const std::filesystem::path points =
      write_points(scratch, {{0, 0}, {2, 0}, {4, 0}, {4.5f, 0}, {7, 0}, {9, 0}});
  const json found = probe(4, points, "1,1,3");
  CHECK(column(found, "slab_points") == std::vector<std::uint64_t>{2, 0, 2, 2});
  CHECK(found["i"] == 2);
  CHECK(found["j"] == 3);
  check_one_process_answer(scratch, points, found);
}

TEST_CASE("distributed closest pair: splitters out of key order are refused on every rank") {
  ScratchDirectory scratch;
  const std::filesystem::path points = write_points(scratch, {{0, 0}, {1, 0}, {2, 0}, {3, 0}});
  const ProcessResult result =
      mpirun(3, {PTXRT_CLOSEST_PAIR_PROBE_PATH, "--points", points.string(), "--splitters", "2,1"});
  CHECK(result.exit_code != 0);
  CHECK_MESSAGE(
      contains(result.output, "2 splitters for 3 slabs; it must give one less, in key order"),
      result.output);
}
