// The bad-input matrix (see docs/errors.md): every input a user can get wrong, tried through the
// library and through the `ptxrt` command line where both take it. Each row checks one clear
// message naming the thing at fault, the documented ErrorKind or exit code, and that work goes on
// afterwards: a good call in the same process (library), a good command after the bad one (CLI).
// The rows that need a GPU are in tests/gpu/bad_input_tests.cpp, the interrupted tune's in
// interrupted_tune_tests.cpp; the finer cases of each reader
// stay beside it (manifest_tests, point_file_tests, disk_cache_tests, launch_check_tests...).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/classic/sort.hpp"
#include "apps/classic/vector_add.hpp"
#include "apps/closest_pair/point_file.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/sizes.hpp"
#include "apps/matmul/matrix_add.hpp"
#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/program.hpp"

namespace fs = std::filesystem;
using ptxrt::CompileOptions;
using ptxrt::DiskCache;
using ptxrt::Error;
using ptxrt::ErrorKind;
using ptxrt::Program;
using ptxrt::testing::LogCapture;
using ptxrt::testing::check_error;
using ptxrt::testing::contains;
using ptxrt::testing::ProcessResult;
using ptxrt::testing::ScratchDirectory;

namespace {

const std::string scale_kernel = std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu";
const char* const broken_source =
    "// line 1\nextern \"C\" __global__ void k(float* x) {\n  x[0] = missing;\n}\n";
const char* const required_define_source =
    "// ptxrt: define WIDTH in {1, 2}\n"
    "extern \"C\" __global__ void k(float* x) { x[0] = WIDTH; }\n";

CompileOptions options_for(const std::string& arch, std::vector<ptxrt::Define> defines = {}) {
  CompileOptions options;
  options.defines = std::move(defines);
  options.target = {arch, ptxrt::ImageFormat::cubin, {}};
  return options;
}

// The `ptxrt` binary with its disk cache in a scratch directory (or where `cache` says).
class Cli {
 public:
  ProcessResult run(std::vector<std::string> arguments,
                    std::vector<std::string> environment = {}) const {
    arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
    environment.insert(environment.begin(), "PTXRT_CACHE_DIR=" + cache_.string());
    return ptxrt::testing::run_process(arguments, environment);
  }
  // A failure the user can fix: `exit_code`, `fragment` in the output, and one error line.
  void check_fails(const std::vector<std::string>& arguments, int exit_code,
                   std::string_view fragment, std::vector<std::string> environment = {}) const {
    const ProcessResult result = run(arguments, std::move(environment));
    CAPTURE(arguments);
    INFO(result.output);
    CHECK(result.exit_code == exit_code);
    CHECK(contains(result.output, fragment));
    if (exit_code == 1) CHECK(count_error_lines(result.output) == 1);
  }
  void check_succeeds(const std::vector<std::string>& arguments,
                      std::vector<std::string> environment = {}) const {
    const ProcessResult result = run(arguments, std::move(environment));
    CAPTURE(arguments);
    CHECK_MESSAGE(result.exit_code == 0, result.output);
  }
  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path path = scratch_.path() / name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  const fs::path& scratch() const { return scratch_.path(); }
  void set_cache(fs::path cache) { cache_ = std::move(cache); }

 private:
  static std::size_t count_error_lines(std::string_view output) {
    std::size_t count = 0;
    for (std::size_t at = output.find("ptxrt: error: "); at != std::string_view::npos;
         at = output.find("ptxrt: error: ", at + 1))
      ++count;
    return count;
  }
  ScratchDirectory scratch_;
  fs::path cache_ = scratch_.path() / "cache";
};

bool have_cli() {
  if (std::string_view(PTXRT_CLI_PATH).empty()) MESSAGE("the CLI is not built");
  return !std::string_view(PTXRT_CLI_PATH).empty();
}

}  // namespace

TEST_CASE("broken kernel source: a compile error at the file's line, then a good compile works") {
  check_error(
      [] { compile(Program::from_string(broken_source, "broken.cu"), options_for("sm_80")); },
      ErrorKind::compile, "broken.cu(3): error");
  CHECK_FALSE(compile(Program::from_file(scale_kernel), options_for("sm_80")).data.empty());
  if (!have_cli()) return;
  Cli cli;
  const fs::path broken = cli.write("broken.cu", broken_source);
  cli.check_fails({"compile", broken.string(), "--arch", "sm_80"}, 1, "broken.cu(3): error");
  cli.check_succeeds({"compile", scale_kernel, "--arch", "sm_80"});
}

