// The `ptxrt` command line, driven as a user would: the built binary in its own process, with its
// disk cache in a scratch directory. Expectations come from the library where they can (builtin
// kernels, cache keys, the driver's status), so that the tests follow ptx_src/ as it grows.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/program.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ptxrt::testing::BackgroundProcess;
using ptxrt::testing::ProcessResult;

using ptxrt::testing::contains;

namespace {

const std::string scale_kernel = std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/scale.cu";
// C++ linkage (a mangled symbol) and no manifest.
const std::string convolution_kernel =
    std::string(PTXRT_SOURCE_DIR) + "/tests/data/kernels/convolution_1d.cu";

// A tile in shared memory whose size the manifest's TILE fixes: TILE x (TILE + 1) floats.
const char* const transpose_source = R"(// ptxrt: define TILE in {16, 32} default 16
// ptxrt: entry transpose_tile TILE x TILE threads per block
extern "C" __global__ void transpose_tile(const float* in, float* out, int n) {
  __shared__ float tile[TILE][TILE + 1];
  const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  const int tx = blockIdx.y * TILE + threadIdx.x, ty = blockIdx.x * TILE + threadIdx.y;
  if (tx < n && ty < n) out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}
)";

class Cli {
 public:
  ProcessResult run(std::vector<std::string> arguments) const {
    arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
    return ptxrt::testing::run_process(arguments, environment("warning"));
  }

  // Started and left running, logging at `log_level`.
  std::unique_ptr<BackgroundProcess> start(std::vector<std::string> arguments,
                                           const std::string& log_level) const {
    arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
    return std::make_unique<BackgroundProcess>(arguments, environment(log_level));
  }

  // Runs a command that must succeed and print JSON alone.
  json run_json(std::vector<std::string> arguments) const {
    ProcessResult result = run(std::move(arguments));
    REQUIRE_MESSAGE(result.exit_code == 0, result.output);
    return json::parse(result.output);
  }

  fs::path cache_directory() const { return scratch_.path() / "cache"; }

  std::vector<std::string> environment(const std::string& log_level) const {
    return {"PTXRT_CACHE_DIR=" + cache_directory().string(), "PTXRT_LOG=" + log_level};
  }

  fs::path write_file(const std::string& name, const std::string& text) const {
    fs::path path = scratch_.path() / name;
    std::ofstream(path) << text;
    return path;
  }

 private:
  ptxrt::testing::ScratchDirectory scratch_;
};

std::string cache_key_for(const std::string& file, const std::string& arch) {
  ptxrt::CompileOptions options;
  options.target = {arch, ptxrt::ImageFormat::cubin, {}};
  return ptxrt::cache_key(ptxrt::Program::from_file(file), options);
}

}  // namespace

TEST_CASE("every command answers --help with its usage and exit code 0") {
  Cli cli;
  const std::vector<std::vector<std::string>> commands{
      {},        {"devices"},       {"kernels"},     {"compile"},        {"resources"},
      {"cache"}, {"cache", "path"}, {"cache", "ls"}, {"cache", "clear"}, {"cache", "warm"}};
  for (std::vector<std::string> command : commands) {
    command.push_back("--help");
    ProcessResult result = cli.run(command);
    CAPTURE(result.output);
    CHECK(result.exit_code == 0);
    CHECK(contains(result.output, "Usage:"));
  }
}

TEST_CASE("a mistyped command exits 2 naming the closest one at its level, or the commands there") {
  struct Mistake {
    std::vector<std::string> arguments;
    std::string message;
  };
  const std::vector<Mistake> mistakes{
      {{"compiel", "matmul_tiled"}, "unknown command 'compiel' (did you mean 'compile'?)"},
      {{"cache", "wram", "--arch", "sm_90"},
       "unknown command 'cache wram' (did you mean 'cache warm'?)"},
      {{"multi-gpu", "closest-pairs"},
       "unknown command 'multi-gpu closest-pairs' (did you mean 'multi-gpu closest-pair'?)"},
      {{"frobnicate"},
       "unknown command 'frobnicate' (the commands are: devices, kernels, compile, resources, "
       "cache, demo, run, bench, closest-pair, multi-gpu, tune, help)"},
      {{"cache", "shrink"},
       "unknown command 'cache shrink' (the commands of 'cache' are: path, ls, clear, warm)"}};
  Cli cli;
  for (const Mistake& mistake : mistakes) {
    const ProcessResult result = cli.run(mistake.arguments);
    CAPTURE(mistake.arguments);
    CHECK(result.exit_code == 2);
    CHECK(result.output == "ptxrt: error: " + mistake.message + "\n");
  }
}

