#include <string>
#include <thread>

#include "mpi/communicator.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/mpi.hpp"
#include "support/usable_cpus.hpp"

namespace ptxrt::mpi {

Session::Session() {
  int initialized = 0;
  detail::check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) return;
  int provided = MPI_THREAD_SINGLE;
  detail::check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
                "MPI_Init_thread");
  finalize_ = true;
  if (provided < MPI_THREAD_FUNNELED)
    throw Error(ErrorKind::io,
                "MPI_Init_thread: this MPI provides no MPI_THREAD_FUNNELED, which ptxrt needs (its "
                "compile threads run beside the thread that calls MPI)");
}

Session::~Session() {
  if (finalize_) MPI_Finalize();
}

std::string Placement::describe() const {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size) + " on " + host;
}

namespace {

void warn_if_bound_to_one_cpu(const Placement& placement) {
  const unsigned node_cpus = std::thread::hardware_concurrency();
  if (usable_cpu_count() > 1 || node_cpus <= 1) return;
  log::warn_once("mpi: bound to one CPU",
                 placement.describe() + " may use 1 of the node's " + std::to_string(node_cpus) +
                     " CPUs, so its compile threads and CPU work share one core: start it with "
                     "`mpirun --bind-to none` (ranks sharing the node's CPUs), or give each rank "
                     "CPUs of its own (`mpirun --map-by slot:PE=N`, Slurm `--cpus-per-task=N`)");
}

}  // namespace

Placement placement(MPI_Comm communicator) {
  const detail::Communicator world(communicator);
  Placement placement;
  placement.rank = world.rank();
  placement.size = world.size();
  MPI_Comm node = MPI_COMM_NULL;
  detail::check(
      MPI_Comm_split_type(world.get(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node),
      "MPI_Comm_split_type");
  const int ranked = MPI_Comm_rank(node, &placement.node_rank);
  const int sized = MPI_Comm_size(node, &placement.node_size);
  MPI_Comm_free(&node);
  detail::check(ranked, "MPI_Comm_rank");
  detail::check(sized, "MPI_Comm_size");
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  detail::check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  placement.host.assign(name, static_cast<std::size_t>(length));
  warn_if_bound_to_one_cpu(placement);
  return placement;
}

std::vector<std::string> gather_text(MPI_Comm communicator, const std::string& text) {
  return detail::Communicator(communicator).all_gather_text(text);
}

int device_for_rank(int node_rank, std::span<const int> devices, int visible) {
  if (visible <= 0)
    throw Error(ErrorKind::no_device, "node-local rank " + std::to_string(node_rank) +
                                          " finds no CUDA device to run on (none visible)");
  if (devices.empty()) return node_rank % visible;
  const int device = devices[static_cast<std::size_t>(node_rank) % devices.size()];
  if (device >= visible)
    throw Error(ErrorKind::invalid_argument,
                "node-local rank " + std::to_string(node_rank) + " is given device " +
                    std::to_string(device) + ", which does not exist: " + std::to_string(visible) +
                    " device(s) visible (ordinals 0 to " + std::to_string(visible - 1) + ")");
  return device;
}

}  // namespace ptxrt::mpi
