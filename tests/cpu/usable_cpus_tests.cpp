// usable_cpu_count: the CPUs of the affinity mask, not the machine's.
#include <doctest/doctest.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "support/usable_cpus.hpp"

TEST_CASE("usable cpu count: a thread bound to one CPU counts one, unbound it counts its mask") {
  cpu_set_t given;
  REQUIRE(sched_getaffinity(0, sizeof given, &given) == 0);
  CHECK(ptxrt::usable_cpu_count() == static_cast<unsigned>(CPU_COUNT(&given)));
  CHECK(ptxrt::usable_cpu_count() <= std::max(1u, std::thread::hardware_concurrency()));
  int first = 0;
  while (!CPU_ISSET(first, &given)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  // The mask of the calling thread only; restored before any check can end the test.
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const unsigned bound = ptxrt::usable_cpu_count();
  REQUIRE(sched_setaffinity(0, sizeof given, &given) == 0);
  CHECK(bound == 1);
}
