// Damaged device objects through the CLI, the way a user meets them: a relocatable CUBIN, a fatbin
// and LTO-IR built here, each overwritten in 1 to 4 random bytes or cut short a few hundred times
// (fixed seeds, so a failure reproduces), linked with `ptxrt compile a.cu --link X` and reported
// with `ptxrt resources a.cu --link X`. Every run ends in exit 0 with no error printed and the
// output its rerun gives, or in exit 1 with one line "ptxrt: error: ..."; never a signal, never
// past the timeout.
//
// LTO-IR after its 40-byte header is NVIDIA's encoded IR, with no size or checksum to hold it to:
// a byte overwritten there reaches nvJitLink, which may crash on it (2 of 150 such mutants did
// with CUDA 13.0). The CLI links outside objects with --lto in a child process
// (CompileOptions::isolated_link), so such a mutant too ends in one error. Each run starts that
// child, so the LTO-IR mutants are split into several cases to keep each short.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "process.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/program.hpp"
#include "support/regular_file.hpp"

namespace fs = std::filesystem;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path link_data = fs::path(PTXRT_SOURCE_DIR) / "tests/data/link";
// The CLI's own limit (--timeout) on the compile and on an isolated link, which a mutant that
// hangs nvJitLink reaches; and past it, the harness's, so that the CLI's verdict is judged.
constexpr int cli_timeout_seconds = 20;
constexpr std::chrono::seconds run_limit{cli_timeout_seconds + 25};
constexpr int mutants_per_object = 150;
constexpr int ltoir_mutants_per_case = 32;

enum class Sample { cubin, fatbin, ltoir };

// link_math.cu, which link_main.cu calls, as relocatable device code in the form asked for.
std::string sample_bytes(Sample sample) {
  ptxrt::CompileOptions options;
  options.extra_options = {"-rdc=true"};
  switch (sample) {
    case Sample::cubin:
      options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
      break;
    case Sample::fatbin:
      options.target = {"sm_90,compute_90", ptxrt::ImageFormat::fatbin, {}};
      break;
    case Sample::ltoir:
      options.target = {"sm_90", ptxrt::ImageFormat::ltoir, {}};
      options.extra_options.clear();
      break;
  }
  return ptxrt::compile(ptxrt::Program::from_file(link_data / "link_math.cu"), options).data;
}

struct Mutant {
  std::string change;  // "bytes 12=63 900=0" or "cut to 640 bytes", for the failure message
  std::string bytes;
};

// Mutants overwritten in 1 to 4 random bytes, every fourth cut short.
std::vector<Mutant> mutants_of(const std::string& sample, int mutant_count, std::uint32_t seed) {
  std::mt19937 random(seed);
  auto below = [&random](std::size_t bound) {
    return std::uniform_int_distribution<std::size_t>(0, bound - 1)(random);
  };
  std::vector<Mutant> mutants;
  for (int index = 0; index < mutant_count; ++index) {
    Mutant mutant{"bytes", sample};
    if (index % 4 == 0) {
      mutant.bytes.resize(below(sample.size()));
      mutant.change = "cut to " + std::to_string(mutant.bytes.size()) + " bytes";
    } else {
      for (std::size_t count = 1 + below(4); count > 0; --count) {
        const std::size_t at = below(sample.size());
        const auto value = static_cast<char>(below(256));
        mutant.bytes[at] = value;
        mutant.change.append(" ").append(std::to_string(at)).append("=");
        mutant.change.append(std::to_string(value & 0xff));
      }
    }
    mutants.push_back(std::move(mutant));
  }
  return mutants;
}

struct Run {
  int exit_code = -1;  // 128 + the signal when one ended it; -1 past the limit
  std::string output;  // stdout and stderr, and the CUBIN `compile` wrote
};

