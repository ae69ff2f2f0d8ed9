// A bound on a test step that must not block, such as a read of a FIFO or of /dev/zero where a
// regular file was expected: if the step has not returned within its seconds, SIGALRM ends the
// test process, so that a regression fails the test instead of hanging it (CTest runs each case
// in a process of its own).
#pragma once

#include <unistd.h>

namespace ptxrt::testing {

class Watchdog {
 public:
  explicit Watchdog(unsigned seconds) { ::alarm(seconds); }
  ~Watchdog() { ::alarm(0); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
};

}  // namespace ptxrt::testing
