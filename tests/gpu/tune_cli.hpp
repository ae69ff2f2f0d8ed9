// The tuner's GPU tests drive the CLI as a user does: a scratch folder for its caches and
// database, and the JSON a command prints.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.hpp"

namespace ptxrt::testing {

class Scratch {
 public:
  Scratch() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ptxrt-tune-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs the CLI with its caches in `scratch` and returns what it printed and its exit code.
inline ProcessResult run_cli(const Scratch& scratch, std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return run_process(arguments, {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(),
                                 "PTXRT_LOG=error"});
}

// The JSON the CLI printed (workers share its stderr, so anything before the JSON is skipped);
// the command must succeed.
inline nlohmann::json cli_json(const Scratch& scratch, std::vector<std::string> arguments) {
  const ProcessResult result = run_cli(scratch, std::move(arguments));
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const std::string& output = result.output;
  std::size_t start = output.starts_with("[") || output.starts_with("{") ? 0 : output.find("\n[");
  if (start == std::string::npos) start = output.find("\n{");
  REQUIRE(start != std::string::npos);
  return nlohmann::json::parse(output.substr(start));
}

}  // namespace ptxrt::testing