Run run_cli(const std::vector<std::string>& arguments, const fs::path& written) {
  ptxrt::testing::BackgroundProcess process(arguments);
  const auto deadline = std::chrono::steady_clock::now() + run_limit;
  while (process.running()) {
    if (std::chrono::steady_clock::now() > deadline) return {};  // the destructor kills it
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const ptxrt::testing::ProcessResult result = process.wait();
  Run run{result.exit_code, result.output};
  if (!written.empty() && result.exit_code == 0)
    run.output += ptxrt::detail::read_regular_file(written, "linked CUBIN");
  return run;
}

// What is wrong with how the command ended on one mutant; empty when nothing is.
std::string judge(const std::vector<std::string>& arguments, const fs::path& written) {
  const Run first = run_cli(arguments, written);
  if (first.exit_code == 0) {
    if (first.output.find("error") != std::string::npos)
      return "it printed an error but exited 0: " + first.output.substr(0, 400);
    const Run again = run_cli(arguments, written);
    if (again.exit_code != 0 || again.output != first.output)
      return "an accepted mutant gave another result when run again (exit " +
             std::to_string(again.exit_code) + ")";
    return {};
  }
  if (first.exit_code == -1) return "it ran past " + std::to_string(run_limit.count()) + " s";
  const bool one_line = first.output.starts_with("ptxrt: error: ") &&
                        first.output.find('\n') == first.output.size() - 1;
  if (first.exit_code == 1 && one_line) return {};
  return "exit " + std::to_string(first.exit_code) + " with: " + first.output;
}

// Runs `command` ("compile" or "resources") on every mutant of `sample`, two processes at a time.
void check_mutants(Sample sample, const std::string& command, std::uint32_t seed) {
  const std::vector<Mutant> mutants =
      mutants_of(sample_bytes(sample),
                 sample == Sample::ltoir ? ltoir_mutants_per_case : mutants_per_object, seed);
  ScratchDirectory scratch;
  std::vector<std::string> problems(mutants.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&](int lane) {
    const fs::path input = scratch.path() / ("mutant" + std::to_string(lane));
    const fs::path output = scratch.path() / ("linked" + std::to_string(lane) + ".cubin");
    for (std::size_t index = next++; index < mutants.size(); index = next++) {
      {
        std::ofstream file(input, std::ios::binary | std::ios::trunc);
        file << mutants[index].bytes;
      }
      std::vector<std::string> arguments{
          PTXRT_CLI_PATH, command,       (link_data / "link_main.cu").string(), "--arch", "sm_90",
          "--link",       input.string()};
      if (sample == Sample::ltoir)
        arguments.insert(arguments.end(), {"--lto", "--timeout", std::to_string(cli_timeout_seconds)});
      const bool compiles = command == "compile";
      if (compiles) arguments.insert(arguments.end(), {"--emit", "cubin", "-o", output.string()});
      problems[index] = judge(arguments, compiles ? output : fs::path());
    }
  };
  std::thread other(worker, 1);
  worker(0);
  other.join();
  for (std::size_t index = 0; index < mutants.size(); ++index) {
    CAPTURE(mutants[index].change);
    CHECK_MESSAGE(problems[index].empty(), "mutant " << index << ": " << problems[index]);
  }
}

}  // namespace

TEST_CASE("ptxrt compile --link ends cleanly on every mutant of a relocatable CUBIN") {
  check_mutants(Sample::cubin, "compile", 1);
}

TEST_CASE("ptxrt resources --link ends cleanly on every mutant of a relocatable CUBIN") {
  check_mutants(Sample::cubin, "resources", 1);
}

TEST_CASE("ptxrt compile --link ends cleanly on every mutant of a fatbin") {
  check_mutants(Sample::fatbin, "compile", 2);
}

TEST_CASE("ptxrt resources --link ends cleanly on every mutant of a fatbin") {
  check_mutants(Sample::fatbin, "resources", 2);
}

// Seeds 3 to 6: 128 LTO-IR mutants per command.
TEST_CASE("ptxrt compile --lto --link ends cleanly on every mutant of LTO-IR (seed 3)") {
  check_mutants(Sample::ltoir, "compile", 3);
}

TEST_CASE("ptxrt compile --lto --link ends cleanly on every mutant of LTO-IR (seed 4)") {
  check_mutants(Sample::ltoir, "compile", 4);
}

TEST_CASE("ptxrt compile --lto --link ends cleanly on every mutant of LTO-IR (seed 5)") {
  check_mutants(Sample::ltoir, "compile", 5);
}

TEST_CASE("ptxrt compile --lto --link ends cleanly on every mutant of LTO-IR (seed 6)") {
  check_mutants(Sample::ltoir, "compile", 6);
}

TEST_CASE("ptxrt resources --lto --link ends cleanly on every mutant of LTO-IR (seed 3)") {
  check_mutants(Sample::ltoir, "resources", 3);
}

TEST_CASE("ptxrt resources --lto --link ends cleanly on every mutant of LTO-IR (seed 4)") {
  check_mutants(Sample::ltoir, "resources", 4);
}

TEST_CASE("ptxrt resources --lto --link ends cleanly on every mutant of LTO-IR (seed 5)") {
  check_mutants(Sample::ltoir, "resources", 5);
}

TEST_CASE("ptxrt resources --lto --link ends cleanly on every mutant of LTO-IR (seed 6)") {
  check_mutants(Sample::ltoir, "resources", 6);
}
