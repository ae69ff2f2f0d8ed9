#include "tools/mpi/ranks.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

namespace ptxrt::cli {

void run_as_rank(const std::function<void(const mpi::Placement& placement)>& work) {
  const mpi::Session session;
  const mpi::Placement placement = mpi::placement(MPI_COMM_WORLD);
  try {
    work(placement);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& error) {
    // One write, so that the ranks' messages do not interleave.
    std::cerr << "ptxrt: error: " + placement.describe() + ": " + error.what() + "\n" << std::flush;
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

DeviceProperties rank_device(const mpi::Placement& placement,
                             const std::optional<std::vector<int>>& listed) {
  const std::vector<int> devices = listed.value_or(std::vector<int>{});
  return Device::get(mpi::device_for_rank(placement.node_rank, devices, Device::count()))
      .properties();
}

std::vector<int> every_rank_device(int ordinal) {
  std::vector<int> ordinals;
  for (const std::string& text : mpi::gather_text(MPI_COMM_WORLD, std::to_string(ordinal)))
    ordinals.push_back(std::stoi(text));
  return ordinals;
}

}  // namespace ptxrt::cli
