// Fatbins (a CUBIN per SM plus PTX, through nvFatbin), NVRTC's precompiled headers, and SASS
// through the toolkit's disassembler; from the library and the CLI. No GPU needed.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/disassembly.hpp"
#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/core/target.hpp"
#include "support/child_process.hpp"

namespace fs = std::filesystem;
using ptxrt::testing::contains;
using ptxrt::testing::mode_of;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path source_dir = PTXRT_SOURCE_DIR;
const fs::path scale_kernel = source_dir / "tests/data/kernels/scale.cu";

ptxrt::CompileOptions target(const std::string& arch, ptxrt::ImageFormat format) {
  ptxrt::CompileOptions options;
  options.target = {arch, format, {}};
  return options;
}

std::vector<std::string> described(const std::vector<ptxrt::FatbinEntry>& entries) {
  std::vector<std::string> text;
  for (const ptxrt::FatbinEntry& entry : entries) text.push_back(entry.describe());
  return text;
}

// The toolkit's cuobjdump listing of `file`, through ptxrt's process launcher; nothing (with a
// message) where the toolkit lacks cuobjdump.
std::optional<std::string> cuobjdump_listing(const fs::path& file) {
  std::optional<fs::path> cuobjdump = ptxrt::apps::find_toolkit_program("cuobjdump");
  if (!cuobjdump) {
    MESSAGE("cuobjdump is not installed: the listing is not checked");
    return std::nullopt;
  }
  ptxrt::detail::ChildProcess child({cuobjdump->string(), "--list-elf", "--list-ptx", file.string()});
  std::string output;
  while (std::optional<std::string> line = child.read_line(std::chrono::minutes(1)))
    output += *line + "\n";
  CHECK(child.terminate() == "exited with code 0");
  return output;
}

// Heavy headers: cooperative groups and a CUB block reduction, as NVRTC's PCH is for.
const char* const block_sum_source = R"(#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
// ptxrt: entry block_sum one block of 128 threads sums 128 floats
extern "C" __global__ void block_sum(const float* in, float* out) {
  using Reduce = cub::BlockReduce<float, 128>;
  __shared__ typename Reduce::TempStorage storage;
  cooperative_groups::thread_block block = cooperative_groups::this_thread_block();
  const float sum = Reduce(storage).Sum(in[block.thread_rank()]);
  if (block.thread_rank() == 0) *out = sum;
}
)";

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a fatbin holds a CUBIN per listed SM and PTX for compute_XY, loadable where one runs") {
  const ptxrt::Image fatbin =
      ptxrt::compile(ptxrt::Program::from_file(scale_kernel),
                     target("sm_80,sm_90,compute_90", ptxrt::ImageFormat::fatbin));
  CHECK(fatbin.format == ptxrt::ImageFormat::fatbin);
  CHECK(fatbin.arch == "sm_80,sm_90,compute_90");
  CHECK(described(ptxrt::read_fatbin(fatbin.data)) ==
        std::vector<std::string>{"sm_80 CUBIN", "sm_90 CUBIN", "compute_90 PTX (ISA 9.0)"});
  ptxrt::check_image_for_driver(fatbin, 13000, 9, 0);
  ptxrt::check_image_for_driver(fatbin, 13000, 8, 6);   // the sm_80 CUBIN
  ptxrt::check_image_for_driver(fatbin, 13000, 12, 0);  // the PTX, JIT-compiled
  ptxrt::testing::check_error([&] { ptxrt::check_image_for_driver(fatbin, 13000, 7, 5); },
                              ptxrt::ErrorKind::invalid_argument,
                              "holds sm_80 CUBIN, sm_90 CUBIN, compute_90 PTX (ISA 9.0), none of "
                              "which can run on a device of compute capability 7.5");
  ptxrt::testing::check_error([&] { ptxrt::check_image_for_driver(fatbin, 12080, 12, 0); },
                              ptxrt::ErrorKind::invalid_argument,
                              "its compute_90 PTX (ISA 9.0) is PTX ISA 9.0, which needs a driver "
                              "for CUDA 13.0 or newer");
}