TEST_CASE("an argument a command does not take is CLI11's error, not an unknown command") {
  const ProcessResult result = Cli().run({"devices", "stray"});
  CHECK(result.exit_code == 2);
  CHECK_MESSAGE(contains(result.output, "stray"), result.output);
  CHECK_FALSE(contains(result.output, "unknown command"));
}

TEST_CASE("no command at all exits 2") {
  ProcessResult result = Cli().run({});
  CHECK(result.exit_code == 2);
  CHECK_MESSAGE(contains(result.output, "A command is required"), result.output);
}

TEST_CASE(
    "compile, resources and cache warm refuse a -D a builtin kernel does not declare, as "
    "run does") {
  Cli cli;
  const std::vector<std::vector<std::string>> commands{
      {"compile", "matmul_tiled", "--arch", "sm_90", "-D", "TILEWIDTH=16"},
      {"resources", "matmul_tiled", "--arch", "sm_90", "-D", "TILEWIDTH=16"},
      {"resources", "matmul_tiled", "--arch", "sm_90", "--sweep", "TILEWIDTH=8,16"},
      {"cache", "warm", "--arch", "sm_90", "--kernel", "matmul_tiled", "-D", "TILEWIDTH=16"},
      {"run", "matmul", "-D", "TILEWIDTH=16"}};
  for (const std::vector<std::string>& command : commands) {
    const ProcessResult result = cli.run(command);
    CAPTURE(command);
    CHECK(result.exit_code == 1);
    CHECK(result.output ==
          "ptxrt: error: -D TILEWIDTH: matmul_tiled.cu declares no such "
          "constant (it takes TILE_WIDTH)\n");
  }
  CHECK(cli.run_json({"cache", "ls", "--json"})["count"] == 0);
}

TEST_CASE("a kernel file without a manifest takes any -D") {
  Cli cli;
  const ProcessResult compiled = cli.run(
      {"compile", convolution_kernel, "--arch", "sm_90", "-D", "MASK_WIDTH=3", "-D", "UNUSED=1"});
  CHECK_MESSAGE(compiled.exit_code == 0, compiled.output);
  CHECK(contains(compiled.output, ".entry _Z18convolution_kernelPfS_S_("));
  CHECK(
      cli.run_json({"resources", convolution_kernel, "--arch", "sm_90", "-D", "UNUSED=1", "--json"})
          .size() == 1);
  const ProcessResult warmed = cli.run(
      {"cache", "warm", "--arch", "sm_90", "--kernel", convolution_kernel, "-D", "UNUSED=1"});
  CHECK_MESSAGE(warmed.exit_code == 0, warmed.output);
}

TEST_CASE("demo without a GPU gives the driver's problem once") {
  const ptxrt::DriverStatus status = ptxrt::driver_status();
  if (status.usable) return;  // it runs the kernels instead: the GPU suite's business
  const ProcessResult demo = Cli().run({"demo"});
  CHECK_MESSAGE(demo.exit_code == 0, demo.output);
  std::size_t mentions = 0;
  for (std::size_t at = demo.output.find(status.problem); at != std::string::npos;
       at = demo.output.find(status.problem, at + 1))
    ++mentions;
  CHECK_MESSAGE(mentions == 1, demo.output);
  CHECK(contains(demo.output, "compiled for sm_90"));
}

TEST_CASE("resources name a C++ kernel as written, with its symbol beside in JSON") {
  Cli cli;
  const ProcessResult table = cli.run({"resources", convolution_kernel, "--arch", "sm_90"});
  CHECK_MESSAGE(table.exit_code == 0, table.output);
  CHECK(contains(table.output, "  convolution_kernel(float*, float*, float*)  "));
  CHECK_FALSE(contains(table.output, "_Z18"));
  const json cxx = cli.run_json({"resources", convolution_kernel, "--arch", "sm_90", "--json"});
  REQUIRE(cxx.size() == 1);
  CHECK(cxx[0]["kernel"] == "convolution_kernel(float*, float*, float*)");
  CHECK(cxx[0]["mangled_name"] == "_Z18convolution_kernelPfS_S_");
  const json extern_c = cli.run_json({"resources", scale_kernel, "--arch", "sm_90", "--json"});
  REQUIRE(extern_c.size() == 1);
  CHECK(extern_c[0]["kernel"] == "scale");
  CHECK(extern_c[0]["mangled_name"].is_null());
}

