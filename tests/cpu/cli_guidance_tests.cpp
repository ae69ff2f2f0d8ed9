// What the CLI says to a user who mistypes, asks for help or its version, or names what does not
// exist: one "ptxrt: error:" line naming the command and the closest name meant, and the exit
// code docs/errors.md gives (2 for a malformed command line, 1 for a missing file or kernel).
// Also `resources --block` following a swept constant, and the problem file's fields as
// docs/tuning.md lists them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"

namespace fs = std::filesystem;
using ptxrt::testing::contains;
using ptxrt::testing::ProcessResult;

namespace {

ProcessResult run_cli(std::vector<std::string> arguments) {
  static const ptxrt::testing::ScratchDirectory scratch;
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  return ptxrt::testing::run_process(arguments,
                                     {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string()});
}

struct Expected {
  std::vector<std::string> arguments;
  int exit_code;
  std::string line;  // the whole output, one line
};

void check_all(const std::vector<Expected>& cases) {
  for (const Expected& expected : cases) {
    const ProcessResult result = run_cli(expected.arguments);
    CAPTURE(expected.arguments);
    CHECK(result.exit_code == expected.exit_code);
    CHECK(result.output == "ptxrt: error: " + expected.line + "\n");
  }
}

}  // namespace

TEST_CASE("a mistyped option or choice is one line naming the command and the closest name") {
  check_all({
      {{"compile", "matmul_tiled", "--arhc", "sm_90"},
       2,
       "unknown option '--arhc' for 'ptxrt compile' (did you mean '--arch'?)"},
      {{"tune", "show", "--dbb=x.json"},
       2,
       "unknown option '--dbb' for 'ptxrt tune show' (did you mean '--db'?)"},
      {{"compile", "matmul_tiled", "--zzzzzz"},
       2,
       "unknown option '--zzzzzz' for 'ptxrt compile' (see 'ptxrt compile --help')"},
      {{"devices", "stray"}, 2, "unexpected argument 'stray' for 'ptxrt devices'"},
      {{"compile", "matmul_tiled", "--emit", "cubn"},
       2,
       "compile: --emit: cubn not in {ptx,cubin,fatbin,ltoir,sass} (did you mean 'cubin'?)"},
      {{"tune", "matmul", "--strategy", "exhaustiv"},
       2,
       "tune: --strategy: exhaustiv not in {exhaustive,random,occupancy,model} (did you mean "
       "'exhaustive'?)"},
      {{"compile"}, 2, "compile: kernel is required"},
  });
}

TEST_CASE("a kernel, program or file that does not exist is exit 1, said the same way") {
  check_all({
      {{"tune", "shwo"},
       1,
       "'shwo' is neither a file nor a builtin tuning problem (builtin: matmul, sgemm, "
       "closest-pair); did you mean the command 'tune show'?"},
      {{"tune", "matmull"},
       1,
       "'matmull' is neither a file nor a builtin tuning problem (builtin: matmul, sgemm, "
       "closest-pair); did you mean 'matmul'?"},
      {{"tune", "missing.cu"},
       1,
       "'missing.cu' is neither a file nor a builtin tuning problem (builtin: matmul, sgemm, "
       "closest-pair)"},
      {{"run", "vecad"},
       1,
       "'vecad' is neither a file nor a builtin program (builtin: aos-soa, histogram, matadd, "
       "matmul, raytrace, reduce, sgemm, simpson, sort, transpose, vecadd); did you mean "
       "'vecadd'?"},
  });
  const std::string kernel = std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu";
  for (const char* command : {"tune", "run"}) {
    const ProcessResult result = run_cli({command, kernel, "--problem", "missing.json"});
    CAPTURE(command);
    CHECK(result.exit_code == 1);
    CHECK(result.output == "ptxrt: error: --problem 'missing.json': no such file\n");
  }
}

