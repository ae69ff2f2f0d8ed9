// The --mpi commands of a ptxrt built without MPI (PTXRT_MPI=OFF): each says so.
#include <string>
#include <string_view>

#include "ptxrt/core/error.hpp"
#include "tools/closest_pair.hpp"
#include "tools/tune.hpp"

namespace ptxrt::cli {

namespace {

[[noreturn]] void built_without_mpi(std::string_view command) {
  throw Error(ErrorKind::invalid_argument,
              std::string(command) +
                  " --mpi: this ptxrt was built without MPI; install one (Debian: "
                  "libopenmpi-dev openmpi-bin) and configure with -DPTXRT_MPI=ON");
}

}  // namespace

void run_tunes_as_rank(const TuneArguments&) { built_without_mpi("tune"); }

void run_closest_pair_as_rank(const ClosestPairArguments&) { built_without_mpi("closest-pair"); }

}  // namespace ptxrt::cli
