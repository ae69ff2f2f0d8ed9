// `mpirun -n R ptxrt closest-pair --mpi` against one process on the same set, with the CPU
// methods (no GPU): generated sets (each rank makes its own part), binary files (read by byte
// range) and CSV files; a set on one vertical line, duplicates, more ranks than points; and the
// faults that end the job: an unreadable file, a rank without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "host/closest_pair/closest_pair.hpp"
#include "host/closest_pair/point_generator.hpp"
#include "mpirun.hpp"

using nlohmann::json;
using ptxrt::host::Point2;
using ptxrt::testing::contains;
using ptxrt::testing::mpirun;
using ptxrt::testing::printed_json;
using ptxrt::testing::ProcessResult;
using ptxrt::testing::ScratchDirectory;

namespace {

std::vector<std::string> with_cache(const ScratchDirectory& scratch) {
  return {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string()};
}

json one_process(const ScratchDirectory& scratch, std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), {PTXRT_CLI_PATH, "closest-pair", "--json"});
  const ProcessResult result = ptxrt::testing::run_process(arguments, with_cache(scratch));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  return printed_json(result);
}

json distributed(const ScratchDirectory& scratch, int ranks, std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), {PTXRT_CLI_PATH, "closest-pair", "--mpi", "--json"});
  const ProcessResult result = mpirun(ranks, arguments, with_cache(scratch));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  return printed_json(result);
}

Point2 point_of(const json& pair) { return {pair[0].get<float>(), pair[1].get<float>()}; }

// The same distance, bit for bit; the same pair, unless several are that close (then the one
// found must be at that distance too, as one process may return any of them).
void check_same_answer(const json& expected, const json& found, int ranks) {
  INFO("ranks: " << ranks << "\nexpected: " << expected.dump() << "\nfound: " << found.dump());
  CHECK(found["n"] == expected["n"]);
  CHECK(found["mpi_ranks"] == ranks);
  CHECK(found["distance"].get<double>() == expected["distance"].get<double>());
  CHECK(found["i"].get<std::uint64_t>() < found["j"].get<std::uint64_t>());
  CHECK(ptxrt::host::point_distance(point_of(found["point_i"]), point_of(found["point_j"])) ==
        found["distance"].get<double>());
  if (found["i"] != expected["i"] || found["j"] != expected["j"])
    MESSAGE("a tie: another pair at the same distance");
  std::uint64_t slab_points = 0;
  for (const json& rank : found["ranks"]) slab_points += rank["slab_points"].get<std::uint64_t>();
  CHECK(slab_points == found["n"].get<std::uint64_t>());
}

// One rank splits nothing: its solver sees the points of one process, in their order, and so
// returns the very pair one process does, ties included.
void check_every_rank_count(const ScratchDirectory& scratch,
                            const std::vector<std::string>& arguments) {
  const json expected = one_process(scratch, arguments);
  const json one_rank = distributed(scratch, 1, arguments);
  check_same_answer(expected, one_rank, 1);
  CHECK(one_rank["i"] == expected["i"]);
  CHECK(one_rank["j"] == expected["j"]);
  for (int ranks : {2, 4})
    check_same_answer(expected, distributed(scratch, ranks, arguments), ranks);
}

void write_binary(const std::filesystem::path& path, const std::vector<Point2>& points) {
  std::ofstream file(path, std::ios::binary);
  // The format is little-endian float32 pairs, as this host's own layout.
  file.write(reinterpret_cast<const char*>(points.data()),
             static_cast<std::streamsize>(points.size() * sizeof(Point2)));
}

void write_csv(const std::filesystem::path& path, const std::vector<Point2>& points) {
  std::ofstream file(path);
  file << "x,y\n";
  file.precision(9);
  for (const Point2& point : points) file << point.x << ',' << point.y << '\n';
}

}  // namespace

TEST_CASE(
    "distributed closest pair: 1, 2 and 4 ranks find the one-process pair of uniform points") {
  ScratchDirectory scratch;
  check_every_rank_count(
      scratch, {"--n", "30011", "--dist", "uniform", "--seed", "3", "--method", "cpu-dc"});
}

TEST_CASE(
    "distributed closest pair: 1, 2 and 4 ranks find the one-process pair of clustered points") {
  ScratchDirectory scratch;
  check_every_rank_count(
      scratch, {"--n", "20000", "--dist", "clustered", "--seed", "4", "--method", "cpu-blocked"});
}

TEST_CASE("distributed closest pair: points on one vertical line still spread over the ranks") {
  ScratchDirectory scratch;
  std::vector<Point2> points =
      ptxrt::host::generate_points(6007, ptxrt::host::PointDistribution::uniform, 5);
  for (Point2& point : points) point.x = 0.5f;
  const std::filesystem::path file = scratch.path() / "line.bin";
  write_binary(file, points);
  check_every_rank_count(scratch, {"--input", file.string(), "--method", "cpu-dc"});
  const json split = distributed(scratch, 4, {"--input", file.string(), "--method", "cpu-dc"});
  for (const json& rank : split["ranks"]) CHECK(rank["slab_points"].get<std::uint64_t>() > 1000);
}

TEST_CASE("distributed closest pair: columns of points sharing an x are cut between slabs") {
  ScratchDirectory scratch;
  // 7 columns of about 860 points: 4 slabs' splitters fall inside columns, so points of one x
  // lie on both sides of a border, and the closest pair may be across it.
  std::vector<Point2> points =
      ptxrt::host::generate_points(6007, ptxrt::host::PointDistribution::uniform, 8);
  for (Point2& point : points) point.x = std::floor(point.x * 7.0f) / 7.0f;
  const std::filesystem::path file = scratch.path() / "columns.bin";
  write_binary(file, points);
  check_every_rank_count(scratch, {"--input", file.string(), "--method", "cpu-blocked"});
}