TEST_CASE(
    "cuobjdump lists both SMs and the PTX of a fatbin, of one file and of two linked with LTO") {
  ScratchDirectory scratch;
  const ptxrt::Program single = ptxrt::Program::from_file(scale_kernel);
  const fs::path link_data = source_dir / "tests/data/link";
  ptxrt::CompileOptions lto = target("sm_80,sm_90,compute_90", ptxrt::ImageFormat::fatbin);
  lto.lto = true;
  const std::vector<std::pair<ptxrt::Image, std::string>> fatbins{
      {ptxrt::compile(single, target("sm_80,sm_90,compute_90", ptxrt::ImageFormat::fatbin)),
       "scale"},
      {ptxrt::compile(
           ptxrt::Program::from_files({link_data / "link_main.cu", link_data / "link_math.cu"}),
           lto),
       "linked"}};
  for (const auto& [fatbin, fatbin_name] : fatbins) {
    const auto& name = fatbin_name;  // clang before 16 captures no binding
    CAPTURE(name);
    const fs::path file = scratch.path() / (name + ".fatbin");
    std::ofstream(file, std::ios::binary) << fatbin.data;
    std::optional<std::string> listing = cuobjdump_listing(file);
    if (!listing) return;
    CHECK(contains(*listing, "sm_80.cubin"));
    CHECK(contains(*listing, "sm_90.cubin"));
    CHECK(contains(*listing, "PTX file"));
  }
}

TEST_CASE("a fatbin entry of an unknown architecture is refused by name") {
  ptxrt::testing::check_error(
      [] {
        ptxrt::compile(ptxrt::Program::from_file(scale_kernel),
                       target("sm_90,lto_90", ptxrt::ImageFormat::fatbin));
      },
      ptxrt::ErrorKind::invalid_argument, "each entry must be sm_XY (a CUBIN) or compute_XY (PTX)");
}

TEST_CASE("precompiled headers leave the compiled kernel as it is and their folder private") {
  if (ptxrt::nvrtc_version() < 12080) {
    MESSAGE("NVRTC " << ptxrt::nvrtc_version() << " has no precompiled headers");
    return;
  }
  ScratchDirectory scratch;
  const ptxrt::Program program = ptxrt::Program::from_string(block_sum_source, "block_sum.cu");
  const ptxrt::CompileOptions plain = target("sm_90", ptxrt::ImageFormat::cubin);
  ptxrt::CompileOptions with_pch = plain;
  with_pch.precompiled_header_directory = scratch.path() / "pch";
  const ptxrt::Image reference = ptxrt::compile(program, plain);
  // Three compiles: the first may only learn the heap size NVRTC needs, the second creates the
  // PCH, the third uses it.
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    const ptxrt::Image image = ptxrt::compile(program, with_pch);
    CHECK(ptxrt::read_cubin_resources(image.data) == ptxrt::read_cubin_resources(reference.data));
    CHECK(image.options == reference.options);
    CHECK(image.key == reference.key);
    CHECK(ptxrt::parse_ptxas_info(image.compile_log) ==
          ptxrt::parse_ptxas_info(reference.compile_log));
  }
  CHECK(mode_of(scratch.path() / "pch") == 0700);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(scratch.path() / "pch")) {
    CHECK(mode_of(entry.path()) == 0600);
    ++files;
  }
  CHECK(files > 0);
}

TEST_CASE("the tiled matmul's SASS holds FFMA, counted per kernel") {
  if (!ptxrt::apps::find_toolkit_program("nvdisasm") &&
      !ptxrt::apps::find_toolkit_program("cuobjdump")) {
    MESSAGE("neither nvdisasm nor cuobjdump is installed");
    return;
  }
  ptxrt::CompileOptions options = target("sm_90", ptxrt::ImageFormat::cubin);
  options.defines = {{"TILE_WIDTH", "16"}};
  const ptxrt::Image cubin = ptxrt::compile(ptxrt::apps::builtin_program("matmul_tiled"), options);
  const std::string sass = ptxrt::apps::disassemble(cubin.data);
  CHECK(contains(sass, "FFMA"));
  const std::vector<ptxrt::apps::KernelInstructions> kernels =
      ptxrt::apps::count_instructions(sass);
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].kernel == "matmul_tiled");
  CHECK(kernels[0].count("FFMA") >= 16);  // one per k of a 16-wide tile, at least
  CHECK(kernels[0].count("LDS") > 0);
  CHECK(kernels[0].count("STS") > 0);
  CHECK(kernels[0].count("BAR") >= 2);  // the two __syncthreads of each tile
  CHECK(kernels[0].total > kernels[0].count("FFMA"));
}

