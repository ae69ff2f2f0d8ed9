// `ptxrt closest-pair`: the closest pair of generated or file points by any method, with
// verification against the CPU divide & conquer, JSON output, and the benchmark table (--bench);
// with --mpi, of a set spread over the ranks of an MPI job (tools/mpi/closest_pair_ranks.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"

namespace ptxrt::cli {

struct ClosestPairArguments {
  std::size_t n = 1'000'000;
  std::string distribution = "uniform";
  std::uint64_t seed = 1;
  std::string input;
  std::string method = "auto";
  std::vector<std::string> defines;
  std::size_t cpu_block = 256;
  bool verify = false;
  bool json = false;
  bool bench = false;
  std::size_t bench_max_n = 100'000'000;
  // host | pinned | device: where the points are when a call starts; empty: device for a
  // generated set and a GPU method, else host
  std::string from;
  int repeat = 1;  // calls in one process
  bool mpi = false;
  std::string devices;  // --mpi: the GPUs the ranks of a node take turns on; empty: all
  bool tuned = false;
  std::string database;  // --tuned: the tuning database; empty: the default
};

void add_closest_pair_command(CLI::App& app);

// The options -D and --block give the methods. Error (invalid_argument) for a define other than
// BASE, or a BASE that is not a number.
apps::ClosestPairOptions closest_pair_options(const ClosestPairArguments& arguments);
// "generated uniform, seed 1" or the input file, for the report.
std::string describe_input(const ClosestPairArguments& arguments);
// "(0.25, 0.5)" with enough digits to tell floats apart.
std::string describe_point(const apps::Point2& point);

// --mpi: one rank's part of the run (tools/mpi/closest_pair_ranks.cpp), or, in a ptxrt built
// without MPI, Error (invalid_argument) saying so (tools/mpi/without_mpi.cpp).
void run_closest_pair_as_rank(const ClosestPairArguments& arguments);

}  // namespace ptxrt::cli