TEST_CASE("compile prints PTX for the requested architecture with the kernel's entry") {
  ProcessResult result = Cli().run({"compile", scale_kernel, "--arch", "sm_80"});
  CAPTURE(result.output);
  CHECK(result.exit_code == 0);
  CHECK(contains(result.output, ".target sm_80"));
  CHECK(contains(result.output, ".entry scale("));
}

TEST_CASE("compile rejects a value outside the manifest with exit 1 and the manifest's message") {
  ProcessResult result = Cli().run({"compile", scale_kernel, "--arch", "sm_80", "-D", "BLOCK=33"});
  CHECK(result.exit_code == 1);
  CHECK_MESSAGE(contains(result.output,
                         "BLOCK=33 is not valid for scale.cu: expected one of 64, "
                         "128, 256"),
                result.output);
}

TEST_CASE("compile rejects an architecture NVRTC does not know, listing the ones it does") {
  ProcessResult result = Cli().run({"compile", scale_kernel, "--arch", "sm_52"});
  CHECK(result.exit_code == 1);
  CHECK_MESSAGE(contains(result.output, "--arch sm_52 is not supported"), result.output);
  CHECK(contains(result.output, "sm_90"));
}

TEST_CASE("compile writes a CUBIN to the file named by -o and refuses to print one") {
  Cli cli;
  ProcessResult refused = cli.run({"compile", scale_kernel, "--arch", "sm_90", "--emit", "cubin"});
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(contains(refused.output, "-o FILE"), refused.output);

  const fs::path output = cli.cache_directory().parent_path() / "scale.cubin";
  ProcessResult written = cli.run(
      {"compile", scale_kernel, "--arch", "sm_90", "--emit", "cubin", "-o", output.string()});
  REQUIRE_MESSAGE(written.exit_code == 0, written.output);
  std::ifstream file(output, std::ios::binary);
  std::string magic(4, '\0');
  file.read(magic.data(), 4);
  CHECK(magic ==
        "\x7f"
        "ELF");
}

TEST_CASE("compile accepts every builtin kernel by name") {
  for (const std::string& name : ptxrt::apps::builtin_kernel_names()) {
    std::vector<std::string> arguments{"compile", name, "--arch", "sm_80"};
    const ptxrt::Program program = ptxrt::apps::builtin_program(name);
    for (const ptxrt::ManifestDefine& define : program.manifest().defines)
      if (!define.default_value)
        arguments.push_back("-D" + define.name + "=" + define.values.at(0));
    ProcessResult result = Cli().run(arguments);
    CAPTURE(name);
    CHECK_MESSAGE(result.exit_code == 0, result.output);
    CHECK(contains(result.output, ".target sm_80"));
  }
}

TEST_CASE("resources --json reports each field, with the static shared memory of the tile") {
  Cli cli;
  fs::path kernel = cli.write_file("transpose.cu", transpose_source);
  json rows = cli.run_json({"resources", kernel.string(), "--arch", "sm_90", "--json"});
  REQUIRE(rows.is_array());
  REQUIRE(rows.size() == 1);
  const json& row = rows[0];
  for (const char* field :
       {"defines", "arch", "kernel", "mangled_name", "registers", "static_smem_bytes",
        "constant_bytes", "local_bytes", "stack_bytes", "spill_store_bytes", "spill_load_bytes",
        "barriers", "max_threads_per_block", "block_threads", "active_blocks_per_sm",
        "active_warps_per_sm", "occupancy_percent", "limit", "reason"})
    CHECK_MESSAGE(row.contains(field), field);
  CHECK(row["defines"] == json{{"TILE", "16"}});
  CHECK(row["arch"] == "sm_90");
  CHECK(row["kernel"] == "transpose_tile");
  CHECK(row["static_smem_bytes"] == 16 * 17 * 4);
  CHECK(row["registers"].get<int>() > 0);
  CHECK(row["barriers"] == 1);
  CHECK(row["spill_store_bytes"] == 0);
  CHECK(row["block_threads"] == 256);
  const int blocks = row["active_blocks_per_sm"].get<int>();
  CHECK(blocks > 0);
  CHECK(row["active_warps_per_sm"] == blocks * 256 / 32);
  // sm_90 holds 64 warps per SM.
  CHECK(row["occupancy_percent"].get<double>() == doctest::Approx(blocks * 8 * 100.0 / 64));
  CHECK(row["reason"] == "");
}

