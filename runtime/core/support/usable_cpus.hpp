// How many CPUs this process may run threads on, for sizing thread pools.
//
// Thread safety: may be called from any thread.
#pragma once

#include "ptxrt/export.hpp"

namespace ptxrt {

// The CPUs in this process's affinity mask (sched_getaffinity), at least 1; where the mask cannot
// be read, std::thread::hardware_concurrency(). Not hardware_concurrency() alone: a launcher that
// binds a process to fewer CPUs than the machine has (mpirun binds each of up to 2 ranks to one
// core, Slurm gives --cpus-per-task) leaves it that many, and a pool sized by the machine's
// count would run all its threads on them.
PTXRT_API unsigned usable_cpu_count();

}  // namespace ptxrt
