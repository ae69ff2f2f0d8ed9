// `ptxrt tune ... --mpi`: run_tunes as one rank, the configs of each tune spread over the ranks
// by ptxrt::mpi::tune, rank 0 reporting.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "tools/mpi/ranks.hpp"
#include "tools/tune.hpp"

namespace ptxrt::cli {

namespace {

// Timings are compared across ranks: every rank's device must be of one model.
void require_one_model_across_ranks(const DeviceProperties& device) {
  const std::vector<std::string> models =
      mpi::gather_text(MPI_COMM_WORLD, "device " + std::to_string(device.ordinal) + " (" +
                                           device.name + ", " + device.compute_capability() + ")");
  const auto model = [](const std::string& described) {
    return described.substr(described.find(' ', sizeof("device")));
  };
  for (std::size_t rank = 1; rank < models.size(); ++rank)
    if (model(models[rank]) != model(models.front()))
      throw Error(ErrorKind::invalid_argument, "rank " + std::to_string(rank) + "'s " +
                                                   models[rank] + " is not the model of rank 0's " +
                                                   models.front() +
                                                   ": timings are comparable on one model only");
}

// A launcher that binds ranks (mpirun --map-by slot:PE=N, Slurm --cpus-per-task) gives each its
// own CPUs; unbound (mpirun --bind-to none), the ranks of a node share all of its CPUs.
unsigned compile_threads(const mpi::Placement& placement) {
  const unsigned usable = default_compile_threads();
  if (usable < std::thread::hardware_concurrency()) return usable;
  return std::max(1u, usable / static_cast<unsigned>(placement.node_size));
}

}  // namespace

void run_tunes_as_rank(const TuneArguments& arguments) {
  run_as_rank([&](const mpi::Placement& placement) {
    TuneRun run;
    run.devices = {rank_device(placement, listed_devices(arguments))};
    require_one_model_across_ranks(run.devices.front());
    run.compile_threads = compile_threads(placement);
    const std::chrono::seconds silence_limit(arguments.silence_limit);
    run.tune = [silence_limit](const TuningSpace& space, const CandidateCompiler& compile,
                               std::span<Measurer* const> measurers, const TuneOptions& options,
                               const std::function<void(const TuneProgress&)>& progress) {
      return mpi::tune(MPI_COMM_WORLD, space, compile, *measurers.front(), options, progress,
                       silence_limit);
    };
    run.prints = placement.rank == 0;
    run.any = [](bool value) {
      const std::vector<std::string> all = mpi::gather_text(MPI_COMM_WORLD, value ? "1" : "0");
      return std::find(all.begin(), all.end(), "1") != all.end();
    };
    run.complete_setting = [](TuneSetting& setting) {
      int workers = 0;
      for (const std::string& text :
           mpi::gather_text(MPI_COMM_WORLD, std::to_string(setting.workers_started)))
        workers += std::stoi(text);
      setting.workers_started = workers;
      setting.devices = every_rank_device(setting.devices.front());
    };
    run_tunes(arguments, run);
  });
}

}  // namespace ptxrt::cli