TEST_CASE("resources --sweep compiles the cartesian product of the values") {
  Cli cli;
  // PAD is declared (a swept name must be) but changes nothing: six configurations, three sizes.
  fs::path kernel =
      cli.write_file("transpose.cu", std::string("// ptxrt: define PAD in {0, 1, 2} default 0\n") +
                                         transpose_source);
  json rows = cli.run_json({"resources", kernel.string(), "--arch", "sm_80", "--sweep",
                            "TILE=16,32", "--sweep", "PAD=0,1,2", "--json"});
  REQUIRE(rows.size() == 6);
  std::set<std::string> configurations;
  for (const json& row : rows) {
    configurations.insert(row["defines"]["TILE"].get<std::string>() + "/" +
                          row["defines"]["PAD"].get<std::string>());
    const int tile = std::stoi(row["defines"]["TILE"].get<std::string>());
    CHECK(row["static_smem_bytes"] == tile * (tile + 1) * 4);
  }
  CHECK(configurations == std::set<std::string>{"16/0", "16/1", "16/2", "32/0", "32/1", "32/2"});
}

TEST_CASE("resources gives one row per block size, and none_fits beyond __launch_bounds__") {
  json rows = Cli().run_json({"resources", scale_kernel, "--arch", "sm_90", "-D", "BLOCK=128",
                              "--block", "64,128,256", "--json"});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["block_threads"] == 64);
  CHECK(rows[2]["block_threads"] == 256);
  CHECK(rows[1]["max_threads_per_block"] == 128);
  CHECK(rows[1]["limit"] != "none_fits");
  CHECK(rows[2]["limit"] == "none_fits");
  CHECK(rows[2]["active_blocks_per_sm"] == 0);
  CHECK(contains(rows[2]["reason"].get<std::string>(), "__launch_bounds__ of 128"));
}

TEST_CASE("resources follows -I to a kernel file's headers and passes -X options to NVRTC") {
  Cli cli;
  fs::create_directories(cli.cache_directory().parent_path() / "include");
  cli.write_file("include/tile_size.cuh", "#define TILE 24\n");
  fs::path kernel = cli.write_file("rows.cu", R"(#include "tile_size.cuh"
#ifndef EXTRA_ROWS
#define EXTRA_ROWS 0
#endif
extern "C" __global__ void rows(float* out) {
  __shared__ float tile[TILE + EXTRA_ROWS][TILE];
  tile[threadIdx.y][threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x % TILE][threadIdx.y];
})");
  const std::string include = (cli.cache_directory().parent_path() / "include").string();

  ProcessResult missing = cli.run({"resources", kernel.string(), "--arch", "sm_90"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.output, "tile_size.cuh"));

  json plain =
      cli.run_json({"resources", kernel.string(), "-I", include, "--arch", "sm_90", "--json"});
  REQUIRE(plain.size() == 1);
  CHECK(plain[0]["static_smem_bytes"] == 24 * 24 * 4);
  json extra = cli.run_json({"resources", kernel.string(), "--include", include,
                             "--nvrtc-option=-DEXTRA_ROWS=2", "--arch", "sm_90", "--json"});
  REQUIRE(extra.size() == 1);
  CHECK(extra[0]["static_smem_bytes"] == 26 * 24 * 4);
}

TEST_CASE("resources prints an aligned table with a header") {
  ProcessResult result = Cli().run({"resources", scale_kernel, "--arch", "sm_80"});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const std::size_t header = result.output.find("defines");
  REQUIRE(header != std::string::npos);
  const std::string header_line =
      result.output.substr(header, result.output.find('\n', header) - header);
  const std::size_t row_start = result.output.find('\n', header) + 1;
  const std::string row =
      result.output.substr(row_start, result.output.find('\n', row_start) - row_start);
  CHECK(row.starts_with("BLOCK=128"));
  CHECK(row.find("scale") == header_line.find("kernel"));
}

