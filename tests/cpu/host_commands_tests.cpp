// `ptxrt run` and `ptxrt bench` as whole processes: usage errors exit 2 (CLI11), invalid sizes
// and defines exit 1 with one clear line, and all of it before the driver is touched, so the
// answers are the same with or without a GPU. A driver that cannot work (the toolkit's stub)
// gives one line and exit 1. Sizes of 0, negative or overflowing, and define values outside the
// manifest are rows of bad_input_tests.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "process.hpp"

using ptxrt::testing::run_process;

namespace {

const std::string cli = PTXRT_CLI_PATH;

struct Expectation {
  std::vector<std::string> arguments;
  int exit_code;
  std::string message;
};

void check_cli(const Expectation& expected) {
  std::vector<std::string> arguments{cli};
  arguments.insert(arguments.end(), expected.arguments.begin(), expected.arguments.end());
  const auto result = run_process(arguments);
  INFO(result.output);
  CHECK(result.exit_code == expected.exit_code);
  CHECK(result.output.find(expected.message) != std::string::npos);
}

}  // namespace

TEST_CASE("ptxrt run rejects bad arguments before touching the driver") {
  if (cli.empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  const std::vector<Expectation> cases{
      {{"run"}, 2, "program is required"},
      {{"run", "fft"},
       1,
       "'fft' is neither a file nor a builtin program (builtin: aos-soa, histogram, matadd, "
       "matmul, "
       "raytrace, reduce, sgemm, simpson, sort, transpose, vecadd)"},
      {{"run", "matmul", "--variant", "naive", "-D", "TILE_WIDTH=16"},
       1,
       "-D TILE_WIDTH: matmul_naive.cu declares no such constant (it takes BLOCK_SIZE)"},
      {{"run", "matmul", "-D", "1TILE=4"}, 1, "is not a C identifier"},
      {{"run", "transpose", "-D", "TILE_DIM=16", "-D", "BLOCK_ROWS=32"},
       1,
       "BLOCK_ROWS=32 must divide TILE_DIM=16"},
      {{"run", "reduce", "--variant", "max"},
       1,
       "reduce variant 'max' is unknown: expected sum, argmin or cooperative"},
      {{"run", "histogram", "--variant", "warp"},
       1,
       "histogram variant 'warp' is unknown: expected block or cluster"},
      {{"run", "histogram", "-D", "CLUSTER_SIZE=3"}, 1, "CLUSTER_SIZE"},
      {{"run", "vecadd", "--k", "3"}, 1, "--k does not apply to vecadd"},
      {{"run", "vecadd", "--variant", "fast"}, 1, "vecadd has no variants"},
      {{"run", "simpson", "--n", "7"}, 1, "simpson n must be even and at least 2"},
      {{"run", "raytrace", "--spheres", "65"}, 1, "raytrace spheres = 65 exceeds MAX_SPHERES=64"},
      {{"run", "sort", "--repeat", "0"}, 2, "--repeat: Value 0 not in range"},
      {{"run", "sort", "--device", "-1"}, 2, "--device"},
  };
  for (const Expectation& expected : cases) {
    CAPTURE(expected.arguments);
    check_cli(expected);
  }
}

TEST_CASE("ptxrt multi-gpu rejects unknown host memory and transfers before touching the driver") {
  if (cli.empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  check_cli({{"multi-gpu", "matmul", "--transfers", "fast"},
             2,
             "--transfers: fast not in {overlapped,synchronous}"});
  check_cli({{"multi-gpu", "closest-pair", "--host-memory", "shared"},
             2,
             "--host-memory: shared not in {pinned,pageable}"});
}

TEST_CASE("ptxrt bench rejects an unknown work and a zero repeat count") {
  if (cli.empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  check_cli({{"bench", "fft"}, 2, "work: fft not in {matmul,transpose,reduce,vecadd,sgemm}"});
  check_cli({{"bench", "--repeat", "0"}, 2, "--repeat: Value 0 not in range"});
}

TEST_CASE("ptxrt run sgemm checks sizes, defines and --tuned before touching the driver") {
  if (cli.empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  const auto corrupt =
      std::filesystem::temp_directory_path() / ("ptxrt-sgemm-db-" + std::to_string(getpid()));
  {
    std::ofstream file(corrupt);
    file << "{\"tunes\": [";
  }
  const std::vector<Expectation> cases{
      {{"run", "sgemm", "--m", "0"}, 1, "sgemm m must be at least 1, got 0"},
      {{"run", "sgemm", "--k", "4294967296"}, 1, "sgemm k = 4294967296 exceeds"},
      {{"run", "sgemm", "-D", "TM=12"},
       1,
       "TM=12 is not valid for sgemm.cu: expected one of 4, 8, 16"},
      {{"run", "sgemm", "-D", "TILE_WIDTH=16"},
       1,
       "-D TILE_WIDTH: sgemm.cu declares no such constant"},
      {{"run", "sgemm", "--tuned", "-D", "TM=8"}, 1, "--tuned picks the defines itself: drop -D"},
      {{"run", "sgemm", "--variant", "fast"}, 1, "sgemm has no variants"},
      {{"run", "sgemm", "--width", "3"}, 1, "--width does not apply to sgemm"},
      {{"run", "sgemm", "--db", corrupt.string()}, 1, "--db applies with --tuned"},
      {{"run", "sgemm", "--tuned", "--db", corrupt.string()},
       1,
       "tuning database '" + corrupt.string() + "' is corrupt"},
  };
  for (const Expectation& expected : cases) {
    CAPTURE(expected.arguments);
    check_cli(expected);
  }
  std::filesystem::remove(corrupt);
}

TEST_CASE("ptxrt bench sgemm checks its shapes and options before touching the driver") {
  if (cli.empty()) {
    MESSAGE("the CLI is not built");
    return;
  }
  const std::vector<Expectation> cases{
      {{"bench", "sgemm", "--shape", "64x64"}, 2, "expected MxNxK with sizes from 1 to 2^31-1"},
      {{"bench", "sgemm", "--shape", "0x64x64"}, 2, "expected MxNxK"},
      {{"bench", "sgemm", "--rounds", "0"}, 2, "--rounds"},
      {{"bench", "sgemm", "--random", "0"}, 2, "--random: Value 0 not in range 1 to 1000"},
      {{"bench", "sgemm", "--random", "1001"}, 2, "--random: Value 1001 not in range"},
      {{"bench", "sgemm", "--random", "-3"}, 2, "--random"},
      {{"bench", "sgemm", "--random", "3", "--shape", "64x64x64"}, 2, "excludes"},
      {{"bench", "sgemm", "--class", "ragged"}, 2, "--class requires --random"},
      {{"bench", "sgemm", "--random", "3", "--class", "square"},
       2,
       "expected log-uniform, deep, skinny, flat, ragged or small-square"},
      {{"bench", "matmul", "--random", "3", "--class", "deep"},
       1,
       "--shape, --random, --class, --rounds, --all, --menu, --config, --db and --padding apply "
       "to the sgemm work"},
      {{"bench", "matmul", "--shape", "64x64x64"},
       1,
       "--shape, --random, --class, --rounds, --all, --menu, --config, --db and --padding apply "
       "to the sgemm work"},
      {{"bench", "sgemm", "--padding", "sometimes"},
       2,
       "--padding: sometimes not in {always,auto,never}"},
      {{"bench", "matmul", "--padding", "never"},
       1,
       "--shape, --random, --class, --rounds, --all, --menu, --config, --db and --padding apply "
       "to the sgemm work"},
      {{"bench", "matmul", "--random", "3"},
       1,
       "--shape, --random, --class, --rounds, --all, --menu, --config, --db and --padding apply "
       "to the sgemm work"},
      {{"bench", "sgemm", "--config", "WARPS_M=3"}, 2, "WARPS_M=3 is not valid for sgemm.cu"},
      {{"bench", "sgemm", "--config", "TILE=16"}, 2, "sgemm.cu declares no such constant"},
      {{"bench", "sgemm", "--config", ""}, 2, "expected NAME=VALUE,... of sgemm.cu's constants"},
      // One value an occurrence: what follows is the work, not another config or shape.
      {{"bench", "sgemm", "--config", "TM=4", "TN=4"}, 2, "work: TN=4 not in"},
      {{"bench", "sgemm", "--shape", "64x64x64", "32x32x32"}, 2, "work: 32x32x32 not in"},
      {{"bench", "matmul", "--config", "TM=4"},
       1,
       "--shape, --random, --class, --rounds, --all, --menu, --config, --db and --padding apply "
       "to the sgemm work"},
      {{"bench", "sgemm", "matmul", "--json"},
       1,
       "bench sgemm --json prints its own document: run sgemm alone"},
  };
  for (const Expectation& expected : cases) {
    CAPTURE(expected.arguments);
    check_cli(expected);
  }
}

TEST_CASE("ptxrt run with an unusable driver says so in one line and exits 1") {
  const std::filesystem::path stub =
      std::filesystem::path(PTXRT_CUDA_LIBRARY_DIR) / "stubs" / "libcuda.so";
  if (cli.empty() || !std::filesystem::exists(stub)) {
    MESSAGE("the CLI is not built or there is no stub library at " << stub.string());
    return;
  }
  // A folder where libcuda.so.1 is the toolkit's stub: ahead of any real driver on the path.
  const auto folder =
      std::filesystem::temp_directory_path() / ("ptxrt-run-stub-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::filesystem::create_symlink(stub, folder / "libcuda.so.1");
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{cli, "run", "vecadd", "--n", "100", "--verify"},
        std::vector<std::string>{cli, "bench", "--quick"},
        std::vector<std::string>{cli, "run", "sgemm", "--m", "100", "--verify"},
        std::vector<std::string>{cli, "run", "sgemm", "--tuned", "--db",
                                 (folder / "tuning.json").string()},
        std::vector<std::string>{cli, "bench", "sgemm", "--shape", "100x100x100"}}) {
    const auto result = run_process(command, {"LD_LIBRARY_PATH=" + folder.string()});
    INFO(result.output);
    CHECK(result.exit_code == 1);
    CHECK(result.output.find("stub library") != std::string::npos);
    CHECK(result.output.find('\n') == result.output.size() - 1);
  }
  std::filesystem::remove_all(folder);
}
