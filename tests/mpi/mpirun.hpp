// Programs run under mpirun for the MPI tests, and the JSON they print.
#pragma once

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "process.hpp"

namespace ptxrt::testing {

// `command` as `ranks` ranks of one job. Containers forbid the cross-memory attach that Open MPI's
// shared-memory transport would use for large messages, hence its copy-in/copy-out. Each job
// keeps its session files in a folder of its own: jobs started at once (CTest's -j, other users)
// otherwise race to create and remove Open MPI's one folder under /tmp, and one fails to start.
inline ProcessResult mpirun(int ranks, const std::vector<std::string>& command,
                            std::vector<std::string> environment = {}) {
  const ScratchDirectory session;
  std::vector<std::string> arguments{PTXRT_MPIRUN_COMMAND};
  arguments.push_back("-n");
  arguments.push_back(std::to_string(ranks));
  arguments.insert(arguments.end(), command.begin(), command.end());
  environment.push_back("OMPI_MCA_btl_vader_single_copy_mechanism=none");
  environment.push_back("OMPI_MCA_orte_tmpdir_base=" + session.path().string());
  return run_process(arguments, environment);
}

// The JSON object a run printed, from its first line that opens one to the last closing brace
// (an MPI may add lines of its own around it).
inline nlohmann::json printed_json(const ProcessResult& result) {
  const std::size_t open = result.output.starts_with('{') ? 0 : result.output.find("\n{");
  const std::size_t close = result.output.rfind('}');
  REQUIRE_MESSAGE(open != std::string::npos, result.output);
  REQUIRE_MESSAGE(close != std::string::npos, result.output);
  return nlohmann::json::parse(result.output.substr(open, close - open + 1));
}

}  // namespace ptxrt::testing