TEST_CASE("distributed closest pair: duplicates give distance 0, whichever slabs they fall in") {
  ScratchDirectory scratch;
  // Every point twice, at index k and k + n: wherever a slab border falls, it may cut a pair.
  std::vector<Point2> points =
      ptxrt::host::generate_points(4001, ptxrt::host::PointDistribution::uniform, 6);
  const std::vector<Point2> copies = points;
  points.insert(points.end(), copies.begin(), copies.end());
  const std::filesystem::path csv = scratch.path() / "twice.csv";
  write_csv(csv, points);
  check_every_rank_count(scratch, {"--input", csv.string(), "--method", "cpu-dc"});
  const json found = distributed(scratch, 4, {"--input", csv.string(), "--method", "cpu-dc"});
  CHECK(found["distance"].get<double>() == 0.0);
  CHECK(found["j"].get<std::uint64_t>() - found["i"].get<std::uint64_t>() == 4001);
}

TEST_CASE(
    "distributed closest pair: more ranks than points leaves slabs empty, and the answer whole") {
  ScratchDirectory scratch;
  const std::filesystem::path file = scratch.path() / "three.bin";
  write_binary(file, {{0.0f, 0.0f}, {3.0f, 4.0f}, {1.0f, 1.0f}});
  const json found = distributed(scratch, 4, {"--input", file.string(), "--method", "cpu-brute"});
  CHECK(found["i"] == 0);
  CHECK(found["j"] == 2);
  CHECK(found["distance"].get<double>() == ptxrt::host::point_distance({0, 0}, {1, 1}));
  int empty = 0;
  for (const json& rank : found["ranks"]) empty += rank["slab_points"] == 0;
  CHECK(empty >= 1);
  check_every_rank_count(scratch, {"--n", "3", "--method", "cpu-dc"});
}

TEST_CASE("distributed closest pair: --verify compares with one process on the whole set") {
  ScratchDirectory scratch;
  const json found = distributed(scratch, 2, {"--n", "5000", "--method", "cpu-dc", "--verify"});
  CHECK(found["verify"]["agrees"] == true);
  CHECK(found["verify"]["distance"] == found["distance"]);
}

TEST_CASE("distributed closest pair: an unreadable file ends the job with an error naming it") {
  ScratchDirectory scratch;
  const std::string missing = (scratch.path() / "missing.bin").string();
  const ProcessResult result =
      mpirun(2, {PTXRT_CLI_PATH, "closest-pair", "--mpi", "--input", missing, "--method", "cpu-dc"},
             with_cache(scratch));
  CHECK(result.exit_code != 0);
  CHECK_MESSAGE(contains(result.output, "of 2 on "), result.output);
  CHECK_MESSAGE(contains(result.output, "point file '" + missing + "': no such file"),
                result.output);
}

TEST_CASE(
    "distributed closest pair and tune: a rank that cannot get a GPU names itself and ends the "
    "job") {
  ScratchDirectory scratch;
  if (!contains(ptxrt::testing::run_process({PTXRT_CLI_PATH, "devices"}).output,
                "No usable CUDA device")) {
    MESSAGE("skipped: this machine has a GPU");
    return;
  }
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{PTXRT_CLI_PATH, "closest-pair", "--mpi", "--n", "5000", "--method",
                                 "grid"},
        std::vector<std::string>{PTXRT_CLI_PATH, "tune", "matmul", "--mpi", "--size", "64", "--db",
                                 (scratch.path() / "tuning.json").string()}}) {
    const ProcessResult result = mpirun(2, command, with_cache(scratch));
    CHECK(result.exit_code != 0);
    CHECK_MESSAGE(contains(result.output, "ptxrt: error: rank "), result.output);
    CHECK_MESSAGE(contains(result.output, " of 2 on "), result.output);
    CHECK_MESSAGE(contains(result.output, ": no CUDA"), result.output);
  }
}

TEST_CASE("distributed closest pair: a rank bound to one of several CPUs warns, naming the fix") {
  if (std::thread::hardware_concurrency() < 2) {
    MESSAGE("skipped: this machine has one CPU, so binding takes nothing away");
    return;
  }
  ScratchDirectory scratch;
  const std::vector<std::string> solve{PTXRT_CLI_PATH, "closest-pair", "--mpi", "--n",
                                       "1000",         "--method",     "cpu-dc"};
  // The later --bind-to wins: Open MPI's default for 2 ranks, one core each.
  std::vector<std::string> bound{"--bind-to", "core"};
  bound.insert(bound.end(), solve.begin(), solve.end());
  const ProcessResult warned = mpirun(2, bound, with_cache(scratch));
  REQUIRE_MESSAGE(warned.exit_code == 0, warned.output);
  CHECK_MESSAGE(contains(warned.output, "ptxrt: warning: rank 0 of 2 on "), warned.output);
  CHECK_MESSAGE(contains(warned.output, "ptxrt: warning: rank 1 of 2 on "), warned.output);
  CHECK_MESSAGE(contains(warned.output, " may use 1 of the node's "), warned.output);
  CHECK_MESSAGE(contains(warned.output, "`mpirun --bind-to none`"), warned.output);
  // The tests' own mpirun command binds nothing.
  const ProcessResult unbound = mpirun(2, solve, with_cache(scratch));
  REQUIRE_MESSAGE(unbound.exit_code == 0, unbound.output);
  CHECK_MESSAGE(!contains(unbound.output, "ptxrt: warning:"), unbound.output);
}