TEST_CASE("instruction counts read both disassemblers' formats and skip never-executed padding") {
  const std::string nvdisasm = R"(	.section	.text.k,"ax",@progbits
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   FFMA R0, R2, R3, R0 ;
        /*0020*/              @!PT LDS RZ, [RZ] ;
        /*0030*/               @P0 BRA `(.L_x_1) ;
        /*0040*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
)";
  const std::string cuobjdump = R"(		Function : k2
        /*0000*/                   ULDC.64 UR4, c[0x0][0x208] ;           /* 0x00008200ff047ab9 */
        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;          /* 0x0000000000007b1d */
        /*0020*/                   STS [R0], R1 ;                          /* 0x0000000100007388 */
)";
  const auto first = ptxrt::apps::count_instructions(nvdisasm);
  REQUIRE(first.size() == 1);
  CHECK(first[0].kernel == "k");
  CHECK(first[0].total == 4);
  CHECK(first[0].count("LDC") == 1);
  CHECK(first[0].count("FFMA") == 1);
  CHECK(first[0].count("LDS") == 0);
  CHECK(first[0].count("BRA") == 1);
  CHECK(first[0].count("LDG") == 1);
  const auto second = ptxrt::apps::count_instructions(cuobjdump);
  REQUIRE(second.size() == 1);
  CHECK(second[0].kernel == "k2");
  CHECK(second[0].count("LDC") == 1);
  CHECK(second[0].count("BAR") == 1);
  CHECK(second[0].count("STS") == 1);
}

TEST_CASE("the CLI compiles two files to a CUBIN, a fatbin and SASS, and reports them") {
  ScratchDirectory scratch;
  const std::string main_file = (source_dir / "tests/data/link/link_main.cu").string();
  const std::string math_file = (source_dir / "tests/data/link/link_math.cu").string();
  const std::vector<std::string> environment{"PTXRT_CACHE_DIR=" +
                                             (scratch.path() / "cache").string()};
  auto cli = [&](std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
    return ptxrt::testing::run_process(arguments, environment);
  };
  const fs::path cubin = scratch.path() / "x.cubin";
  auto result = cli({"compile", main_file, math_file, "--arch", "sm_90", "--emit", "cubin", "-o",
                     cubin.string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(ptxrt::read_cubin_resources(read_bytes(cubin)).at(0).name == "affine_clamp");

  const fs::path fatbin = scratch.path() / "k.fatbin";
  result = cli({"compile", main_file, math_file, "--lto", "--arch", "sm_80,sm_90,compute_90",
                "--emit", "fatbin", "-o", fatbin.string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(described(ptxrt::read_fatbin(read_bytes(fatbin))).size() == 3);

  result = cli({"resources", main_file, math_file, "--arch", "sm_90", "--json"});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const nlohmann::json rows = nlohmann::json::parse(result.output);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["kernel"] == "affine_clamp");
  CHECK(rows[0]["file"] == "link_main.cu");

  const fs::path shipped = scratch.path() / "shipped";
  result = cli({"cache", "warm", "--arch", "sm_80,sm_90", "--kernel", scale_kernel.string(),
                "--fatbin-dir", shipped.string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  std::vector<fs::path> fatbins;
  for (const auto& entry : fs::directory_iterator(shipped)) fatbins.push_back(entry.path());
  REQUIRE(fatbins.size() == 1);
  CHECK(fatbins[0].extension() == ".fatbin");
  CHECK(described(ptxrt::read_fatbin(read_bytes(fatbins[0]))) ==
        std::vector<std::string>{"sm_80 CUBIN", "sm_90 CUBIN"});

  result = cli(
      {"compile", main_file, "--lto", "--arch", "sm_90", "--emit", "cubin", "-o", cubin.string()});
  CHECK(result.exit_code == 1);
  CHECK(contains(result.output, "undefined symbol scale_value(float) (_Z11scale_valuef)"));

  if (!ptxrt::apps::find_toolkit_program("nvdisasm") &&
      !ptxrt::apps::find_toolkit_program("cuobjdump"))
    return;
  result = cli({"compile", "matmul_tiled", "--arch", "sm_90", "--emit", "sass"});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(contains(result.output, "FFMA"));
  result = cli({"resources", "matmul_tiled", "--arch", "sm_90", "--sass", "--json"});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const nlohmann::json counted = nlohmann::json::parse(result.output);
  CHECK(counted[0]["sass"]["FFMA"].get<int>() > 0);
  CHECK(counted[0]["sass"]["instructions"].get<int>() > counted[0]["sass"]["FFMA"].get<int>());
}