TEST_CASE("an unknown kernel is not_found, naming it and the builtin kernels") {
  check_error([] { ptxrt::apps::builtin_program("no_such_kernel"); }, ErrorKind::not_found,
              "no_such_kernel");
  CHECK(ptxrt::apps::builtin_program("matmul_tiled").name() == "matmul_tiled.cu");
  if (!have_cli()) return;
  Cli cli;
  cli.check_fails({"compile", "no_such_kernel", "--arch", "sm_80"}, 1,
                  "'no_such_kernel' is neither a file nor a builtin kernel (builtin: ");
  cli.check_fails({"compile", "/nonexistent/kernel.cu", "--arch", "sm_80"}, 1,
                  "'/nonexistent/kernel.cu' is neither a file nor a builtin kernel");
  cli.check_succeeds({"compile", "matmul_tiled", "--arch", "sm_80"});
}

TEST_CASE("TILE_WIDTH=0, =33 and =abc are refused before NVRTC, listing the valid values") {
  const Program matmul = ptxrt::apps::builtin_program("matmul_tiled");
  for (const char* value : {"0", "33", "abc"}) {
    CAPTURE(value);
    check_error(
        [&] {
          compile(matmul, options_for("sm_80", {{"TILE_WIDTH", value}}));
        },
        ErrorKind::invalid_argument,
        std::string("TILE_WIDTH=") + value +
            " is not valid for matmul_tiled.cu: expected one of 4, 8, 16, 32");
  }
  CHECK(compile(matmul, options_for("sm_80", {{"TILE_WIDTH", "32"}})).defines.at(0).value == "32");
  if (!have_cli()) return;
  Cli cli;
  for (const char* value : {"0", "33", "abc"}) {
    cli.check_fails(
        {"compile", "matmul_tiled", "--arch", "sm_80", "-D", std::string("TILE_WIDTH=") + value}, 1,
        std::string("TILE_WIDTH=") + value + " is not valid for matmul_tiled.cu");
    cli.check_fails({"run", "matmul", "-D", std::string("TILE_WIDTH=") + value}, 1,
                    "expected one of 4, 8, 16, 32");
  }
  cli.check_succeeds({"compile", "matmul_tiled", "--arch", "sm_80", "-D", "TILE_WIDTH=32"});
}

TEST_CASE("a missing required define, an unknown one and a bad name are each named") {
  const Program program = Program::from_string(required_define_source, "required.cu");
  check_error([&] { compile(program, options_for("sm_80")); }, ErrorKind::invalid_argument,
              "WIDTH is required by required.cu (one of 1, 2)");
  check_error([] { ptxrt::parse_define("1TILE=4"); }, ErrorKind::invalid_argument,
              "name '1TILE' is not a C identifier");
  check_error(
      [] {
        ptxrt::apps::resolve_defines(ptxrt::apps::builtin_program("matmul_tiled"), {{"NOPE", "1"}});
      },
      ErrorKind::invalid_argument, "-D NOPE: matmul_tiled.cu declares no such constant");
  CHECK_FALSE(compile(program, options_for("sm_80", {{"WIDTH", "2"}})).data.empty());
  if (!have_cli()) return;
  Cli cli;
  const fs::path file = cli.write("required.cu", required_define_source);
  cli.check_fails({"compile", file.string(), "--arch", "sm_80"}, 1,
                  "WIDTH is required by required.cu (one of 1, 2)");
  cli.check_fails({"run", "matmul", "-D", "NOPE=1"}, 1,
                  "-D NOPE: matmul_tiled.cu declares no such constant");
  cli.check_fails({"compile", file.string(), "-D", "1TILE=4"}, 1,
                  "name '1TILE' is not a C identifier");
  cli.check_succeeds({"compile", file.string(), "--arch", "sm_80", "-D", "WIDTH=1"});
}

