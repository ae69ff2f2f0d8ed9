#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "log_capture.hpp"
#include "ptxrt/core/log.hpp"

namespace log = ptxrt::log;

using ptxrt::testing::LogCapture;

TEST_CASE("log levels parse from their names, case-insensitively, and nothing else") {
  CHECK(log::parse_level("error") == log::Level::error);
  CHECK(log::parse_level("Warning") == log::Level::warning);
  CHECK(log::parse_level("INFO") == log::Level::info);
  CHECK(log::parse_level("debug") == log::Level::debug);
  CHECK_FALSE(log::parse_level("verbose").has_value());
  CHECK_FALSE(log::parse_level("").has_value());
}

TEST_CASE("lines below the threshold are dropped, the rest are prefixed with ptxrt and the level") {
  LogCapture capture(log::Level::info);
  CHECK(log::enabled(log::Level::info));
  CHECK_FALSE(log::enabled(log::Level::debug));
  log::write(log::Level::debug, "hidden");
  log::write(log::Level::info, "disk cache hit");
  log::write(log::Level::error, "broken");
  CHECK(capture.lines ==
        std::vector<std::string>{"ptxrt: info: disk cache hit", "ptxrt: error: broken"});
}

TEST_CASE("warn_once writes a warning the first time its key is seen, then never again") {
  LogCapture capture(log::Level::warning);
  CHECK(log::warn_once("log test key", "first"));
  CHECK_FALSE(log::warn_once("log test key", "second"));
  CHECK(log::warn_once("another log test key", "third"));
  CHECK(capture.lines ==
        std::vector<std::string>{"ptxrt: warning: first", "ptxrt: warning: third"});
}
