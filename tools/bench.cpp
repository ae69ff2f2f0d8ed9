// `ptxrt bench [work...]`: the classic kernels against peers measured in the same run, as a
// table (or JSON) of time, rate, the peer's rate, the ratio and the verification verdict.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/benchmark.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/manifest.hpp"
#include "tools/bench_sgemm.hpp"
#include "tools/cli.hpp"
#include "tools/host_commands.hpp"

namespace apps = ptxrt::apps;

namespace {

struct BenchArguments {
  std::vector<std::string> works;
  bool json = false;
  bool quick = false;
  int repeat = 0;  // 0: the size set's own
  std::uint64_t seed = 1;
  int device = 0;
  ptxrt::tools::SgemmBenchArguments sgemm;  // its own options; json, quick, repeat, seed, device
};

// The works the command takes: the classic ones, and sgemm (not in the default set: minutes).
std::vector<std::string> known_works() {
  std::vector<std::string> works = apps::bench_names();
  works.push_back("sgemm");
  return works;
}

std::string verdict(const apps::Run& run) {
  return !run.verified ? "unchecked" : run.passed() ? "PASS" : "FAIL";
}

std::string kernel_label(const apps::Run& run) {
  return run.kernel + " " + ptxrt::format_defines(run.defines);
}

void print_table(const std::vector<apps::BenchRow>& rows) {
  std::printf("%-26s %-38s %10s %16s %16s %7s  %-9s %s\n", "work", "kernel", "time ms", "rate",
              "peer rate", "ratio", "check", "peer");
  for (const apps::BenchRow& row : rows) {
    char rate[32], peer_rate[32] = "-", ratio[16] = "-";
    std::snprintf(rate, sizeof rate, "%.1f %s", row.run.rate, row.run.rate_unit.c_str());
    if (row.peer_rate)
      std::snprintf(peer_rate, sizeof peer_rate, "%.1f %s", *row.peer_rate,
                    row.run.rate_unit.c_str());
    if (const auto value = row.ratio()) std::snprintf(ratio, sizeof ratio, "%.3f", *value);
    std::printf("%-26s %-38s %10.3f %16s %16s %7s  %-9s %s\n", row.work.c_str(),
                kernel_label(row.run).c_str(), row.run.median_ms, rate, peer_rate, ratio,
                verdict(row.run).c_str(), row.peer.c_str());
  }
  for (const apps::BenchRow& row : rows)
    if (!row.run.passed())
      std::printf("FAIL %s %s: error %.3g > %.3g (%s) %s\n", row.work.c_str(),
                  kernel_label(row.run).c_str(), row.run.max_error, row.run.tolerance,
                  row.run.error_measure.c_str(), row.run.note.c_str());
}

nlohmann::json rows_to_json(const std::vector<apps::BenchRow>& rows) {
  nlohmann::json json = nlohmann::json::array();
  for (const apps::BenchRow& row : rows) {
    nlohmann::json entry = ptxrt::tools::run_to_json(row.run);
    entry["work"] = row.work;
    entry["peer"] = row.peer;
    entry["peer_rate"] = row.peer_rate ? nlohmann::json(*row.peer_rate) : nlohmann::json();
    const auto ratio = row.ratio();
    entry["ratio"] = ratio ? nlohmann::json(*ratio) : nlohmann::json();
    json.push_back(std::move(entry));
  }
  return json;
}

// sgemm with the options it shares with the other works.
bool execute_sgemm(const BenchArguments& arguments) {
  ptxrt::tools::SgemmBenchArguments sgemm = arguments.sgemm;
  sgemm.json = arguments.json;
  sgemm.quick = arguments.quick;
  sgemm.repeat = arguments.repeat;
  sgemm.seed = arguments.seed;
  sgemm.device = arguments.device;
  return ptxrt::tools::run_sgemm_bench_command(sgemm);
}

void execute(const CLI::App& command, BenchArguments arguments) {
  const auto sgemm = std::find(arguments.works.begin(), arguments.works.end(), "sgemm");
  const bool with_sgemm = sgemm != arguments.works.end();
  if (!with_sgemm && ptxrt::tools::sgemm_bench_options_given(command))
    throw ptxrt::Error(ptxrt::ErrorKind::invalid_argument,
                       "--shape, --random, --class, --rounds, --all, --menu, --config, --db and "
                       "--padding apply to the sgemm work");
  if (with_sgemm) {
    arguments.works.erase(sgemm);
    if (arguments.json && !arguments.works.empty())
      throw ptxrt::Error(ptxrt::ErrorKind::invalid_argument,
                         "bench sgemm --json prints its own document: run sgemm alone");
    const bool passed = execute_sgemm(arguments);
    if (arguments.works.empty()) {
      if (!passed) throw CLI::RuntimeError(1);
      return;
    }
  }
  apps::BenchSizes sizes = arguments.quick ? apps::BenchSizes::quick() : apps::BenchSizes{};
  if (arguments.repeat > 0) sizes.repeats = arguments.repeat;
  const std::vector<std::string>& works =
      arguments.works.empty() ? apps::bench_names() : arguments.works;
  const ptxrt::Context context = ptxrt::Context::primary(arguments.device);
  std::vector<apps::BenchRow> rows;
  for (const std::string& work : works)
    for (apps::BenchRow& row :
         apps::bench(ptxrt::Jit::shared(), context, work, sizes, arguments.seed))
      rows.push_back(std::move(row));
  if (arguments.json)
    ptxrt::cli::print_json(std::cout, rows_to_json(rows));
  else
    print_table(rows);
  for (const apps::BenchRow& row : rows)
    if (!row.run.passed()) throw CLI::RuntimeError(1);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "bench",
      "Benchmark the classic kernels against peers measured in the same run (cuBLAS "
      "SGEMM, device-to-device copy bandwidth), each output verified once; sgemm: the SGEMM "
      "family's default, best listed and tuned configs per shape against cuBLAS");
  auto arguments = std::make_shared<BenchArguments>();
  command
      ->add_option("work", arguments->works,
                   "What to benchmark (default: all but sgemm, which takes minutes)")
      ->check(CLI::IsMember(known_works()));
  command->add_flag("--json", arguments->json,
                    "Print the rows as JSON (sgemm: each shape's table still goes to stderr as it "
                    "finishes)");
  command->add_flag("--quick", arguments->quick,
                    "Small sizes for a smoke run (matmul 1024^3, transpose 2048^2, reduce and "
                    "vecadd 2^24, 3 repeats)");
  command
      ->add_option("--repeat", arguments->repeat,
                   "Timed runs after the warm-up (default 10, or 3 with --quick)")
      ->check(CLI::Range(1, 1000000));
  command
      ->add_option("--seed", arguments->seed,
                   "Seed of the random inputs (and of sgemm's --random shapes)")
      ->capture_default_str();
  command->add_option("--device", arguments->device, "Device ordinal")
      ->capture_default_str()
      ->check(ptxrt::cli::at_least(0));
  ptxrt::tools::add_sgemm_bench_options(*command, arguments->sgemm);
  command->callback([command, arguments] { execute(*command, *arguments); });
}