TEST_CASE("wrong argument count and size are refused with both counts or sizes") {
  // The layout cuFuncGetParamInfo reports for k(float*, int); the GPU suite launches for real.
  const std::vector<ptxrt::ParameterInfo> layout{{0, 8}, {8, 4}};
  const auto signature = [](auto... arguments) {
    return ptxrt::detail::SignatureOf<decltype(arguments)...>::value;
  };
  check_error([&] { check_arguments_against_layout(layout, signature(0ull), "kernel 'k'"); },
              ErrorKind::invalid_argument, "kernel 'k': takes 2 argument(s), but 1 were given");
  check_error([&] { check_arguments_against_layout(layout, signature(0ull, 2.0), "kernel 'k'"); },
              ErrorKind::invalid_argument,
              "argument 1 is 4 bytes in the kernel, but a 8-byte double");
  CHECK_NOTHROW(check_arguments_against_layout(layout, signature(0ull, 2), "kernel 'k'"));
}

TEST_CASE("a block over the kernel's limit and dynamic smem over the opt-in are refused") {
  const ptxrt::LaunchLimits limits{.max_block_dim = {1024, 1024, 64},
                                   .max_grid_dim = {INT_MAX, 65535, 65535},
                                   .max_threads_per_block = 256,
                                   .static_shared_bytes = 1024,
                                   .shared_memory_per_block_optin = 232448};
  check_error(
      [&] {
        check_launch_geometry({.grid = 1, .block = {64, 32}}, limits, "k");
      },
      ErrorKind::invalid_argument,
      "block 64x32x1 = 2048 threads exceeds the kernel's max 256 threads per block");
  check_error(
      [&] {
        check_launch_geometry({.grid = 1, .block = 128, .dynamic_shared_bytes = 232448}, limits,
                              "k");
      },
      ErrorKind::invalid_argument, "232448 bytes of dynamic shared memory exceed the");
  CHECK_NOTHROW(check_launch_geometry(
      {.grid = 1, .block = 256, .dynamic_shared_bytes = 232448 - 1024}, limits, "k"));
}

