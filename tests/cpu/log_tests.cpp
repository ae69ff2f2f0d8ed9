#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "log_capture.hpp"
#include "ptxrt/core/log.hpp"

using ptxrt::testing::LogCapture;

TEST_CASE("log levels parse from their names, case-insensitively, and nothing else") {
  CHECK(ptxrt::log::parse_level("error") == ptxrt::log::Level::error);
  CHECK(ptxrt::log::parse_level("Warning") == ptxrt::log::Level::warning);
  CHECK(ptxrt::log::parse_level("INFO") == ptxrt::log::Level::info);
  CHECK(ptxrt::log::parse_level("debug") == ptxrt::log::Level::debug);
  CHECK_FALSE(ptxrt::log::parse_level("verbose").has_value());
  CHECK_FALSE(ptxrt::log::parse_level("").has_value());
}

TEST_CASE("lines below the threshold are dropped, the rest are prefixed with ptxrt and the level") {
  LogCapture capture(ptxrt::log::Level::info);
  CHECK(ptxrt::log::enabled(ptxrt::log::Level::info));
  CHECK_FALSE(ptxrt::log::enabled(ptxrt::log::Level::debug));
  ptxrt::log::write(ptxrt::log::Level::debug, "hidden");
  ptxrt::log::write(ptxrt::log::Level::info, "disk cache hit");
  ptxrt::log::write(ptxrt::log::Level::error, "broken");
  CHECK(capture.lines ==
        std::vector<std::string>{"ptxrt: info: disk cache hit", "ptxrt: error: broken"});
}

TEST_CASE("warn_once writes a warning the first time its key is seen, then never again") {
  LogCapture capture(ptxrt::log::Level::warning);
  CHECK(ptxrt::log::warn_once("log test key", "first"));
  CHECK_FALSE(ptxrt::log::warn_once("log test key", "second"));
  CHECK(ptxrt::log::warn_once("another log test key", "third"));
  CHECK(capture.lines ==
        std::vector<std::string>{"ptxrt: warning: first", "ptxrt: warning: third"});
}
