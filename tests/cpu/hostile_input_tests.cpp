// The hostile-input rows of the bad-input matrix (tests/cpu/bad_input_tests.cpp): input echoed in
// a message is bounded and escaped; JSON nested past the depth limit is refused where it is
// read, naming the place; and a FIFO, /dev/zero or a directory where ptxrt reads a file is one
// clear error, never a hang or an endless read. Each through the library and the `ptxrt` binary.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "apps/closest_pair/point_file.hpp"
#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "support/quoted.hpp"
#include "watchdog.hpp"

namespace fs = std::filesystem;
using ptxrt::ErrorKind;
using ptxrt::testing::check_error;
using ptxrt::testing::contains;
using ptxrt::testing::ProcessResult;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

// A message is one short line: however large the input, it stays under this.
constexpr std::size_t short_message = 400;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A problem file for scale.cu whose first buffer counts `count` elements of init `init`.
std::string scale_problem(const std::string& count, const std::string& init = "\"zeros\"") {
  return R"json({"kernel": "scale", "sizes": {"n": 1000}, "tune": {"BLOCK": [64, 128]},
    "block": ["BLOCK"], "grid": ["ceil_div(n, BLOCK)"],
    "arguments": [{"name": "x", "type": "float", "count": ")json" +
         count + R"json(", "init": )json" + init + R"json(},
      {"name": "y", "type": "float", "count": "n", "role": "output"},
      {"name": "f", "type": "float", "value": 2.0}, {"name": "n", "type": "int32", "value": "n"}]})json";
}

