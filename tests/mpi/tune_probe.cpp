// A tune with a stand-in compiler and measurer, distributed over the ranks it runs as (or one
// share of it, or all of it in one process), for tests/mpi/mpi_tune_tests.cpp, which starts it
// under mpirun. Twelve configs V=1..12 timed from a table whose fastest is V=9: V=2 fails to
// compile, V=3 is pruned by its resources, V=7 computes wrong. As the GPU measurer does, a config
// slower than 1.5x the best time it is handed is cut; each measurement's detail names that best.
//
//   ptxrt_mpi_tune_probe --db FILE [--resume] [--local | --shard I/N] [--die-at V]
//                        [--hold-rank1 FILE] [--silence-limit S]
//   --local        one process, ptxrt::tune (the reference)
//   --shard I/N    one process, share I of N
//   (neither)      ptxrt::mpi::tune over the ranks of the job
//   --die-at V     the process that is handed V exits at once (code 3), as a rank that dies
//   --hold-rank1 F rank 1 holds its first config until F exists, which rank 0 creates when it
//                  starts its last config: by then rank 0's best has been sent
//   --silence-limit S  a rank not heard from for S seconds counts as lost
// Rank 0 (the only process without MPI) prints the report as JSON: winner, space, the configs
// pruned by resources and failing to compile, results [{config, status, detail, registers}],
// resumed, not_reached.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "ptxrt/core/error.hpp"
#include "ptxrt/mpi.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "ptxrt/tune/tuning_database.hpp"

namespace {

using ptxrt::Candidate;
using ptxrt::Measurement;
using ptxrt::MeasurementStatus;

const std::map<std::int64_t, double> table_ms{{1, 3.0},  {4, 2.5}, {5, 4.0},  {6, 1.5},
                                              {7, 0.2},  {8, 5.0}, {9, 0.75}, {10, 1.25},
                                              {11, 6.0}, {12, 2.0}};
constexpr std::int64_t last_config_of_rank0 = 11;  // of the shares of two ranks: 1, 3, ..., 11

struct ProbeArguments {
  std::string database;
  bool resume = false;
  bool local = false;
  std::string shard;
  std::int64_t die_at = 0;
  std::string hold_rank1;
  int silence_limit = static_cast<int>(ptxrt::mpi::default_silence_limit.count());
};

Candidate stand_in_compile(const ptxrt::TuningConfig& config) {
  const std::int64_t value = config.at("V");
  if (value == 2) throw ptxrt::Error(ptxrt::ErrorKind::compile, "V=2 does not compile");
  ptxrt::KernelResources resources;
  resources.name = "probe";
  resources.registers = static_cast<int>(8 * value);
  resources.spill_store_bytes = static_cast<std::size_t>(value);
  Candidate candidate{config, Candidate::State::ready, {}, resources, ptxrt::Occupancy{}};
  candidate.occupancy->fraction = 1.0 / static_cast<double>(value);
  candidate.occupancy->reason = "V=" + std::to_string(value);
  if (value == 3) {
    candidate.state = Candidate::State::pruned;
    candidate.reason = "V=3 needs too many registers";
  }
  return candidate;
}

void wait_for(const std::filesystem::path& file) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(file) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

class TableMeasurer : public ptxrt::Measurer {
 public:
  TableMeasurer(const ProbeArguments& arguments, int rank) : arguments_(arguments), rank_(rank) {}

  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    const std::int64_t value = candidate.config.at("V");
    if (value == arguments_.die_at) std::_Exit(3);
    if (!arguments_.hold_rank1.empty()) hold(value);
    Measurement measurement{.config = candidate.config,
                            .status = MeasurementStatus::ok,
                            .median_ms = table_ms.at(value)};
    if (value == 7)
      measurement.status = MeasurementStatus::wrong;
    else if (best_ms && measurement.median_ms > 1.5 * *best_ms)
      measurement.status = MeasurementStatus::cut;
    measurement.detail = "given best " + (best_ms ? std::to_string(*best_ms) : "none");
    ++measured_;
    return measurement;
  }

