// The answer to "can this be done?": yes, or no and why. Every question of that kind in ptxrt
// answers with a Verdict (whether a launch fits a device, a config suits sgemm or a tuning
// space, an executable graph took an update); misuse, and failures of what was asked to be
// done, throw Error instead. A Verdict is true when the answer is yes:
//
//   if (const Verdict fits = launch_fits(resources, shape, device); !fits)
//     skip(config, fits.reason());
//
// A plain value; thread-safe as a std::string is.
#pragma once

#include <string>
#include <utility>

#include "ptxrt/export.hpp"

namespace ptxrt {

class [[nodiscard]] Verdict {
 public:
  // Yes.
  Verdict() = default;
  // No, because of `reason` ("a block of 2048 threads exceeds the device's 1024"). An empty
  // reason still says no; the reason is what users read.
  PTXRT_API static Verdict refused(std::string reason);

  bool allowed() const noexcept { return allowed_; }
  explicit operator bool() const noexcept { return allowed_; }
  // Why not; empty when allowed.
  const std::string& reason() const noexcept { return reason_; }

  bool operator==(const Verdict&) const = default;

 private:
  bool allowed_ = true;
  std::string reason_;
};

}  // namespace ptxrt
