#include "support/usable_cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace ptxrt {

unsigned usable_cpu_count() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) {
    const int count = CPU_COUNT(&cpus);
    if (count > 0) return static_cast<unsigned>(count);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ptxrt