TEST_CASE("corrupt, truncated, foreign and wrongly owned cache entries are recompiled, not used") {
  ScratchDirectory scratch;
  const Program program = Program::from_file(scale_kernel);
  const CompileOptions options = options_for("sm_90");
  const std::string key = ptxrt::cache_key(program, options);
  std::string good_entry;
  {
    ptxrt::Jit filler({.cache_directory = scratch.path()});
    filler.image(program, options);
    std::ifstream in(filler.disk_cache()->entry_path(key), std::ios::binary);
    good_entry.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string flipped = good_entry;
  flipped[flipped.size() / 2] ^= 0x01;
  ptxrt::Image other = ptxrt::testing::sample_image("other");
  DiskCache(scratch.path()).store(other);
  std::string foreign;
  {
    std::ifstream in(DiskCache(scratch.path()).entry_path(other.key), std::ios::binary);
    foreign.assign(std::istreambuf_iterator<char>(in), {});
  }
  struct Planted {
    const char* fault;
    std::string bytes;
    std::string warning;
  };
  // Another user's file is never deleted nor replaced, so it goes first: the next row replaces it.
  const std::vector<Planted> rows{
      {"wrongly owned", good_entry, "is owned by uid 65534, not by this user"},
      {"corrupt", flipped, "is corrupt or truncated (checksum mismatch); deleted"},
      {"truncated", good_entry.substr(0, good_entry.size() - 40), "; deleted"},
      {"foreign", foreign, "is foreign (it holds key " + other.key + "); deleted"},
  };
  for (const Planted& row : rows) {
    CAPTURE(row.fault);
    const bool other_owner = std::string_view(row.fault) == "wrongly owned";
    if (other_owner && ::geteuid() != 0) {
      MESSAGE("wrongly owned: skipped, only root can give a file to another user");
      continue;
    }
    ptxrt::Jit jit({.cache_directory = scratch.path()});
    const fs::path path = jit.disk_cache()->entry_path(key);
    fs::remove(path);
    std::ofstream(path, std::ios::binary) << row.bytes;
    if (other_owner) REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
    LogCapture log;
    const auto image = jit.image(program, options);
    CHECK(image->key == key);
    CHECK(jit.stats().compiles == 1);
    CHECK(jit.stats().disk_hits == 0);
    REQUIRE(log.lines.size() == 1);
    CHECK_MESSAGE(contains(log.lines[0], row.warning), log.lines[0]);
    CHECK(contains(log.lines[0], path.string()));
  }
  if (!have_cli()) return;
  // The listing reads only headers: damaged entries are listed (nameless when unreadable), and
  // warming rewrites them.
  Cli cli;
  cli.set_cache(scratch.path());
  const ProcessResult listed = cli.run({"cache", "ls"});
  CHECK_MESSAGE(listed.exit_code == 0, listed.output);
  cli.check_succeeds({"cache", "warm", "--arch", "sm_90", "--kernel", scale_kernel});
  ptxrt::Jit after({.cache_directory = scratch.path()});
  after.image(program, options);
  CHECK(after.stats().disk_hits == 1);
}

TEST_CASE("an unusable cache directory: the library compiles without it, cache warm exits 1") {
  ScratchDirectory scratch;
  std::ofstream(scratch.path() / "file") << "not a directory";
  const fs::path impossible = scratch.path() / "file" / "ptxrt";
  LogCapture log;
  ptxrt::Jit jit({.cache_directory = impossible});
  REQUIRE(jit.disk_cache() != nullptr);
  CHECK_FALSE(jit.disk_cache()->usable());
  REQUIRE(log.lines.size() == 1);
  CHECK(contains(log.lines[0], "disk cache '" + impossible.string() + "': cannot create it"));
  CHECK_FALSE(jit.image(Program::from_file(scale_kernel), options_for("sm_90"))->data.empty());
  if (!have_cli()) return;
  Cli cli;
  cli.set_cache(impossible);
  cli.check_fails({"cache", "warm", "--arch", "sm_90", "--kernel", scale_kernel}, 1,
                  "the disk cache " + impossible.string() + " is not usable");
  cli.check_succeeds({"compile", scale_kernel, "--arch", "sm_90"});
}

TEST_CASE("a cache key that tries path traversal is refused before any file is touched") {
  ScratchDirectory scratch;
  DiskCache cache(scratch.path() / "cache");
  const std::string traversal = "../../../../tmp/ptxrt-escape";
  check_error([&] { cache.load(traversal); }, ErrorKind::invalid_argument,
              "cache key '../../../../tmp/ptxrt-escape' is not a SHA-256 digest");
  ptxrt::Image image = ptxrt::testing::sample_image("escape");
  image.key = "../" + image.key.substr(3);
  check_error([&] { cache.store(image); }, ErrorKind::invalid_argument, "is not a SHA-256 digest");
  CHECK_FALSE(fs::exists(scratch.path() / "escape"));
  CHECK(fs::is_empty(scratch.path() / "cache"));
  image.key = ptxrt::testing::key_for("escape");
  cache.store(image);
  CHECK(cache.load(image.key).has_value());
}

TEST_CASE("no driver: device calls say so once, compiling still works, the CLI exits 1") {
  if (ptxrt::driver_status().usable) {
    MESSAGE("a driver is usable here: the child processes below hide it");
  } else {
    check_error([] { ptxrt::Device::get(0); }, ErrorKind::no_driver, "no CUDA driver found");
    CHECK_FALSE(compile(Program::from_file(scale_kernel), options_for("sm_90")).data.empty());
  }
  if (!have_cli()) return;
  Cli cli;
  // An empty library path hides any driver outside ld.so.cache from the child.
  const fs::path empty = cli.scratch() / "no-driver";
  fs::create_directories(empty);
  const std::vector<std::string> hidden{"LD_LIBRARY_PATH=" + empty.string(), "LD_PRELOAD="};
  const ProcessResult devices = cli.run({"devices"}, hidden);
  if (contains(devices.output, "device 0:")) {
    MESSAGE("a driver is installed system-wide on this machine; no-driver case not reachable");
    return;
  }
  CHECK(devices.exit_code == 0);
  CHECK_MESSAGE(contains(devices.output, "no CUDA driver found (libcuda.so.1)"), devices.output);
  cli.check_fails({"run", "vecadd", "--n", "100"}, 1, "no CUDA driver found (libcuda.so.1)",
                  hidden);
  const ProcessResult compiled = cli.run({"compile", scale_kernel}, hidden);
  CHECK(compiled.exit_code == 0);
  CHECK_MESSAGE(contains(compiled.output, "no usable GPU (no CUDA driver found"), compiled.output);
}

TEST_CASE("malformed point files: closest-pair --input exits 1 naming the file and the fault") {
  struct Row {
    const char* name;
    std::string content;
    std::string message;
  };
  const std::vector<Row> rows{
      {"bad_number.csv", "x,y\n1,2\n3,abc\n", "bad_number.csv:3: 'abc' is not a finite float"},
      {"columns.csv", "1,2\n3,4,5\n", "columns.csv:2: expected 2 columns (x,y), got 3: '3,4,5'"},
      {"empty.csv", "", "empty.csv: no points in the file"},
      {"empty.bin", "", "empty.bin: no points (the file is empty)"},
      {"odd.bin", std::string(12, '\0'), "odd.bin: 12 bytes is not a whole number of points"},
  };
  Cli cli;
  for (const Row& row : rows) {
    CAPTURE(row.name);
    const fs::path file = cli.write(row.name, row.content);
    check_error([&] { ptxrt::apps::read_point_file(file); }, ErrorKind::invalid_argument,
                row.message);
    if (have_cli()) cli.check_fails({"closest-pair", "--input", file.string()}, 1, row.message);
  }
  cli.check_fails({"closest-pair", "--input", "/nonexistent/points.csv"}, 1,
                  "point file '/nonexistent/points.csv': no such file");
  const fs::path good = cli.write("good.csv", "x,y\n0,0\n3,4\n10,10\n");
  CHECK(ptxrt::apps::read_point_file(good).size() == 3);
  if (!have_cli()) return;
  const ProcessResult found = cli.run({"closest-pair", "--input", good.string()});
  CHECK_MESSAGE(found.exit_code == 0, found.output);
  CHECK(contains(found.output, "distance = 5\n"));
}

TEST_CASE("sizes of 0, negative or overflowing size_t are refused before the driver is touched") {
  using namespace ptxrt::apps;
  check_error([] { plan_vector_add(0); }, ErrorKind::invalid_argument,
              "vecadd n must be at least 1, got 0");
  check_error([] { plan_vector_add(-5); }, ErrorKind::invalid_argument,
              "vecadd n must be at least 1, got -5");
  check_error([] { plan_vector_add(INT64_MAX); }, ErrorKind::invalid_argument,
              "vecadd n = 9223372036854775807 elements of 12 bytes overflows size_t");
  check_error([] { plan_matrix_add(INT_MAX, INT_MAX); }, ErrorKind::invalid_argument,
              "overflows size_t");
  check_error([] { plan_sort(INT64_MAX, SortVariant::bitonic); }, ErrorKind::invalid_argument,
              "sort n");
  check_error(
      [] {
        checked_product("m*n", {SIZE_MAX / 2, 3});
      },
      ErrorKind::invalid_argument,
      "m*n = 9223372036854775807 * 3 elements of 1 bytes overflows size_t");
  check_error([] { ptxrt::detail::array_bytes(SIZE_MAX / 2, 4); }, ErrorKind::invalid_argument,
              "9223372036854775807 elements of 4 bytes overflow size_t");
  CHECK(ptxrt::detail::array_bytes(1000, 4) == 4000);
  CHECK(plan_vector_add(1000).n == 1000);
  if (!have_cli()) return;
  Cli cli;
  cli.check_fails({"run", "vecadd", "--n", "0"}, 1, "vecadd n must be at least 1, got 0");
  cli.check_fails({"run", "vecadd", "--n", "-5"}, 1, "vecadd n must be at least 1, got -5");
  cli.check_fails({"run", "vecadd", "--n", "9223372036854775807"}, 1, "overflows size_t");
  cli.check_fails({"run", "matadd", "--m", "2147483647", "--n", "2147483647"}, 1,
                  "overflows size_t");
  cli.check_fails({"run", "matmul", "--m", "4294967296"}, 1,
                  "matmul m = 4294967296 exceeds the kernel's int limit");
  // A number beyond int64: CLI11 before 2.2 reads it as the largest int64, which the plan then
  // refuses (exit 1); later versions refuse it while parsing (usage error, exit 2).
  const ProcessResult huge = cli.run({"run", "vecadd", "--n", "99999999999999999999"});
  INFO(huge.output);
  CHECK(((huge.exit_code == 1 && contains(huge.output, "overflows size_t")) ||
         (huge.exit_code == 2 && contains(huge.output, "--n = 99999999999999999999"))));
  // CLI11 words the range differently from version to version ("2 to 2147483647", "[2 - ...]").
  cli.check_fails({"closest-pair", "--n", "1"}, 2, "--n: Value 1 not in range");
  cli.check_succeeds({"run", "vecadd", "--help"});
}
