// The SGEMM sweep against cuBLAS SGEMM measured in the same process, for docs/perf-notes.md: the
// bench of `ptxrt bench sgemm` (apps/matmul/sgemm_bench.hpp) with the options a sweep needs
// beside it (--launches-per-sample, and --all for every listed config at every shape). Exits 1
// when a check fails or a config cannot run, 77 (skipped) without a GPU.
//
//   ptxrt_sgemm_bench [--shape MxNxK ...] [--rounds 2] [--repeat 10] [--launches-per-sample N]
//                     [--all] [--db tuning.json] [--seed 1]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "apps/matmul/sgemm_bench.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"

namespace apps = ptxrt::apps;

namespace {

constexpr int skipped = 77;

struct Arguments {
  std::vector<std::string> shapes;
  std::string database;
  apps::SgemmBenchOptions options;
};

int bench(const Arguments& arguments) {
  std::vector<apps::SgemmBenchSize> sizes;
  for (const std::string& text : arguments.shapes)
    sizes.push_back(*apps::parse_sgemm_bench_size(text));
  if (sizes.empty()) sizes = apps::sgemm_bench_sizes();
  apps::SgemmBenchOptions options = arguments.options;
  std::optional<ptxrt::TuningDatabase> database;
  if (!arguments.database.empty()) {
    database.emplace(std::filesystem::path(arguments.database));
    options.database = &*database;
  }
  const ptxrt::Context context = ptxrt::Context::primary(0);
  const std::vector<apps::SgemmBenchShape> shapes =
      apps::run_sgemm_bench(context, ptxrt::Jit::shared(), sizes, options, std::cout);
  std::cout << "\nbest per shape (median of " << options.rounds << " round medians):\n";
  apps::print_sgemm_bench_summary(std::cout, shapes);
  bool passed = true;
  for (const apps::SgemmBenchShape& shape : shapes) passed = passed && shape.passed();
  std::cout << (passed ? "all outputs verified" : "FAILED: see the rows marked FAIL") << '\n';
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments;
  apps::SgemmBenchOptions& options = arguments.options;
  CLI::App app("SGEMM configs against cuBLAS SGEMM, measured in one process");
  app.add_option("--shape", arguments.shapes,
                 "MxNxK; repeatable (default: the twelve of docs/perf-notes.md)")
      ->check([](const std::string& text) {
        return apps::parse_sgemm_bench_size(text) ? std::string()
                                                  : "expected MxNxK with positive sizes";
      });
  app.add_option("--rounds", options.rounds, "Rounds over all configs")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--repeat", options.repeat, "Timed samples per config and round")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--launches-per-sample", options.launches_per_sample,
                 "Back-to-back launches per timed sample (default: enough for about 2 ms)")
      ->check(CLI::Range(1, 10000));
  app.add_flag("--all", options.every_listed,
               "Every listed config at every shape, not just the shape's candidates");
  app.add_option("--db", arguments.database,
                 "A tuning database whose winner for each shape joins as 'tuned'");
  app.add_option("--seed", options.seed, "Seed of the random inputs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (const ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::printf("sgemm bench: skipped (%s)\n", status.problem.c_str());
    return skipped;
  }
  try {
    return bench(arguments);
  } catch (const ptxrt::Error& error) {
    std::fprintf(stderr, "sgemm bench: %s\n", error.what());
    return 1;
  }
}
