// `ptxrt bench sgemm`: the SGEMM family at each shape (--shape, repeatable; --random N, drawn
// from --seed; default the twelve of docs/perf-notes.md) against cuBLAS in the same process:
// the family's default there, the best listed config, and the tuning database's winner for the
// shape when there is one (apps/matmul/sgemm_bench.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace ptxrt::tools {

struct SgemmBenchArguments {
  std::vector<std::string> shapes;  // MxNxK; checked by check_sgemm_shape
  int random = 0;                   // shapes drawn from seed (apps/matmul/sgemm_shapes.hpp)
  std::string drawn_class;          // empty: the classes in turn; else every draw of this one
  int rounds = 2;
  int repeat = 0;  // 0: 10, or 3 with quick
  bool every_listed = false;
  bool menu = false;  // the heuristic's menu at every split too (apps::sgemm_menu_configs)
  std::vector<std::string> configs;  // NAME=VALUE,...; checked by apps::parse_sgemm_bench_config
  bool quick = false;                // 1024³ and 2048³, one round, 3 samples
  std::string database;              // empty: TuningDatabase::default_path()
  std::string padding = "auto";      // auto, always or never (SgemmPadding)
  bool json = false;
  std::uint64_t seed = 1;
  int device = 0;
};

// The options only `bench sgemm` takes, added to the bench command.
void add_sgemm_bench_options(CLI::App& command, SgemmBenchArguments& arguments);

// Whether any of the sgemm-only options was given (they are an error without the sgemm work).
bool sgemm_bench_options_given(const CLI::App& command);

// Reads the database, then runs and prints the per-shape tables and the summary (or the JSON of
// sgemm_bench_json). Returns whether every output verified.
bool run_sgemm_bench_command(const SgemmBenchArguments& arguments);

}  // namespace ptxrt::tools
