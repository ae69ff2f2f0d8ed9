#include "tools/bench_sgemm.hpp"

#include <filesystem>
#include <iostream>
#include <map>

#include "apps/matmul/sgemm_bench.hpp"
#include "apps/matmul/sgemm_shapes.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "tools/cli.hpp"

namespace ptxrt::tools {

namespace {

constexpr int quick_repeat = 3;
// --menu's shallowest slice: four BK tiles of 16, where the measured winners of products with K
// of a few hundred lie (docs/perf-notes.md, the H200's held-out seed).
constexpr int menu_min_slice_depth = 64;

const std::map<std::string, SgemmPadding> sgemm_paddings{{"auto", SgemmPadding::automatic},
                                                         {"always", SgemmPadding::always},
                                                         {"never", SgemmPadding::never}};

std::vector<apps::SgemmDrawnShape> drawn_shapes(const SgemmBenchArguments& arguments) {
  if (arguments.random == 0) return {};
  return apps::draw_sgemm_shapes(arguments.random, arguments.seed,
                                 arguments.drawn_class.empty()
                                     ? std::nullopt
                                     : apps::parse_sgemm_drawn_class(arguments.drawn_class));
}

std::vector<apps::SgemmBenchSize> sizes_of(const SgemmBenchArguments& arguments,
                                           const std::vector<apps::SgemmDrawnShape>& drawn) {
  if (!drawn.empty()) {
    std::vector<apps::SgemmBenchSize> sizes;
    for (const apps::SgemmDrawnShape& shape : drawn) sizes.push_back(shape.size);
    return sizes;
  }
  if (arguments.quick && arguments.shapes.empty()) return {{1024, 1024, 1024}, {2048, 2048, 2048}};
  if (arguments.shapes.empty()) return apps::sgemm_bench_sizes();
  std::vector<apps::SgemmBenchSize> sizes;
  for (const std::string& text : arguments.shapes)
    sizes.push_back(*apps::parse_sgemm_bench_size(text));
  return sizes;
}

}  // namespace

void add_sgemm_bench_options(CLI::App& command, SgemmBenchArguments& arguments) {
  command
      .add_option("--shape", arguments.shapes,
                  "sgemm: MxNxK, repeatable (default: the twelve shapes of docs/perf-notes.md)")
      ->check([](const std::string& text) {
        return apps::parse_sgemm_bench_size(text) ? std::string()
                                                  : "expected MxNxK with sizes from 1 to 2^31-1";
      })
      ->allow_extra_args(false);
  command
      .add_option("--random", arguments.random,
                  "sgemm: N shapes drawn from --seed instead (half log-uniform M, N, K in [16, "
                  "16384], half the classes in turn: deep K, skinny, flat, ragged, small squares)")
      ->check(CLI::Range(1, 1000))
      ->excludes("--shape");
  command
      .add_option("--class", arguments.drawn_class,
                  "sgemm: every --random shape of one class: log-uniform, deep, skinny, flat, "
                  "ragged or small-square")
      ->check([](const std::string& text) {
        return apps::parse_sgemm_drawn_class(text)
                   ? std::string()
                   : "expected log-uniform, deep, skinny, flat, ragged or small-square";
      })
      ->needs("--random");
  command.add_option("--rounds", arguments.rounds, "sgemm: rounds over the configs of a shape")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  command.add_flag("--all", arguments.every_listed,
                   "sgemm: every listed config at every shape, not just the shape's candidates");
  command.add_flag("--menu", arguments.menu,
                   "sgemm: also every config the shape heuristic chooses among, at every split "
                   "whose slices are 64 deep or more (data for refitting it)");
  command
      .add_option("--config", arguments.configs,
                  "sgemm: a config of your own, NAME=VALUE,... of sgemm.cu's constants (the others "
                  "at their defaults), timed at every shape as a 'given' row; repeatable")
      ->check([](const std::string& text) {
        try {
          apps::parse_sgemm_bench_config(text);
          return std::string();
        } catch (const ptxrt::Error& error) {
          return std::string(error.what());
        }
      })
      ->allow_extra_args(false);
  command.add_option("--db", arguments.database,
                     "sgemm: the tuning database whose winner for each shape joins as 'tuned' "
                     "(default: $PTXRT_TUNING_DB, else tuning.json in the cache folder)");
  command
      .add_option("--padding", arguments.padding,
                  "sgemm: whether a B whose rows are not 16-byte aligned (N % 4 != 0) is first "
                  "copied to padded rows, for every row timed: auto (where sgemm() would), "
                  "always or never")
      ->check(CLI::IsMember(sgemm_paddings))
      ->capture_default_str();
}

bool sgemm_bench_options_given(const CLI::App& command) {
  for (const char* option :
       {"--shape", "--random", "--class", "--rounds", "--all", "--menu", "--config", "--db", "--padding"})
    if (command.count(option)) return true;
  return false;
}

bool run_sgemm_bench_command(const SgemmBenchArguments& arguments) {
  const TuningDatabase database(cli::database_path(arguments.database));
  database.records();  // a corrupt database fails before the GPU work
  apps::SgemmBenchOptions options;
  options.rounds = arguments.quick ? 1 : arguments.rounds;
  options.repeat = arguments.repeat > 0 ? arguments.repeat : arguments.quick ? quick_repeat : 10;
  options.every_listed = arguments.every_listed;
  options.menu_min_slice_depth = arguments.menu ? menu_min_slice_depth : 0;
  options.seed = arguments.seed;
  options.database = &database;
  options.padding = sgemm_paddings.at(arguments.padding);
  const Context context = Context::primary(arguments.device);
  const DeviceProperties& device = context.device().properties();
  for (const std::string& text : arguments.configs) {
    options.given.push_back(apps::parse_sgemm_bench_config(text));
    if (const Verdict fits = sgemm_config_fits(options.given.back(), device); !fits)
      throw Error(ErrorKind::invalid_argument,
                  "--config " + text + " does not suit " + device.name + ": " + fits.reason());
  }
  const std::vector<apps::SgemmDrawnShape> drawn = drawn_shapes(arguments);
  // With --json each shape's table still goes out as it finishes, on stderr: a run stopped
  // before the end (a time limit, a lost machine) keeps the shapes it measured.
  std::vector<apps::SgemmBenchShape> shapes =
      apps::run_sgemm_bench(context, Jit::shared(), sizes_of(arguments, drawn), options,
                            arguments.json ? std::cerr : std::cout);
  if (arguments.json) {
    nlohmann::json report = apps::sgemm_bench_json(context.device().properties(), shapes);
    report["padding"] = arguments.padding;
    if (!drawn.empty()) {
      report["random"] = {{"count", arguments.random}, {"seed", arguments.seed}};
      if (!arguments.drawn_class.empty()) report["random"]["class"] = arguments.drawn_class;
      for (std::size_t i = 0; i < drawn.size(); ++i)
        report["shapes"][i]["drawn"] = apps::to_string(drawn[i].drawn);
    }
    cli::print_json(std::cout, report);
  } else {
    std::cout << "\nsgemm against cuBLAS SGEMM in the same run:\n";
    apps::print_sgemm_bench_summary(std::cout, shapes);
  }
  bool passed = true;
  for (const apps::SgemmBenchShape& shape : shapes) passed = passed && shape.passed();
  if (!arguments.json)
    std::cout << (passed ? "all outputs verified\n" : "FAILED: see the rows marked FAIL\n");
  return passed;
}

}  // namespace ptxrt::tools