TEST_CASE("ptxrt --version, -v and help answer on stdout with exit 0") {
  for (const char* flag : {"--version", "-v"}) {
    const ProcessResult result = run_cli({flag});
    CHECK(result.exit_code == 0);
    CHECK(std::regex_match(result.output, std::regex("ptxrt [0-9]+\\.[0-9]+\\.[0-9]+\n")));
  }
  const ProcessResult top = run_cli({"help"});
  CHECK(top.exit_code == 0);
  CHECK(contains(top.output, "Usage: ptxrt [OPTIONS] [SUBCOMMAND]"));
  CHECK(contains(top.output, "tune"));
  const ProcessResult show = run_cli({"help", "tune", "show"});
  CHECK(show.exit_code == 0);
  CHECK(show.output == run_cli({"tune", "show", "--help"}).output);
  const ProcessResult unknown = run_cli({"help", "tune", "shwo"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output == "ptxrt: error: unknown command 'tune shwo' (did you mean 'tune show'?)\n");
}

TEST_CASE("several architectures without --emit fatbin are refused with the way to a fatbin") {
  const ProcessResult result = run_cli({"compile", "vector_add", "--arch", "sm_80,sm_90"});
  CHECK(result.exit_code == 1);
  CHECK(result.output ==
        "ptxrt: error: --arch 'sm_80,sm_90' lists several architectures, which make one fatbin (a "
        "CUBIN per sm_XY, PTX per compute_XY): add --emit fatbin, or give one architecture\n");
}

TEST_CASE("cache warm without --arch compiles for the detected architecture, as compile does") {
  const ProcessResult result = run_cli({"cache", "warm", "--kernel", "vector_add"});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(std::regex_search(result.output, std::regex("\\nsm_[0-9]+a?  +vector_add\\.cu")));
}

TEST_CASE("resources --block follows a swept constant: the kernel's launch bounds, or an "
          "expression of the defines") {
  auto blocks = [](std::vector<std::string> extra) {
    std::vector<std::string> arguments{"resources", "matmul_tiled", "--arch",
                                       "sm_90",     "--sweep",      "TILE_WIDTH=8,16,32",
                                       "--json"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    const ProcessResult result = run_cli(arguments);
    REQUIRE_MESSAGE(result.exit_code == 0, result.output);
    std::vector<std::pair<std::string, int>> found;
    for (const nlohmann::json& row : nlohmann::json::parse(result.output))
      found.emplace_back(row["defines"]["TILE_WIDTH"].get<std::string>(),
                         row["block_threads"].get<int>());
    return found;
  };
  const std::vector<std::pair<std::string, int>> square{{"8", 64}, {"16", 256}, {"32", 1024}};
  CHECK(blocks({}) == square);
  CHECK(blocks({"--block", "TILE_WIDTH*TILE_WIDTH"}) == square);
  CHECK(blocks({"--block", "64,min(2*TILE_WIDTH*TILE_WIDTH, 512)"}) ==
        std::vector<std::pair<std::string, int>>{
            {"8", 64}, {"8", 128}, {"16", 64}, {"16", 512}, {"32", 64}, {"32", 512}});
  const ProcessResult bad = run_cli({"resources", "matmul_tiled", "--arch", "sm_90", "--block",
                                     "TILE*2"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.output ==
        "ptxrt: error: --block 'TILE*2' for TILE_WIDTH=16: expression 'TILE*2': unknown name "
        "'TILE'\n");
}

TEST_CASE("a problem file's unknown field lists the fields docs/tuning.md documents, no other") {
  std::ifstream docs(fs::path(PTXRT_SOURCE_DIR) / "docs/tuning.md");
  std::set<std::string> documented;
  const std::regex row("^\\| (`[a-z_]+`(, `[a-z_]+`)*) \\|");
  const std::regex field("`([a-z_]+)`");
  bool in_table = false;
  for (std::string line; std::getline(docs, line);) {
    if (line == "| field | what |") in_table = true;
    if (in_table && line.empty()) break;
    std::smatch match;
    if (in_table && std::regex_search(line, match, row)) {
      const std::string names = match[1].str();
      for (std::sregex_iterator it(names.begin(), names.end(), field), end; it != end; ++it)
        documented.insert((*it)[1].str());
    }
  }
  const ptxrt::testing::ScratchDirectory scratch;
  const fs::path problem = scratch.path() / "p.json";
  std::ofstream(problem) << R"({"kernel": "scale", "bogus": 1})";
  const ProcessResult result =
      run_cli({"tune", std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu",
               "--problem", problem.string(), "--dry-run"});
  CHECK(result.exit_code == 1);
  std::smatch match;
  REQUIRE_MESSAGE(
      std::regex_search(result.output, match, std::regex("unknown field \\(known here: ([^)]*)\\)")),
      result.output);
  std::set<std::string> listed;
  std::istringstream names(match[1].str());
  for (std::string name; std::getline(names, name, ',');)
    listed.insert(name.substr(name.find_first_not_of(' ')));
  CHECK(listed == documented);
}