fs::path write(const ScratchDirectory& scratch, const std::string& name, const std::string& text) {
  const fs::path path = scratch.path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The `ptxrt` binary, which must finish within a minute; its one error line.
std::string cli_error(const ScratchDirectory& scratch, std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
  const std::optional<ProcessResult> result = ptxrt::testing::run_process_within(
      arguments, 60,
      {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string(), "PTXRT_LOG=warning"});
  CAPTURE(arguments);
  REQUIRE_MESSAGE(result, "still running after a minute: killed");
  INFO(result->output);
  CHECK(result->exit_code == 1);
  CHECK(result->output.starts_with("ptxrt: error: "));
  CHECK(result->output.find('\n') == result->output.size() - 1);
  CHECK(result->output.size() < short_message);
  return result->output;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ptxrt::Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("echoed input is escaped and bounded: control bytes, bad UTF-8, long text, numbers") {
  using ptxrt::detail::printable;
  CHECK(printable("a\tb\nc\r\x01\x7f") == "a\\tb\\nc\\r\\x01\\x7f");
  CHECK(printable("caf\xe9 caf\xc3\xa9") == "caf\\xe9 caf\xc3\xa9");  // Latin-1 escaped, UTF-8 kept
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");              // a surrogate is not UTF-8
  CHECK(printable(std::string(1000, 'a')) == std::string(100, 'a') + "... (1000 bytes)");
  // Cut before a character, never inside one.
  CHECK(printable(std::string(99, 'a') + "\xc3\xa9" + "b") ==
        std::string(99, 'a') + "... (102 bytes)");
  CHECK(ptxrt::detail::quoted("x y") == "'x y'");
  CHECK(ptxrt::detail::quoted_path(fs::path("/tmp") / std::string(300, 'p')).size() == 307);
  CHECK(ptxrt::detail::number_text(-1) == "-1");
  CHECK(ptxrt::detail::number_text(0.5) == "0.5");
  CHECK(ptxrt::detail::number_text(1e300) == "1e+300");
}

TEST_CASE("JSON nested 100,000 deep is refused at the depth limit, naming where, in every reader") {
  ScratchDirectory scratch;
  const std::string deep_problem = R"({"kernel": "scale", "sizes": )" + nested(100000) + "}";
  const std::string problem_error = error_of([&] {
    ptxrt::KernelProblem::from_json(deep_problem, ptxrt::Program::from_file(kernels / "scale.cu"),
                                    "deep.json", kernels);
  });
  CHECK(problem_error == "deep.json:1:93: nested deeper than 64 levels, the most ptxrt reads");
  const std::string deep_database =
      R"({"format": "ptxrt-tuning-1", "tunes": )" + nested(100000) + "}";
  check_error([&] { ptxrt::TuningDatabase::parse(deep_database, "db.json"); }, ErrorKind::io,
              "tuning database 'db.json' is corrupt: line 1, column 102: nested deeper than 64 "
              "levels, the most ptxrt reads");
  check_error([] { ptxrt::measurement_from_json(R"({"config": )" + nested(100000) + "}"); },
              ErrorKind::invalid_argument, "not a measurement: column 75: nested deeper than 64");
  // 64 levels are read: the limit is a bound on hostile files, not on ptxrt's own.
  check_error(
      [] {
        ptxrt::TuningDatabase::parse(R"({"format": "ptxrt-tuning-1", "tunes": )" + nested(63) + "}",
                                     "db.json");
      },
      ErrorKind::io, "tunes[0]: expected an object, got a list of 1 item(s)");

  const fs::path problem_file = write(scratch, "deep.json", deep_problem);
  CHECK(cli_error(scratch, {"tune", (kernels / "scale.cu").string(), "--problem",
                            problem_file.string(), "--dry-run", "--arch", "sm_90"}) ==
        "ptxrt: error: deep.json:1:93: nested deeper than 64 levels, the most ptxrt reads\n");
  const fs::path database = write(scratch, "deep_db.json", deep_database);
  CHECK(contains(cli_error(scratch, {"tune", "show", "--db", database.string()}),
                 "nested deeper than 64 levels"));
  CHECK(contains(cli_error(scratch, {"tune", "merge", database.string(), "-o",
                                     (scratch.path() / "out.json").string()}),
                 "nested deeper than 64 levels"));
  // 50,000 deep in a field's value: the message names the field, not its 100 KB of brackets.
  const fs::path deep_format =
      write(scratch, "format.json", R"({"format": )" + nested(50000) + R"(, "tunes": []})");
  CHECK(contains(cli_error(scratch, {"tune", "show", "--db", deep_format.string()}),
                 "nested deeper than 64 levels"));
  const fs::path list_format =
      write(scratch, "list_format.json", R"({"format": )" + nested(60) + R"(, "tunes": []})");
  CHECK(cli_error(scratch, {"tune", "show", "--db", list_format.string()}) ==
        "ptxrt: error: '" + list_format.string() +
            "' is not a tuning database (format a list of 1 item(s), expected "
            "'ptxrt-tuning-1')\n");
}

TEST_CASE("a FIFO, /dev/zero or a directory where a file is read is one clear error, not a hang") {
  ScratchDirectory scratch;
  const fs::path fifo = scratch.path() / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const fs::path folder = scratch.path() / "folder.bin";
  fs::create_directory(folder);
  const std::string fifo_text = "'" + fifo.string() + "': is a FIFO, not a regular file";
  {
    const ptxrt::testing::Watchdog watchdog(30);
    for (const auto& [not_a_file, kind] :
         {std::pair{fifo, std::string("a FIFO")},
          std::pair{fs::path("/dev/zero"), std::string("a character device")},
          std::pair{folder, std::string("a directory")}}) {
      const fs::path& path = not_a_file;  // clang before 16 captures no binding
      CAPTURE(path);
      check_error([&] { ptxrt::TuningDatabase(path).records(); }, ErrorKind::io,
                  "tuning database '" + path.string() + "': is " + kind + ", not a regular file");
      check_error([&] { ptxrt::Program::from_file(path); }, ErrorKind::io,
                  "kernel source '" + path.string() + "': is " + kind);
      check_error([&] { ptxrt::KernelProblem::from_file(path, kernels / "scale.cu"); },
                  ErrorKind::io, "problem file '" + path.string() + "': is " + kind);
      check_error([&] { ptxrt::apps::read_point_file(path); }, ErrorKind::io,
                  "point file '" + path.string() + "': is " + kind);
      const ptxrt::KernelProblem problem = ptxrt::KernelProblem::from_json(
          scale_problem("n", R"("file", "file": ")" + path.string() + "\""),
          ptxrt::Program::from_file(kernels / "scale.cu"), "p.json", scratch.path());
      check_error(
          [&] {
            ptxrt::check_problem_data(problem, {{"n", 1000}});
          },
          ErrorKind::io, "p.json: arguments[0]: data file '" + path.string() + "': is " + kind);
      check_error(
          [&] {
            ptxrt::make_problem_data(problem, {{"n", 1000}});
          },
          ErrorKind::io, "p.json: arguments[0]: data file '" + path.string() + "': is " + kind);
    }
  }
  CHECK(cli_error(scratch, {"tune", "show", "--db", fifo.string()}) ==
        "ptxrt: error: tuning database " + fifo_text + "\n");
  CHECK(contains(cli_error(scratch, {"tune", "show", "--db", "/dev/zero"}),
                 "tuning database '/dev/zero': is a character device, not a regular file"));
  CHECK(contains(cli_error(scratch, {"tune", "merge", fifo.string(), "-o",
                                     (scratch.path() / "out.json").string()}),
                 fifo_text));
  CHECK(contains(cli_error(scratch, {"closest-pair", "--input", fifo.string()}), fifo_text));
  CHECK(contains(cli_error(scratch, {"compile", fifo.string(), "--arch", "sm_90"}), fifo_text));
  const fs::path scale = kernels / "scale.cu";
  const auto dry_run = [&](const fs::path& data) {
    const fs::path problem =
        write(scratch, "p.json", scale_problem("n", R"("file", "file": ")" + data.string() + "\""));
    return cli_error(scratch, {"tune", scale.string(), "--problem", problem.string(), "--dry-run",
                               "--arch", "sm_90"});
  };
  CHECK(dry_run(fifo) == "ptxrt: error: p.json: arguments[0]: data file " + fifo_text + "\n");
  CHECK(contains(dry_run(folder), "is a directory, not a regular file"));
  CHECK(contains(dry_run("/dev/zero"), "is a character device, not a regular file"));
}