 private:
  void hold(std::int64_t value) {
    if (rank_ == 1 && measured_ == 0) wait_for(arguments_.hold_rank1);
    if (rank_ == 0 && value == last_config_of_rank0) std::ofstream(arguments_.hold_rank1) << "go";
  }

  const ProbeArguments& arguments_;
  int rank_;
  int measured_ = 0;
};

nlohmann::json report_json(const ptxrt::TuneReport& report) {
  const auto configs = [](const std::vector<ptxrt::PrunedConfig>& pruned) {
    nlohmann::json list = nlohmann::json::array();
    for (const ptxrt::PrunedConfig& each : pruned) list.push_back(each.config.describe());
    return list;
  };
  nlohmann::json results = nlohmann::json::array();
  for (const ptxrt::TuneResult& result : report.results)
    results.push_back({{"config", result.measurement.config.describe()},
                       {"status", ptxrt::to_string(result.measurement.status)},
                       {"detail", result.measurement.detail},
                       {"registers", result.resources ? result.resources->registers : -1},
                       {"occupancy_reason", result.occupancy ? result.occupancy->reason : ""}});
  nlohmann::json resumed = nlohmann::json::array();
  for (const Measurement& measurement : report.resumed)
    resumed.push_back(measurement.config.describe());
  return {{"winner", report.winner ? nlohmann::json(report.winner->config.describe()) : nullptr},
          {"space", report.space_size},
          {"pruned_by_resources", configs(report.pruned_by_resources)},
          {"compile_failures", configs(report.compile_failures)},
          {"results", results},
          {"resumed", resumed},
          {"not_reached", report.not_reached}};
}

ptxrt::TuneShare parse_share(const std::string& text) {
  const std::size_t slash = text.find('/');
  return {std::stoul(text.substr(0, slash)), std::stoul(text.substr(slash + 1))};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a distributed tune with a stand-in measurer"};
  ProbeArguments arguments;
  app.add_option("--db", arguments.database)->required();
  app.add_flag("--resume", arguments.resume);
  app.add_flag("--local", arguments.local);
  app.add_option("--shard", arguments.shard);
  app.add_option("--die-at", arguments.die_at);
  app.add_option("--hold-rank1", arguments.hold_rank1);
  app.add_option("--silence-limit", arguments.silence_limit);
  CLI11_PARSE(app, argc, argv);

  ptxrt::TuningSpace space;
  space.add_parameter("V", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const ptxrt::TuningDatabase database(arguments.database);
  ptxrt::TuneOptions options;
  options.compile_threads = 1;
  options.database = &database;
  options.key = {"probe", "hash", "V in 1..12", "stand-in device", "9.0", 13000, {12}};
  options.resume = arguments.resume;
  try {
    if (arguments.local || !arguments.shard.empty()) {
      if (!arguments.shard.empty()) options.share = parse_share(arguments.shard);
      TableMeasurer measurer(arguments, 0);
      std::cout << report_json(ptxrt::tune(space, stand_in_compile, measurer, options)).dump(1)
                << '\n';
      return 0;
    }
    const ptxrt::mpi::Session session;
    const int rank = ptxrt::mpi::placement(MPI_COMM_WORLD).rank;
    TableMeasurer measurer(arguments, rank);
    try {
      const ptxrt::TuneReport report =
          ptxrt::mpi::tune(MPI_COMM_WORLD, space, stand_in_compile, measurer, options, {},
                           std::chrono::seconds(arguments.silence_limit));
      if (rank == 0) std::cout << report_json(report).dump(1) << '\n';
      return 0;
    } catch (const std::exception& error) {
      // As ptxrt does: with other ranks still in the job, only an abort ends it non-zero.
      std::cerr << "tune probe: rank " << rank << ": " << error.what() << '\n' << std::flush;
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } catch (const std::exception& error) {
    std::cerr << "tune probe: " << error.what() << '\n';
    return 1;
  }
}
