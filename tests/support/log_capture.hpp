// Collects the log lines written while alive, at `threshold` or above whatever PTXRT_LOG says.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ptxrt/core/log.hpp"

namespace ptxrt::testing {

class LogCapture {
 public:
  explicit LogCapture(log::Level threshold = log::Level::warning) : threshold_(log::threshold()) {
    log::set_threshold(threshold);
    previous_ =
        log::set_sink([this](log::Level, std::string_view line) { lines.emplace_back(line); });
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  ~LogCapture() {
    log::set_sink(std::move(previous_));
    log::set_threshold(threshold_);
  }
  std::vector<std::string> lines;

 private:
  log::Level threshold_;
  log::Sink previous_;
};

}  // namespace ptxrt::testing
