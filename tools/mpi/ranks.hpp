// What the CLI's --mpi commands share (built with MPI only): running as one rank of the job, and
// the GPU a rank takes.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ptxrt/core/device.hpp"
#include "ptxrt/mpi.hpp"

namespace ptxrt::cli {

// Runs `work` as one rank of the MPI job this process belongs to, MPI initialized before and
// finalized after. A CLI::RuntimeError passes (an exit code each rank reaches after the last
// collective, such as a failed verification); any other throw is printed naming the rank
// ("ptxrt: error: rank 1 of 2 on node7: ...") and ends the whole job with exit code 1
// (MPI_Abort), so that no rank waits for one that failed.
void run_as_rank(const std::function<void(const mpi::Placement& placement)>& work);

// The device this rank takes (mpi::device_for_rank over `listed`, nothing meaning every visible
// device) and its properties. Throws what the driver throws without a GPU.
DeviceProperties rank_device(const mpi::Placement& placement,
                             const std::optional<std::vector<int>>& listed);

// Every rank's device ordinal, by rank. Collective.
std::vector<int> every_rank_device(int ordinal);

}  // namespace ptxrt::cli