TEST_CASE("kernels --json lists exactly the builtin kernels with their manifests' entries") {
  json listed = Cli().run_json({"kernels", "--json"});
  const std::vector<std::string> names = ptxrt::apps::builtin_kernel_names();
  REQUIRE(listed.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const ptxrt::Program program = ptxrt::apps::builtin_program(names[i]);
    const ptxrt::Manifest& manifest = program.manifest();
    CAPTURE(names[i]);
    CHECK(listed[i]["name"] == names[i]);
    REQUIRE(listed[i]["entries"].size() == manifest.entries.size());
    for (std::size_t e = 0; e < manifest.entries.size(); ++e)
      CHECK(listed[i]["entries"][e]["name"] == manifest.entries[e].name);
    REQUIRE(listed[i]["defines"].size() == manifest.defines.size());
    for (std::size_t d = 0; d < manifest.defines.size(); ++d)
      CHECK(listed[i]["defines"][d]["values"] == manifest.defines[d].values);
  }
}

TEST_CASE("devices reports the driver's status and exits 0 with or without a GPU") {
  const ptxrt::DriverStatus status = ptxrt::driver_status();
  Cli cli;
  json reported = cli.run_json({"devices", "--json"});
  CHECK(reported["driver"]["usable"] == status.usable);
  if (status.usable) {
    CHECK(reported["devices"].size() == static_cast<std::size_t>(status.device_count));
    CHECK(reported["devices"][0].contains("cc_major"));
  } else {
    CHECK(reported["devices"].empty());
    CHECK(!reported["driver"]["problem"].get<std::string>().empty());
  }
  ProcessResult text = cli.run({"devices"});
  CHECK(text.exit_code == 0);
  CHECK_MESSAGE(contains(text.output, status.usable ? "device 0:" : "no usable CUDA device"),
                text.output);
}

TEST_CASE("cache path prints PTXRT_CACHE_DIR") {
  Cli cli;
  ProcessResult result = cli.run({"cache", "path"});
  CHECK(result.exit_code == 0);
  CHECK(result.output == cli.cache_directory().string() + "\n");
}

TEST_CASE("cache warm stores under the keys the JIT looks up, cache ls shows them, clear empties") {
  Cli cli;
  ProcessResult warmed =
      cli.run({"cache", "warm", "--arch", "sm_80,sm_90", "--kernel", scale_kernel});
  REQUIRE_MESSAGE(warmed.exit_code == 0, warmed.output);
  CHECK_MESSAGE(contains(warmed.output, "2 configurations: 0 already cached, 2 compiled"),
                warmed.output);

  json listed = cli.run_json({"cache", "ls", "--json"});
  CHECK(listed["count"] == 2);
  std::set<std::string> keys, archs;
  for (const json& entry : listed["entries"]) {
    keys.insert(entry["key"].get<std::string>());
    archs.insert(entry["arch"].get<std::string>());
    CHECK(entry["name"] == "scale.cu");
    CHECK(entry["size_bytes"].get<std::uintmax_t>() > 0);
  }
  CHECK(archs == std::set<std::string>{"sm_80", "sm_90"});
  CHECK(keys == std::set<std::string>{cache_key_for(scale_kernel, "sm_80"),
                                      cache_key_for(scale_kernel, "sm_90")});

  ProcessResult cleared = cli.run({"cache", "clear"});
  CHECK(cleared.exit_code == 0);
  CHECK_MESSAGE(contains(cleared.output, "removed 2 entries"), cleared.output);
  CHECK(cli.run_json({"cache", "ls", "--json"})["count"] == 0);
}

TEST_CASE("cache warm --all-values stores every declared value of each constant") {
  Cli cli;
  ProcessResult warmed =
      cli.run({"cache", "warm", "--arch", "sm_90", "--kernel", scale_kernel, "--all-values"});
  REQUIRE_MESSAGE(warmed.exit_code == 0, warmed.output);
  json listed = cli.run_json({"cache", "ls", "--json"});
  CHECK(listed["count"] == 3);  // BLOCK in {64, 128, 256}
}

TEST_CASE("cache warm compiles only what the cache lacks and says how much it found") {
  Cli cli;
  const ProcessResult first =
      cli.run({"cache", "warm", "--arch", "sm_90", "--kernel", scale_kernel, "--all-values"});
  CHECK_MESSAGE(contains(first.output, "3 configurations: 0 already cached, 3 compiled"),
                first.output);
  const std::vector<std::string> both{"cache",    "warm",       "--arch",      "sm_80,sm_90",
                                      "--kernel", scale_kernel, "--all-values"};
  const ProcessResult second = cli.run(both);
  CHECK_MESSAGE(contains(second.output, "6 configurations: 3 already cached, 3 compiled"),
                second.output);
  const ProcessResult third = cli.run(both);
  CHECK_MESSAGE(contains(third.output, "6 configurations: 6 already cached, 0 compiled"),
                third.output);
  CHECK(cli.run_json({"cache", "ls", "--json"})["count"] == 6);
}

TEST_CASE("cache warms started at once on one empty cache compile each entry once between them") {
  Cli cli;
  const std::vector<std::string> warm{"cache",    "warm",       "--arch",      "sm_80,sm_90",
                                      "--kernel", scale_kernel, "--all-values"};
  std::vector<std::unique_ptr<BackgroundProcess>> warms;
  for (int i = 0; i < 4; ++i) warms.push_back(cli.start(warm, "info"));
  std::map<std::string, int> compiles;  // PTXRT_LOG=info: one line per compile, of every process
  for (const auto& process : warms) {
    const ProcessResult result = process->wait();
    REQUIRE_MESSAGE(result.exit_code == 0, result.output);
    std::istringstream lines(result.output);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("ptxrt: info: compiled "))
        ++compiles[line.substr(0, line.rfind(" in "))];
  }
  CHECK(compiles.size() == 6);  // BLOCK in {64, 128, 256} for each arch
  for (const auto& [compiled, count] : compiles) {
    const std::string& compile = compiled;  // clang before 16 captures no binding
    CAPTURE(compile);
    CHECK(count == 1);
  }
  const ProcessResult again = cli.start(warm, "info")->wait();
  CHECK_MESSAGE(contains(again.output, "6 configurations: 6 already cached, 0 compiled"),
                again.output);
  CHECK_FALSE(contains(again.output, "info: compiled"));
  // Nothing but the entries: the compiles' lock files went with them.
  std::size_t files = 0;
  for (const auto& file : fs::recursive_directory_iterator(cli.cache_directory()))
    if (!file.is_directory()) {
      CHECK(file.path().extension() == ".ptxrt");
      ++files;
    }
  CHECK(files == 6);
}

TEST_CASE("cache warm refuses an architecture that makes no CUBIN") {
  ProcessResult result =
      Cli().run({"cache", "warm", "--arch", "compute_90", "--kernel", scale_kernel});
  CHECK(result.exit_code == 1);
  CHECK_MESSAGE(contains(result.output, "not compute_90"), result.output);
}

TEST_CASE(
    "closest-pair --repeat reports each call, and --from pinned or device refuses a CPU method") {
  Cli cli;
  const json report = cli.run_json(
      {"closest-pair", "--n", "1001", "--method", "cpu-dc", "--repeat", "3", "--json", "--verify"});
  CHECK(report["from"] == "host");
  REQUIRE(report["calls"].size() == 3);
  for (const json& call : report["calls"])
    for (const char* key : {"setup_ms", "upload_ms", "sort_ms", "rest_ms", "gpu_ms", "total_ms"})
      CHECK(call.contains(key));
  CHECK(report["calls"][2] == report["times"]);
  CHECK(report["verify"]["agrees"] == true);
  const ProcessResult text =
      cli.run({"closest-pair", "--n", "1001", "--method", "cpu-dc", "--repeat", "2"});
  CHECK(text.exit_code == 0);
  CHECK(contains(text.output, "from host memory by cpu-dc"));
  CHECK(contains(text.output, "time of call 2: sort "));
  // Checked before a context is looked for: the same answer with or without a GPU.
  for (const char* from : {"pinned", "device"}) {
    const ProcessResult refused =
        cli.run({"closest-pair", "--n", "100", "--from", from, "--method", "cpu-dc"});
    CAPTURE(refused.output);
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.output,
                   "closest pair: method 'cpu-dc' runs on the CPU; points on the "
                   "GPU need grid, dc or brute"));
  }
  const ProcessResult unknown = cli.run({"closest-pair", "--from", "disk"});
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.output, "--from"));
}

TEST_CASE(
    "closest-pair --from and --repeat exclude --mpi and --bench, which choose their own calls") {
  Cli cli;
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--from", "pinned"}, std::vector<std::string>{"--repeat", "2"}}) {
    for (const char* other : {"--mpi", "--bench"}) {
      for (const bool other_first : {false, true}) {
        std::vector<std::string> arguments{"closest-pair"};
        if (other_first) arguments.push_back(other);
        arguments.insert(arguments.end(), options.begin(), options.end());
        if (!other_first) arguments.push_back(other);
        const ProcessResult refused = cli.run(arguments);
        CAPTURE(refused.output);
        CHECK(refused.exit_code == 2);
        CHECK(contains(refused.output, options.front() + " excludes " + other));
      }
    }
  }
}
